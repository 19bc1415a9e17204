/**
 * @module address-policy
 * What an outside issuer's URLs may be, and where fetching them may reach.
 *
 * URLs: an issuer identifier or a JWK Set URL is an absolute https URL of printable ASCII (http only
 * on a loopback host), without credentials or fragment, within {@link FEDERATED_LIMITS}
 * ({@link federatedUrlProblem}: checked on the options, on the admin API's input, and, as cheap text,
 * on every federated token request). An issuer identifier has no query (OpenID Connect Discovery 1.0
 * §3); a JWK Set URL, configured or discovered, and a redirect's target may have one (Azure AD B2C's
 * names its policy in `?p=`): it adds nothing a path could not ask of a server. A document is fetched
 * only under that rule, and plain http only with `federation.allowHttpLoopback`
 * ({@link fetchPolicyProblem}).
 *
 * Addresses: which network addresses the server may connect to when it fetches an outside issuer's documents,
 * checked on the address actually connected to: a host name is resolved once, by a `lookup` of our
 * own, and the socket connects to exactly the addresses checked, so a DNS answer cannot change
 * between the check and the connection (DNS rebinding). A literal IP address is checked before any
 * connection, and the socket's remote address again once connected.
 *
 * Refused by default: loopback (only with `federation.allowHttpLoopback`), private networks (only
 * with `federation.allowPrivateNetworks`), and, always, link-local addresses (cloud metadata
 * services live at 169.254.169.254), "this network", multicast, broadcast, documentation and
 * reserved ranges, and Teredo tunnels. An IPv6 address that carries an IPv4 address it is delivered
 * to (IPv4-mapped `::ffff:10.0.0.1`, IPv4-translated, NAT64 `64:ff9b::10.0.0.1`, 6to4 `2002:a00:1::`)
 * is judged by that IPv4 address.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { embeddedIPv4 } from '../ip-address.js';

/** Where a fetch may connect besides the public internet. */
export interface AddressReach {
  /** Loopback (127.0.0.0/8, ::1): `federation.allowHttpLoopback`. */
  readonly allowLoopback: boolean;
  /** Private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): `federation.allowPrivateNetworks`. */
  readonly allowPrivateNetworks: boolean;
}

/** The code of the error a refused address fails with (`err.code`), like a system error's. */
export const REFUSED_ADDRESS_CODE = 'EADDRNOTALLOWED';

function blockList(v4: readonly (readonly [string, number])[], v6: readonly (readonly [string, number])[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of v4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

const LOOPBACK = blockList([['127.0.0.0', 8]], [['::1', 128]]);
const PRIVATE = blockList(
  [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]],
  // Unique-local, the deprecated site-local, and NAT64's local-use prefix (RFC 8215).
  [['fc00::', 7], ['fec0::', 10], ['64:ff9b:1::', 48]],
);
const NEVER = blockList(
  [
    ['0.0.0.0', 8], // "this network" (0.0.0.0 reaches the host itself)
    ['169.254.0.0', 16], // link-local: cloud metadata services
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24], // documentation
    ['198.18.0.0', 15], // benchmarking
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, and the broadcast address 255.255.255.255
  ],
  [
    ['::', 128], // unspecified
    ['::', 96], // IPv4-compatible (deprecated)
    ['fe80::', 10], // link-local
    ['ff00::', 8], // multicast
    ['100::', 64], // discard
    ['2001:db8::', 32], // documentation
    ['2001::', 32], // Teredo tunnels (their IPv4 end is not checkable here)
    ['2001:2::', 48], // benchmarking
  ],
);

/**
 * Why the server may not connect to `address` under `reach`, or `undefined` when it may. `address`
 * is an IP address (IPv4 or IPv6, without brackets); anything else is refused.
 *
 * @example
 * ```ts
 * const reach = { allowLoopback: false, allowPrivateNetworks: false }
 * addressProblem('169.254.169.254', reach) // 'is a link-local or reserved address'
 * addressProblem('10.1.2.3', { ...reach, allowPrivateNetworks: true }) // undefined
 * addressProblem('140.82.112.22', reach) // undefined
 * ```
 */
export function addressProblem(address: string, reach: AddressReach): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const embedded = family === 6 ? embeddedIPv4(address) : undefined;
  if (embedded !== undefined) return addressProblem(embedded, reach);
  // Loopback first: ::1 lies within the reserved IPv4-compatible range ::/96.
  if (LOOPBACK.check(address, type)) return reach.allowLoopback ? undefined : 'is a loopback address (allowed only with federation.allowHttpLoopback)';
  if (NEVER.check(address, type)) return 'is a link-local or reserved address';
  if (PRIVATE.check(address, type)) return reach.allowPrivateNetworks ? undefined : 'is a private network address (allowed only with federation.allowPrivateNetworks)';
  return undefined;
}

/** The error of a refused address: failed like a connection, with a system-error-like `code`. */
export function refusedAddressError(address: string, problem: string): Error {
  return Object.assign(new Error(`${address} ${problem}`), { code: REFUSED_ADDRESS_CODE });
}

