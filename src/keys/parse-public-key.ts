/**
 * @module parse-public-key
 * Reads a public key an operator registers as a credential (PEM or JWK), checks that it is one this
 * library accepts, and returns it as a public JWK with its RFC 7638 thumbprint. Framework-free.
 *
 * Accepted: EC P-256, RSA of 2048 to 16384 bits, Ed25519; as PEM (`PUBLIC KEY`, `RSA PUBLIC KEY`, or
 * a `CERTIFICATE`, whose public key is used), as a JWK (RFC 7517 §4), or as a JWK Set holding one key.
 * Refused, with a fixed message that never repeats the input: a private key (it must stay with the
 * client), a symmetric key, other curves and sizes, anything unreadable.
 */
import { createPublicKey, X509Certificate, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import type { PublicKeyJwk } from '../store/key-records.js';
import { jwkThumbprint } from './jwk-thumbprint.js';

/**
 * A public key that may be registered: its public JWK and RFC 7638 SHA-256 thumbprint.
 *
 * @example
 * ```ts
 * declare const pem: string // '-----BEGIN PUBLIC KEY-----...'
 * const parsed = await parsePublicKey(pem)
 * if ('refused' in parsed) throw new Error(parsed.refused)
 * console.log(parsed.thumbprint, parsed.publicKey.kty)
 * ```
 */
export interface ParsedPublicKey {
  readonly publicKey: PublicKeyJwk;
  readonly thumbprint: string;
}

/**
 * Why a public key was refused: a sentence for the operator that never repeats the input.
 *
 * @example
 * ```ts
 * declare const text: string // what the operator pasted
 * const result = await parsePublicKey(text)
 * if ('refused' in result) console.error(result.refused)
 * ```
 */
export interface RefusedPublicKey {
  readonly refused: string;
}

/** Larger input is no single public key (a certificate chain of a few certificates is far smaller). */
const MAX_INPUT_CHARS = 64 * 1024;
const MIN_RSA_BITS = 2048;
/** Verifying with a larger RSA key costs more than any client needs. */
const MAX_RSA_BITS = 16384;
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'] as const;

/**
 * Every reason a public key is refused: fixed sentences, so none can repeat any of the input.
 *
 * @example
 * ```ts
 * const result = await parsePublicKey({ kty: 'oct', k: 'c2VjcmV0' })
 * if ('refused' in result) console.log(result.refused === PUBLIC_KEY_REFUSALS.symmetric) // true
 * ```
 */
export const PUBLIC_KEY_REFUSALS = {
  private:
    'that is a private key: keep it with the client and register only its public half ' +
    '(openssl pkey -in private.pem -pubout -out public.pem); it was not stored',
  symmetric: 'a symmetric key (JWK "kty": "oct") is a shared secret, not a public key; it was not stored',
  unreadable:
    'expected a public key as PEM (-----BEGIN PUBLIC KEY-----, RSA PUBLIC KEY or CERTIFICATE) or as a JWK (JSON with "kty")',
  tooLarge: `a public key is at most ${MAX_INPUT_CHARS / 1024} KiB of text`,
  ssh: 'an OpenSSH public key is not accepted: convert it to PEM first (ssh-keygen -e -m PKCS8 -f key.pub)',
  manyBlocks: 'give one public key: the PEM text holds several blocks that are not one certificate chain',
  jwks: 'give one public key: the JWK Set must hold exactly one key',
  notForSigning: 'the JWK is marked for another use than signature verification ("use" or "key_ops")',
  curve: 'only the EC curve P-256 is accepted (ES256)',
  rsaSize: `an RSA key must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits`,
  rsaExponent: 'the RSA public exponent must be an odd number from 3 to 2^32 - 1 (usually 65537)',
  type: 'only EC P-256, RSA (2048 bits or more) and Ed25519 public keys are accepted',
  rsaPss:
    'an RSA-PSS key (id-RSASSA-PSS, as openssl genpkey -algorithm RSA-PSS makes) is not accepted: ' +
    'generate a plain RSA key (openssl genpkey -algorithm RSA), which signs PS256 as well',
} as const;

/**
 * Reads a public key given as text (PEM, or JSON of a JWK or a one-key JWK Set) or as a parsed JWK
 * or JWK Set object. Resolves to the key as a public JWK with its thumbprint, or to the reason it is
 * refused. Never throws for bad input, and never keeps or repeats a private key given by mistake.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 *
 * const result = await parsePublicKey(readFileSync('public.pem', 'utf8'))
 * if ('refused' in result) throw new AdminError('invalid_input', `publicKey: ${result.refused}`)
 * ```
 */
export async function parsePublicKey(input: unknown): Promise<ParsedPublicKey | RefusedPublicKey> {
  const read = typeof input === 'string' ? readText(input) : readJwkOrSet(input);
  if ('refused' in read) return read;
  const { key } = read;
  if (key.type !== 'public') return { refused: PUBLIC_KEY_REFUSALS.private };
  const problem = checkKeyType(key);
  if (problem !== undefined) return { refused: problem };
  const publicKey = toPublicJwk(key.export({ format: 'jwk' }));
  if (publicKey === undefined) return { refused: PUBLIC_KEY_REFUSALS.type };
  return { publicKey, thumbprint: jwkThumbprint(publicKey) };
}

type Read = { readonly key: KeyObject } | RefusedPublicKey;

function readText(input: string): Read {
  if (input.length > MAX_INPUT_CHARS) return { refused: PUBLIC_KEY_REFUSALS.tooLarge };
  const text = input.trim();
  if (text.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { refused: PUBLIC_KEY_REFUSALS.unreadable };
    }
    return readJwkOrSet(json);
  }
  return readPem(text);
}

