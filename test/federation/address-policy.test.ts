/**
 * Which addresses the server may connect to when it fetches an outside issuer's documents
 * (src/federation/address-policy.ts). The rule (docs/security.md, "Fetching outside issuers'
 * documents"): no loopback address without `federation.allowHttpLoopback`, no private network
 * address without `federation.allowPrivateNetworks`, never a link-local or reserved one, judged on
 * the address connected to; IPv6 addresses that carry an IPv4 address (IPv4-mapped, IPv4-translated,
 * NAT64, 6to4) by the IPv4 address they carry, and never through a Teredo tunnel.
 */
import { describe, expect, it } from 'vitest';
import { addressProblem, checkedLookup } from '../../src/federation/address-policy.js';
import { resolveFederation } from '../../src/federation/federation-options.js';

const closed = { allowLoopback: false, allowPrivateNetworks: false };
const loopbackOnly = { allowLoopback: true, allowPrivateNetworks: false };
const privateOnly = { allowLoopback: false, allowPrivateNetworks: true };
const open = { allowLoopback: true, allowPrivateNetworks: true };

describe('addressProblem', () => {
  // RFC 6890 special-purpose address registries: loopback 127.0.0.0/8 and ::1.
  it.each(['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '::ffff:0:7f00:1', '2002:7f00:1::1'])('refuses the loopback address %s unless loopback is allowed', (address) => {
    expect(addressProblem(address, closed)).toMatch(/loopback address/);
    expect(addressProblem(address, privateOnly)).toMatch(/loopback address/);
    expect(addressProblem(address, loopbackOnly)).toBeUndefined();
  });

  // RFC 1918 private networks, RFC 6598 shared address space, RFC 4193 unique-local addresses.
  it.each(['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', 'fd12:3456::1', 'fc00::1', '::ffff:10.1.2.3', '64:ff9b::a01:203', '::ffff:0:a01:203', '2002:a01:203::1'])(
    'refuses the private network address %s unless private networks are allowed',
    (address) => {
      expect(addressProblem(address, closed)).toMatch(/private network address/);
      expect(addressProblem(address, loopbackOnly)).toMatch(/private network address/);
      expect(addressProblem(address, privateOnly)).toBeUndefined();
    },
  );

  // Link-local (RFC 3927, RFC 4291: cloud metadata services at 169.254.169.254), "this network",
  // multicast, broadcast, documentation and reserved ranges: never, whatever is allowed.
  it.each(['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1', '192.0.2.1', '198.18.0.1', '::', '::a01:203', 'ff02::1', '2001:db8::1', '64:ff9b::a9fe:a9fe', '0064:ff9b:0:0:0:0:a9fe:a9fe', '64:FF9B:0::A9FE:A9FE', '::ffff:0:a9fe:a9fe', '::ffff:0:169.254.169.254', '2002:a9fe:a9fe::1', '2002:a9fe:a9fe:1:2:3:4:5', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', '2002:a9fe:a9fe::1%1', '::ffff:0:a9fe:a9fe%eth0', '64:ff9b::a9fe:a9fe%1'])(
    'refuses the link-local or reserved address %s, whatever is allowed',
    (address) => {
      expect(addressProblem(address, open)).toMatch(/link-local or reserved/);
    },
  );

  it.each(['140.82.112.22', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '::ffff:0:808:808', '2002:808:808::1'])('allows the public address %s', (address) => {
    expect(addressProblem(address, closed)).toBeUndefined();
  });

  it('refuses anything that is not an IP address', () => {
    expect(addressProblem('localhost', open)).toMatch(/not an IP address/);
    expect(addressProblem('', open)).toMatch(/not an IP address/);
  });
});

describe('checkedLookup', () => {
  // The host name is resolved once and refused when it resolves to a refused address: `localhost`
  // resolves to loopback.
  it('fails to resolve a name that resolves to a refused address, and resolves it when allowed', async () => {
    const resolve = (reach: typeof closed, all: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; result: unknown }>((done) => {
        checkedLookup(reach)('localhost', { all }, (error, result) => done({ error, result }));
      });
    const refused = await resolve(closed, true);
    expect(refused.error?.code).toBe('EADDRNOTALLOWED');
    expect(refused.error?.message).toMatch(/is a loopback address/);
    const allowed = await resolve(loopbackOnly, true);
    expect(allowed.error).toBeNull();
    expect(allowed.result).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })]));
    const one = await resolve(loopbackOnly, false);
    expect(one.error).toBeNull();
    expect(one.result).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});

describe('federation.allowPrivateNetworks', () => {
  // docs/configuration.md: "allowPrivateNetworks | false"; options are validated once, at start-up.
  it('is off by default, and must be a boolean', () => {
    expect(resolveFederation({}).allowPrivateNetworks).toBe(false);
    expect(resolveFederation({ allowPrivateNetworks: true }).allowPrivateNetworks).toBe(true);
    expect(() => resolveFederation({ allowPrivateNetworks: 'yes' })).toThrow(TypeError);
    expect(() => resolveFederation({ allowPrivateNetworks: 'yes' })).toThrow(/federation\.allowPrivateNetworks/);
  });
});
