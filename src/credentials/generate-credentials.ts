/**
 * @module generate-credentials
 * Client IDs and client secrets: random, URL-safe, recognisable by prefix, and (secrets) checksummed
 * so secret scanners and this library can tell a real one from a typo without any lookup.
 *
 * Formats (documented in docs/security.md):
 *   client ID   esa_<24 base62>                                  e.g. esa_4fT0...  (~142 bits)
 *   secret      esas_<secret id: 16 base62>_<44 base62><crc32: 6 base62>          (~262 random bits)
 *   regex       \besas_[0-9A-Za-z]{16}_[0-9A-Za-z]{50}\b
 *   key ID      esak_<16 base62>  (public: names a registered public key, like a secret's ID names a secret)
 *   federated   esaf_<16 base62>  (public: names a federated credential, trust in an outside issuer for one subject)
 *
 * Which presented values are worth a store lookup at all is decided where presented credentials are
 * read (client-auth/presented-credentials.ts).
 */
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Prefix of every client ID.
 *
 * @example
 * ```ts
 * import { CLIENT_ID_PREFIX } from 'express-service-accounts'
 *
 * // Tell a service account's ID from your users' IDs without a lookup.
 * const isServiceAccountId = (id: string): boolean => id.startsWith(CLIENT_ID_PREFIX) // 'esa_'
 * ```
 */
export const CLIENT_ID_PREFIX = 'esa_';
/**
 * Prefix of every client secret.
 *
 * @example
 * ```ts
 * import { SECRET_PREFIX } from 'express-service-accounts'
 *
 * // Catch a secret pasted where a client ID belongs, before it reaches a log.
 * function checkClientId(value: string): string {
 *   if (value.startsWith(SECRET_PREFIX)) throw new TypeError('That is a client secret (esas_...), not a client ID')
 *   return value
 * }
 * ```
 */
export const SECRET_PREFIX = 'esas_';
/**
 * Matches a client secret anywhere in text (for secret scanners).
 *
 * @example
 * ```ts
 * import { SECRET_PATTERN } from 'express-service-accounts'
 *
 * // Keep client secrets out of your logs.
 * const redact = (line: string): string => line.replace(new RegExp(SECRET_PATTERN.source, 'g'), '[REDACTED]')
 * ```
 */
export const SECRET_PATTERN = /\besas_[0-9A-Za-z]{16}_[0-9A-Za-z]{50}\b/;

/**
 * Prefix of every key ID: the public ID of a registered public key (a key-pair credential).
 *
 * @example
 * ```ts
 * import { KEY_ID_PREFIX } from 'express-service-accounts'
 *
 * // A token's credential ID names a key or a secret: tell which without a lookup.
 * const credentialKind = (id: string): 'key' | 'secret' => (id.startsWith(KEY_ID_PREFIX) ? 'key' : 'secret')
 * ```
 */
export const KEY_ID_PREFIX = 'esak_';

const KEY_ID_SHAPE = /^esak_[0-9A-Za-z]{16}$/;

/**
 * Prefix of every federated credential ID (`esaf_` and 16 letters or digits).
 *
 * @example
 * ```ts
 * import { FEDERATED_CREDENTIAL_ID_PREFIX } from 'express-service-accounts'
 *
 * // A token's credential ID names a federated credential when it starts so.
 * const federated = (id: string): boolean => id.startsWith(FEDERATED_CREDENTIAL_ID_PREFIX)
 * ```
 */
export const FEDERATED_CREDENTIAL_ID_PREFIX = 'esaf_';

const FEDERATED_CREDENTIAL_ID_SHAPE = /^esaf_[0-9A-Za-z]{16}$/;
const SECRET_SHAPE = /^esas_([0-9A-Za-z]{16})_([0-9A-Za-z]{44})([0-9A-Za-z]{6})$/;
const SECRET_ID_SHAPE = /^[0-9A-Za-z]{16}$/;
const CLIENT_ID_LENGTH = 24;
const CLIENT_ID_SHAPE = new RegExp(`^${CLIENT_ID_PREFIX}[0-9A-Za-z]{${CLIENT_ID_LENGTH}}$`);

/** Uniform random base62 string (rejection sampling: no modulo bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string, length = text.length): number {
  let crc = 0xffffffff;
  for (let i = 0; i < length; i++) crc = (CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Each base62 digit's value, by character code: only for text `SECRET_SHAPE` matched, so every character looked up is a digit of {@link BASE62}. */
const BASE62_VALUE: readonly number[] = Array.from({ length: 128 }, (_, code) => Math.max(0, BASE62.indexOf(String.fromCharCode(code))));

function checksum(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/**
 * A new client ID.
 * @example
 * ```ts
 * generateClientId() // 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k'
 * ```
 */
export function generateClientId(): string {
  return CLIENT_ID_PREFIX + randomBase62(CLIENT_ID_LENGTH);
}

/**
 * A new client secret and its public ID. The value is returned to the caller once and never stored.
 * @example
 * ```ts
 * const { id, value } = generateSecret()
 * ```
 */
export function generateSecret(): { id: string; value: string } {
  const id = randomBase62(16);
  const body = `${SECRET_PREFIX}${id}_${randomBase62(44)}`;
  return { id, value: body + checksum(body) };
}

/**
 * Checks a presented secret's format and checksum. Returns its secret ID, or `undefined` for a value
 * that cannot be one of ours (which is then refused before any store or bcrypt work).
 * @example
 * ```ts
 * parseSecret(value)?.secretId
 * ```
 */
export function parseSecret(value: string): { secretId: string } | undefined {
  const match = SECRET_SHAPE.exec(value);
  if (!match) return undefined;
  // Compared as numbers: six base62 digits hold any CRC-32 in exactly one way, so this is the same
  // test as comparing the checksum text, without building it.
  const body = value.length - 6;
  let presented = 0;
  for (let i = body; i < value.length; i++) presented = presented * 62 + BASE62_VALUE[value.charCodeAt(i)]!;
  if (presented !== crc32(value, body)) return undefined;
  return { secretId: match[1] as string };
}

/**
 * A new key ID, `esak_` and 16 base62 characters.
 * @example
 * ```ts
 * generateKeyId() // 'esak_4fT0bQ2kV1StGXR8'
 * ```
 */
export function generateKeyId(): string {
  return KEY_ID_PREFIX + randomBase62(16);
}

/** Whether a string has the shape of a key ID (for admin input validation). */
export function isKeyId(value: string): boolean {
  return KEY_ID_SHAPE.test(value);
}

/**
 * A new federated credential ID, `esaf_` and 16 base62 characters.
 * @example
 * ```ts
 * generateFederatedCredentialId() // 'esaf_4fT0bQ2kV1StGXR8'
 * ```
 */
export function generateFederatedCredentialId(): string {
  return FEDERATED_CREDENTIAL_ID_PREFIX + randomBase62(16);
}

/** Whether a string has the shape of a federated credential ID (for admin input validation). */
export function isFederatedCredentialId(value: string): boolean {
  return FEDERATED_CREDENTIAL_ID_SHAPE.test(value);
}

/** Whether a string has the shape of a secret ID (for admin input validation). */
export function isSecretId(value: string): boolean {
  return SECRET_ID_SHAPE.test(value);
}

/** Whether a string has the shape of a client ID, `esa_` and 24 base62 characters (for admin input validation). */
export function isClientIdShape(value: string): boolean {
  return CLIENT_ID_SHAPE.test(value);
}