function readPem(text: string): Read {
  const labels = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)].map((match) => match[1] as string);
  // Checked first and on its own: a private key must never reach a parser that derives its public half.
  if (labels.some((label) => label.includes('PRIVATE KEY'))) return { refused: PUBLIC_KEY_REFUSALS.private };
  if (/^(ssh|ecdsa-sha2)-[\w-]+ /.test(text)) return { refused: PUBLIC_KEY_REFUSALS.ssh };
  if (labels.length === 0) return { refused: PUBLIC_KEY_REFUSALS.unreadable };
  const [first] = labels;
  // A certificate chain (leaf first, as TLS tools write it) gives the leaf's key.
  if (labels.length > 1 && !labels.every((label) => label === 'CERTIFICATE')) return { refused: PUBLIC_KEY_REFUSALS.manyBlocks };
  try {
    if (first === 'CERTIFICATE') {
      const end = text.indexOf('-----END CERTIFICATE-----');
      return { key: new X509Certificate(text.slice(0, end + '-----END CERTIFICATE-----'.length)).publicKey };
    }
    if (first === 'PUBLIC KEY') return { key: createPublicKey({ key: text, format: 'pem', type: 'spki' }) };
    if (first === 'RSA PUBLIC KEY') return { key: createPublicKey({ key: text, format: 'pem', type: 'pkcs1' }) };
  } catch {
    return { refused: PUBLIC_KEY_REFUSALS.unreadable };
  }
  return { refused: PUBLIC_KEY_REFUSALS.unreadable };
}

function readJwkOrSet(input: unknown): Read {
  if (!isObject(input)) return { refused: PUBLIC_KEY_REFUSALS.unreadable };
  if ('keys' in input) {
    const keys = input.keys;
    if (!Array.isArray(keys) || keys.length !== 1) return { refused: PUBLIC_KEY_REFUSALS.jwks };
    return readJwk(keys[0]);
  }
  return readJwk(input);
}

function readJwk(jwk: unknown): Read {
  if (!isObject(jwk) || typeof jwk.kty !== 'string') return { refused: PUBLIC_KEY_REFUSALS.unreadable };
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) return { refused: PUBLIC_KEY_REFUSALS.private };
  if (jwk.kty === 'oct' || 'k' in jwk) return { refused: PUBLIC_KEY_REFUSALS.symmetric };
  if (jwk.use !== undefined && jwk.use !== 'sig') return { refused: PUBLIC_KEY_REFUSALS.notForSigning };
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) {
    return { refused: PUBLIC_KEY_REFUSALS.notForSigning };
  }
  // Only the members that make the key: `alg`, `kid`, `x5c` and the like are not kept.
  const members: NodeJwk = {};
  for (const name of ['kty', 'crv', 'x', 'y', 'n', 'e'] as const) {
    const value = jwk[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') return { refused: PUBLIC_KEY_REFUSALS.unreadable };
    members[name] = value;
  }
  try {
    return { key: createPublicKey({ key: members, format: 'jwk' }) };
  } catch {
    return { refused: PUBLIC_KEY_REFUSALS.unreadable };
  }
}

/**
 * What is wrong with an RSA public key for signature checks, or `undefined` when nothing is (or the
 * key is no RSA key): `'size'`
 * when its modulus has fewer than 2048 or more than `maxBits` bits, `'exponent'` when its public
 * exponent is not an odd number from 3 to 2^32 - 1 (65537 in practice). A verify costs about the square
 * of the modulus, and one modular exponentiation by the exponent: an exponent as long as the modulus
 * (which a JWK may carry) makes each check over a hundred times dearer. RSA keys registered through the
 * admin API, sent in a DPoP proof or published by an outside issuer are all held to this rule, before
 * any signature is checked with them.
 *
 * @example
 * ```ts
 * import { generateKeyPairSync } from 'node:crypto'
 *
 * const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
 * rsaKeyProblem(publicKey) // undefined: 2048 bits, exponent 65537
 * rsaKeyProblem(publicKey, 1024) // 'size'
 * ```
 */
export function rsaKeyProblem(key: KeyObject, maxBits: number = MAX_RSA_BITS): 'size' | 'exponent' | undefined {
  if (key.asymmetricKeyType !== 'rsa') return undefined;
  const details = key.asymmetricKeyDetails ?? {};
  const bits = details.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS || bits > maxBits) return 'size';
  const exponent = details.publicExponent;
  const usual = exponent !== undefined && exponent >= 3n && exponent < 2n ** 32n && exponent % 2n === 1n;
  return usual ? undefined : 'exponent';
}

function checkKeyType(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'ec':
      return details.namedCurve === 'prime256v1' ? undefined : PUBLIC_KEY_REFUSALS.curve;
    case 'rsa': {
      const problem = rsaKeyProblem(key);
      return problem === undefined ? undefined : problem === 'size' ? PUBLIC_KEY_REFUSALS.rsaSize : PUBLIC_KEY_REFUSALS.rsaExponent;
    }
    case 'ed25519':
      return undefined;
    // RFC 4055: its key restricts it to PSS; this server verifies RSA keys with RS* and PS* alike.
    case 'rsa-pss':
      return PUBLIC_KEY_REFUSALS.rsaPss;
    default:
      return PUBLIC_KEY_REFUSALS.type;
  }
}

function toPublicJwk(jwk: NodeJwk): PublicKeyJwk | undefined {
  const { kty, crv, x, y, n, e } = jwk;
  if (kty === 'EC' && crv === 'P-256' && x && y) return { kty, crv, x, y };
  if (kty === 'RSA' && n && e) return { kty, n, e };
  if (kty === 'OKP' && crv === 'Ed25519' && x) return { kty, crv, x };
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
