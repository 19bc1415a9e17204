/**
 * @module ip-address
 * IPv6 addresses read once, for the two places that judge a peer's address: the failure limiter
 * (which counts an IPv4-mapped address as the IPv4 address it maps) and the address policy of
 * outside issuers' documents (which judges every IPv6 address that carries an IPv4 address by the
 * IPv4 address it carries); and a client's address as a proxy may forward it, with a port.
 */
import { isIP, isIPv6 } from 'node:net';

/**
 * The IP address an address names, without the port some proxies add to the X-Forwarded-For entries
 * they write (`203.0.113.7:51234`, `[2001:db8::1]:443`); `undefined` when it names no IP address.
 *
 * @example
 * ```ts
 * ipAddressOf('203.0.113.7:51234') // '203.0.113.7'
 * ipAddressOf('[2001:db8::1]:443') // '2001:db8::1'
 * ipAddressOf('not an address') // undefined
 * ```
 */
export function ipAddressOf(address: string): string | undefined {
  if (isIP(address) !== 0) return address;
  const host = /^\[([^\]]+)\]:\d{1,5}$/.exec(address)?.[1] ?? /^([\d.]+):\d{1,5}$/.exec(address)?.[1];
  return host !== undefined && isIP(host) !== 0 ? host : undefined;
}

/**
 * The eight 16-bit groups of an IPv6 address in any valid notation (`::`, mixed `::ffff:1.2.3.4`),
 * without a zone ID; undefined when it is not an IPv6 address.
 *
 * @example
 * ```ts
 * ipv6Hextets('2001:db8::1')      // [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]
 * ipv6Hextets('::ffff:192.0.2.1') // [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x201]
 * ```
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
 * Two 16-bit groups as a dotted IPv4 address.
 *
 * @example
 * ```ts
 * dottedIPv4(0xc000, 0x201) // '192.0.2.1'
 * ```
 */
export function dottedIPv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * Whether the groups are an IPv4-mapped address, `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2): what a
 * dual-stack socket reports for an IPv4 peer.
 */
export function isIPv4Mapped(hextets: readonly number[]): boolean {
  return hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff;
}

/**
 * The IPv4 address an IPv6 address carries and is delivered to, if it is one that does:
 * IPv4-mapped `::ffff:0:0/96` (RFC 4291 §2.5.5.2), IPv4-translated `::ffff:0:0:0/96` (RFC 2765),
 * NAT64's well-known prefix `64:ff9b::/96` (RFC 6052) and 6to4 `2002::/16` (RFC 3056, the IPv4
 * address in bits 16 to 47). Undefined for any other address. A zone ID (`%eth0`) is ignored.
 *
 * @example
 * ```ts
 * embeddedIPv4('::ffff:169.254.169.254') // '169.254.169.254'
 * embeddedIPv4('64:ff9b::a9fe:a9fe')     // '169.254.169.254'
 * embeddedIPv4('2002:a9fe:a9fe::1')      // '169.254.169.254'
 * embeddedIPv4('2606:4700::1111')        // undefined
 * ```
 */
export function embeddedIPv4(address: string): string | undefined {
  const zone = address.indexOf('%');
  const h = ipv6Hextets(zone === -1 ? address : address.slice(0, zone));
  if (h === undefined) return undefined;
  if (isIPv4Mapped(h)) return dottedIPv4(h[6]!, h[7]!);
  const zeroTo = (end: number, from = 0): boolean => h.slice(from, end).every((group) => group === 0);
  if (zeroTo(4) && h[4] === 0xffff && h[5] === 0) return dottedIPv4(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && zeroTo(6, 2)) return dottedIPv4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return dottedIPv4(h[1]!, h[2]!);
  return undefined;
}
