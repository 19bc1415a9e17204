/**
 * @module key-set
 * One outside issuer's JWK Set (RFC 7517 §5), fetched or configured inline: at most
 * `MAX_KEYS_PER_SET` keys, each a candidate only for the algorithms its type, curve, `alg`, `use` and
 * `key_ops` allow (the rules of jose's local key sets), and imported once. Which candidates are tried
 * on a token is candidate-keys.ts's rule.
 */
import { createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { MAX_KEYS_PER_SET } from '../keys/candidate-keys.js';

/** One key of a JWK Set, as published: only the members read here are typed. */
export interface SetKey {
  readonly kty?: unknown;
  readonly kid?: unknown;
  readonly alg?: unknown;
  readonly use?: unknown;
  readonly key_ops?: unknown;
  readonly crv?: unknown;
  readonly d?: unknown;
  readonly [member: string]: unknown;
}

/** The key type (RFC 7518 §6.1) an algorithm signs with. */
function keyTypeOf(alg: string): string | undefined {
  if (alg.startsWith('RS') || alg.startsWith('PS')) return 'RSA';
  if (alg.startsWith('ES')) return 'EC';
  if (alg === 'EdDSA' || alg === 'Ed25519') return 'OKP';
  return undefined;
}

/** Whether a key's curve suits the algorithm (RFC 7518 §3.4, RFC 8037 §3.1, RFC 9864 §2). */
function curveSuits(alg: string, crv: unknown): boolean {
  switch (alg) {
    case 'ES256':
      return crv === 'P-256';
    case 'ES384':
      return crv === 'P-384';
    case 'ES512':
      return crv === 'P-521';
    case 'Ed25519':
      return crv === 'Ed25519';
    case 'EdDSA':
      return crv === 'Ed25519' || crv === 'Ed448';
    default:
      return true;
  }
}

/** Whether a key's own `alg` allows `alg`: `EdDSA` and `Ed25519` name one algorithm for an Ed25519 key. */
function algorithmSuits(alg: string, key: SetKey): boolean {
  if (typeof key.alg !== 'string' || key.alg === alg) return true;
  const edwards = ['EdDSA', 'Ed25519'];
  return key.crv === 'Ed25519' && edwards.includes(key.alg) && edwards.includes(alg);
}

/**
 * A JWK Set ready to verify with. The constructor throws a `TypeError` when `jwks` is no JWK Set
 * (an object whose `keys` is an array of objects) or holds more than `MAX_KEYS_PER_SET` keys; its
 * message completes a sentence naming the set (`${url} ${message}`).
 *
 * @example
 * ```ts
 * const keySet = new KeySet({ keys: [{ kty: 'EC', crv: 'P-256', x: '…', y: '…', kid: 'k1' }] })
 * keySet.keysFor('ES256') // that key
 * keySet.keysFor('RS256') // []
 * ```
 */
export class KeySet {
  readonly #keys: readonly SetKey[];
  readonly #imported = new WeakMap<SetKey, KeyObject | null>();

  constructor(jwks: unknown) {
    const keys = (jwks as { keys?: unknown } | null)?.keys;
    if (typeof jwks !== 'object' || jwks === null || !Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))) {
      throw new TypeError('is not a JWK Set');
    }
    if (keys.length > MAX_KEYS_PER_SET) throw new TypeError(`holds ${keys.length} keys, more than the ${MAX_KEYS_PER_SET} a JWK Set may hold`);
    this.#keys = structuredClone(keys) as SetKey[];
  }

  /** The keys that may verify a signature made with `alg`, in the set's order. */
  keysFor(alg: string): readonly SetKey[] {
    const kty = keyTypeOf(alg);
    return this.#keys.filter(
      (key) =>
        key.kty === kty &&
        key.d === undefined && // a private key has no place in a published set
        algorithmSuits(alg, key) &&
        (key.use === undefined || key.use === 'sig') &&
        (!Array.isArray(key.key_ops) || key.key_ops.includes('verify')) &&
        curveSuits(alg, key.crv),
    );
  }

  /** The key as a public key object (imported once), or `undefined` when it is no valid key. */
  keyObject(key: SetKey): KeyObject | undefined {
    let imported = this.#imported.get(key);
    if (imported === undefined) {
      const members: NodeJwk = {};
      for (const name of ['kty', 'crv', 'x', 'y', 'n', 'e'] as const) if (typeof key[name] === 'string') members[name] = key[name] as string;
      try {
        imported = createPublicKey({ key: members, format: 'jwk' });
      } catch {
        imported = null;
      }
      this.#imported.set(key, imported);
    }
    return imported ?? undefined;
  }
}
