/**
 * @module limiter-address
 * The form of a client address the failure limiter counts under. One host usually holds a whole IPv6
 * /64 (RFC 4291 §2.5.4; RFC 6177 lets a site get a /48 or /56), so counting per full IPv6 address
 * would give it 2^64 budgets: IPv6 addresses are counted per prefix (`failureLimit.ipv6Prefix`,
 * default 64). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2, what a dual-stack
 * socket reports for an IPv4 peer) is the IPv4 address it maps, so both spellings share one count.
 */
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The eight 16-bit groups of an IPv6 address in any valid notation (`::`, mixed `::ffff:1.2.3.4`),
 * without a zone ID; undefined when it is not an IPv6 address.
 */
export function ipv6Hextets(address: string): number[] | undefined {
  if (!isIPv6(address) || address.includes('%')) return undefined;
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Mixed notation: the last 32 bits written as dotted IPv4.
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The limiter's key for a client address: an IPv4 address as it is; an IPv4-mapped IPv6 address as its
 * IPv4 address; any other IPv6 address (zone ID dropped) as its first `ipv6Prefix` bits, written
 * `2001:db8:0:0:0:0:0:0/64`; anything else (not an IP address) unchanged.
 *
 * @example
 * ```ts
 * limiterAddress('::ffff:127.0.0.1', 64)        // '127.0.0.1'
 * limiterAddress('2001:db8::1', 64)             // '2001:db8:0:0:0:0:0:0/64'
 * limiterAddress('2001:db8::2:3:4:5', 64)       // the same /64: '2001:db8:0:0:0:0:0:0/64'
 * ```
 */
export function limiterAddress(address: string, ipv6Prefix: number): string {
  if (isIPv4(address)) return address;
  const zone = address.indexOf('%');
  const hextets = ipv6Hextets(zone === -1 ? address : address.slice(0, zone));
  if (!hextets) return address;
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    return [hextets[6]! >> 8, hextets[6]! & 0xff, hextets[7]! >> 8, hextets[7]! & 0xff].join('.');
  }
  const masked = hextets.map((h, i) => {
    const bits = Math.min(16, Math.max(0, ipv6Prefix - i * 16));
    return h & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${masked.map((h) => h.toString(16)).join(':')}/${ipv6Prefix}`;
}