/**
 * A `lookup` for node:http and node:https requests: resolves the host name with `dns.lookup` (every
 * address), and fails, before any connection, when any address it resolves to is refused under
 * `reach`; otherwise hands the socket exactly the addresses it checked.
 *
 * @example
 * ```ts
 * import { request } from 'node:https'
 *
 * request('https://issuer.example.com/jwks', { lookup: checkedLookup({ allowLoopback: false, allowPrivateNetworks: false }) })
 * ```
 */
export function checkedLookup(reach: AddressReach): LookupFunction {
  return (hostname, options, callback) => {
    const { family, hints } = options as LookupOptions;
    dnsLookup(hostname, { ...(family !== undefined && { family }), ...(hints !== undefined && { hints }), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      // Refused when any answer is: a name that resolves to a private address is not fetched at all.
      for (const { address } of addresses) {
        const problem = addressProblem(address, reach);
        if (problem !== undefined) {
          callback(refusedAddressError(address, problem) as NodeJS.ErrnoException, '', 0);
          return;
        }
      }
      const first = addresses[0];
      if (first === undefined) callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      else if ((options as LookupOptions).all === true) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** Whether a URL names a loopback host. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The longest values of a federated credential: an issuer URL and a JWK Set URL in characters (printable
 * ASCII only), a subject and an audience in bytes of UTF-8. They keep the store's index entries small
 * (PostgreSQL refuses an index entry over 2704 bytes); real ones are a few dozen characters.
 *
 * @example
 * ```ts
 * const fits = Buffer.byteLength('system:serviceaccount:payments:exporter') <= FEDERATED_LIMITS.subjectBytes
 * ```
 */
export const FEDERATED_LIMITS = Object.freeze({ issuer: 600, jwksUri: 2048, subjectBytes: 1000, audienceBytes: 600 });

/** Printable ASCII without spaces: what an issuer identifier or key URL may hold, so what is shown is what is compared. */
const URL_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * Whether `value` has the text a federated URL may have (at most `maxLength` printable ASCII
 * characters without spaces), before any URL parsing: cheap enough for every token request.
 *
 * @example
 * ```ts
 * isFederatedUrlText('https://token.actions.githubusercontent.com', FEDERATED_LIMITS.issuer) // true
 * isFederatedUrlText(' https://issuer.example', FEDERATED_LIMITS.issuer) // false
 * ```
 */
export function isFederatedUrlText(value: string, maxLength: number): boolean {
  return value.length <= maxLength && URL_CHARACTERS.test(value);
}

/**
 * Whether `value` may name an outside issuer or a key URL: an absolute https URL of printable ASCII
 * without spaces, credentials, query (unless `allowQuery`) or fragment, or an http one on a loopback
 * host (fetched only with `allowHttpLoopback`); at most `maxLength` characters.
 *
 * @example
 * ```ts
 * federatedUrlProblem('https://token.actions.githubusercontent.com') // undefined: fine
 * federatedUrlProblem('http://example.com') // 'must be an https URL (http only on a loopback host)'
 * federatedUrlProblem('https://idp.example.com/keys?p=signin', FEDERATED_LIMITS.jwksUri, true) // undefined: fine
 * ```
 */
export function federatedUrlProblem(value: unknown, maxLength: number = FEDERATED_LIMITS.issuer, allowQuery = false): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) return `must be a URL of at most ${maxLength} characters`;
  if (!isFederatedUrlText(value, maxLength)) return 'must be printable ASCII, without spaces (encode other characters, and use the punycode form of a host name)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) return 'must be an https URL (http only on a loopback host)';
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  if (url.hash !== '' || value.includes('#')) return allowQuery ? 'must have no fragment' : 'must have no query or fragment';
  if (!allowQuery && (url.search !== '' || value.includes('?'))) return 'must have no query or fragment';
  return undefined;
}

/**
 * Why `url` may not be fetched under these settings, or `undefined` when it may: the policy of
 * federated URLs, a query allowed (OpenID Connect Discovery 1.0 §3 refuses one in the issuer
 * identifier only; a `jwks_uri` or a redirect's target may have one), plus plain http only with
 * `allowHttpLoopback`.
 *
 * @example
 * ```ts
 * fetchPolicyProblem('http://127.0.0.1:8080/jwks', false) // 'is plain http, allowed on a loopback host only with federation.allowHttpLoopback'
 * fetchPolicyProblem('https://issuer.example.com/jwks', false) // undefined
 * fetchPolicyProblem('https://tenant.b2clogin.com/tenant.onmicrosoft.com/discovery/v2.0/keys?p=B2C_1_signin', false) // undefined
 * ```
 */
export function fetchPolicyProblem(url: string, allowHttpLoopback: boolean): string | undefined {
  // Any document URL may be as long as a JWK Set URL (an issuer's own discovery URL is shorter).
  const problem = federatedUrlProblem(url, FEDERATED_LIMITS.jwksUri, true);
  if (problem !== undefined) return problem;
  if (!allowHttpLoopback && url.toLowerCase().startsWith('http:')) return 'is plain http, allowed on a loopback host only with federation.allowHttpLoopback';
  return undefined;
}

