/**
 * The address the failure limiter counts under (docs/security.md, "Which address is counted"):
 * IPv4-mapped IPv6 addresses count as their IPv4 address, and other IPv6 addresses per
 * `failureLimit.ipv6Prefix` bits (default 64), since one host usually holds a whole /64 (RFC 4291 §2.5.4).
 */
import { describe, expect, it } from 'vitest';
import { limiterAddress } from '../../src/client-auth/failure-limiter.js';
import { ipv6Hextets } from '../../src/ip-address.js';

describe('ipv6Hextets', () => {
  it.each([
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['1::', [1, 0, 0, 0, 0, 0, 0, 0]],
    ['2001:db8::8a2e:370:7334', [0x2001, 0xdb8, 0, 0, 0, 0x8a2e, 0x370, 0x7334]],
    ['2001:DB8:0:0:1:2:3:4', [0x2001, 0xdb8, 0, 0, 1, 2, 3, 4]],
    ['::ffff:192.0.2.1', [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201]],
    ['64:ff9b::10.0.0.1', [0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 0x0001]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
  ])('expands %s to eight groups', (address, groups) => {
    expect(ipv6Hextets(address)).toEqual(groups);
  });

  it.each(['127.0.0.1', 'not an address', '1:2:3', '::ffff:300.0.0.1', 'fe80::1%eth0', ''])('refuses %j', (address) => {
    expect(ipv6Hextets(address)).toBeUndefined();
  });
});

describe('limiterAddress', () => {
  it('keeps IPv4 addresses as they are', () => {
    expect(limiterAddress('203.0.113.7', 64)).toBe('203.0.113.7');
  });

  // Some proxies (Azure App Service) write the client's port into X-Forwarded-For: every connection of
  // one client would otherwise be a new address, and the per-address limit would never be reached.
  it('counts an address with a port a proxy added as the address', () => {
    expect(limiterAddress('203.0.113.7:51234', 64)).toBe('203.0.113.7');
    expect(limiterAddress('[2001:db8:1:2::1]:443', 64)).toBe('2001:db8:1:2:0:0:0:0/64');
    expect(limiterAddress('[::ffff:127.0.0.1]:8080', 64)).toBe('127.0.0.1');
    expect(limiterAddress('not an address:80', 64)).toBe('not an address:80');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address, in either notation', () => {
    expect(limiterAddress('::ffff:127.0.0.1', 64)).toBe('127.0.0.1');
    expect(limiterAddress('::FFFF:7f00:1', 64)).toBe('127.0.0.1');
    expect(limiterAddress('0:0:0:0:0:ffff:c000:0201', 128)).toBe('192.0.2.1');
  });

  it('does not take other embedded IPv4 forms for IPv4 (NAT64, IPv4-compatible)', () => {
    expect(limiterAddress('64:ff9b::10.0.0.1', 128)).toBe('64:ff9b:0:0:0:0:a00:1/128');
    expect(limiterAddress('::10.0.0.1', 128)).toBe('0:0:0:0:0:0:a00:1/128');
  });

  it('counts IPv6 addresses of one /64 under one key, and other /64s apart', () => {
    const a = limiterAddress('2001:db8:1:2::1', 64);
    expect(a).toBe('2001:db8:1:2:0:0:0:0/64');
    expect(limiterAddress('2001:db8:1:2:ffff:ffff:ffff:ffff', 64)).toBe(a);
    expect(limiterAddress('2001:0db8:0001:0002:0:0:0:99', 64)).toBe(a);
    expect(limiterAddress('2001:db8:1:3::1', 64)).not.toBe(a);
  });

  it('masks to any prefix length, including inside a group', () => {
    expect(limiterAddress('2001:db8:abcd:ef12::1', 56)).toBe('2001:db8:abcd:ef00:0:0:0:0/56');
    expect(limiterAddress('2001:db8:abcd:ef12::1', 48)).toBe('2001:db8:abcd:0:0:0:0:0/48');
    expect(limiterAddress('ffff::', 1)).toBe('8000:0:0:0:0:0:0:0/1');
    expect(limiterAddress('2001:db8::1', 128)).toBe('2001:db8:0:0:0:0:0:1/128');
    expect(limiterAddress('2001:db8::2', 128)).not.toBe(limiterAddress('2001:db8::1', 128));
  });

  it('handles the unspecified address and drops zone IDs', () => {
    expect(limiterAddress('::', 64)).toBe('0:0:0:0:0:0:0:0/64');
    expect(limiterAddress('fe80::1%eth0', 64)).toBe('fe80:0:0:0:0:0:0:0/64');
    expect(limiterAddress('fe80::2%25', 64)).toBe(limiterAddress('fe80::1', 64));
    expect(limiterAddress('::ffff:10.1.2.3%lo', 64)).toBe('10.1.2.3');
  });

  it('leaves anything that is not an IP address unchanged', () => {
    expect(limiterAddress('unknown', 64)).toBe('unknown');
    expect(limiterAddress('1:2:3', 64)).toBe('1:2:3');
  });
});
