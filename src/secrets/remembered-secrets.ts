/**
 * @module remembered-secrets
 * Secrets remembered as verified, here and on every instance.
 *
 * On this instance ({@link RememberedSecrets}): the secrets that passed bcrypt here, so a repeat
 * client pays bcrypt once: for each client ID and secret ID, the stored hash it matched and an HMAC of
 * the value under a per-process key (bounded LRU, bounded lifetime). The value itself is never kept.
 *
 * Lifetime: an entry is forgotten after `ttl` without a use that matched it (each match extends it),
 * and in any case at its hard end, drawn at random between three quarters of `maxTtl` and `maxTtl`
 * after the check: clients that were first checked together are checked again at different moments,
 * never in one wave (docs/security.md, "Paying bcrypt once per secret").
 *
 * What an entry proves, and what it does not: only that this exact value matches that exact stored hash
 * (a secret's hash never changes). Whether the secret is still live, and its account enabled, is read
 * from the account record every time, so an entry never needs to be forgotten when accounts change or
 * the store's change feed reports that anything may have changed: a revoked secret or a disabled
 * account is refused from its record, within the revocation bound, entry or not. Failed attempts never
 * add an entry.
 *
 * On every instance ({@link VerifiedSecretDigests}): a proof, kept in the store beside the secret's bcrypt hash, that a presented value passed bcrypt, so
 * that no instance of a deployment pays bcrypt again for it: not after a restart, not on an instance a
 * scaler just added, not when a load balancer sends the client elsewhere (docs/security.md, "Paying
 * bcrypt once per secret").
 *
 * The digest is `v1.<key ID>.<HMAC-SHA-256, base64url>` over the client ID, the secret ID, the bcrypt
 * hash and the value, under a key derived with HKDF-SHA-256 from the signing key material every
 * instance of the deployment shares; the key ID names the derived key (not the signing key), so a
 * digest written under a key that was rotated out is not recognised and that value pays bcrypt once
 * more. It is made only for values of the generated format with a valid checksum, whose ~262 random
 * bits make a fast keyed hash as hard to reverse as bcrypt. bcrypt stays the hash of record: the digest
 * is written only after bcrypt accepted the value, and it is only ever compared with a presented value,
 * in constant time.
 *
 * What a matching digest proves is what a remembered secret proves (see {@link RememberedSecrets}):
 * this exact value matches this exact stored hash. Whether the secret is live and its account enabled
 * is still read from the account record on every request.
 */
import { createHmac, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Keyring } from '../access-tokens/keyring.js';
import { parseSecret } from '../credentials/generate-credentials.js';
import type { AccountStore, SecretRecord } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';

/** Tuning of {@link RememberedSecrets}. */
export interface RememberedSecretsOptions {
  /** Most remembered secrets. @default 10000 */
  readonly max?: number;
  /** Milliseconds a remembered secret is kept without a use that matched it. @default 600000 */
  readonly ttl?: number;
  /** Milliseconds a remembered secret is kept at most however often it is used, less a random quarter at most. @default 3600000 */
  readonly maxTtl?: number;
  /** A uniform random number in [0, 1): draws each entry's hard end. @default Math.random */
  readonly random?: () => number;
}

/** The share of `maxTtl` by which an entry's hard end is drawn earlier, at most. */
const MAX_TTL_JITTER = 0.25;

interface Entry {
  /** The stored hash the value matched. */
  readonly hash: string;
  readonly mac: Buffer;
  /** When (on the `performance` clock) the entry ends, however often it is used. */
  readonly until: number;
  /** When it last matched, or was stored. */
  usedAt: number;
}

/** A presented secret, by its account and the secret ID its value names. */
export interface PresentedSecret {
  readonly clientId: string;
  readonly secretId: string;
  readonly value: string;
}

// A KeyObject, made once per process: HMAC with it costs about half of HMAC with a Buffer key.
const PROCESS_KEY = createSecretKey(randomBytes(32));

/**
 * The fingerprint of a presented secret's value: its HMAC-SHA-256 under a random key of this process.
 * The one way this process tells two presented values apart without
 * keeping either: what it remembers as verified, and which checks under way are of the same value
 * (secret-verifier.ts). Never stored, never sent: a new process has a new key.
 *
 * @example
 * ```ts
 * secretFingerprint('esas_...').equals(secretFingerprint('esas_...')) // true in this process, false in another
 * ```
 */
export function secretFingerprint(value: string): Buffer {
  return createHmac('sha256', PROCESS_KEY).update(value, 'utf8').digest();
}

const keyOf = (secret: PresentedSecret): string => `${secret.clientId}\u0000${secret.secretId}`;

/**
 * See the module description. One per `ServiceAccounts` instance.
 *
 * @example
 * ```ts
 * import bcrypt from 'bcrypt'
 *
 * declare const stored: SecretRecord // the account's secret the presented value names
 * const remembered = new RememberedSecrets()
 * const presented: PresentedSecret = { clientId, secretId: stored.id, value: clientSecret }
 * if (!remembered.matches(presented, stored.hash) && (await bcrypt.compare(presented.value, stored.hash))) {
 *   remembered.remember(presented, stored.hash)
 * }
 * ```
 */
export class RememberedSecrets {
  readonly #entries: LRUCache<string, Entry>;
  readonly #ttl: number;
  readonly #maxTtl: number;
  readonly #random: () => number;

  constructor(options: RememberedSecretsOptions = {}) {
    // Lifetimes are checked on lookup (#entry): no timer, and the LRU only bounds the number.
    this.#entries = new LRUCache({ max: options.max ?? 10_000 });
    this.#ttl = options.ttl ?? 600_000;
    this.#maxTtl = options.maxTtl ?? 3_600_000;
    this.#random = options.random ?? Math.random;
  }

  /** The entry of this exact value, if it is still kept (a match extends it). */
  #entry(secret: PresentedSecret): Entry | undefined {
    const key = keyOf(secret);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const now = performance.now();
    if (now > entry.until || now - entry.usedAt > this.#ttl) {
      this.#entries.delete(key);
      return undefined;
    }
    if (!timingSafeEqual(entry.mac, secretFingerprint(secret.value))) return undefined;
    entry.usedAt = now;
    return entry;
  }

  /** Whether this exact value passed bcrypt here recently against `hash`. Synchronous. */
  matches(secret: PresentedSecret, hash: string): boolean {
    return this.#entry(secret)?.hash === hash;
  }

  /**
   * Whether this exact value passed bcrypt here recently as this client's secret, whatever the account
   * record says now (it may not be at hand): such a value is not a guess. Synchronous.
   */
  knows(secret: PresentedSecret): boolean {
    return this.#entry(secret) !== undefined;
  }

  /** Remembers that the value matched `hash` (bcrypt said so), or keeps remembering it: a known entry keeps its hard end. */
  remember(secret: PresentedSecret, hash: string): void {
    const key = keyOf(secret);
    const now = performance.now();
    const mac = secretFingerprint(secret.value);
    const known = this.#entries.get(key);
    const kept = known !== undefined && known.hash === hash && now <= known.until && timingSafeEqual(known.mac, mac);
    const until = kept ? known.until : now + this.#maxTtl * (1 - MAX_TTL_JITTER * this.#random());
    this.#entries.set(key, { hash, mac, until, usedAt: now });
  }
}

/** The format version every digest starts with. */
const VERSION = 'v1';
const HKDF_SALT = 'express-service-accounts';
const HKDF_INFO = 'verified secret digest v1';

interface DigestKey {
  /** Names the derived key in the digest: 16 base64url characters of an HMAC under it. */
  readonly id: string;
  readonly key: KeyObject;
}

/** Where a digest is written, and with what deadline. */
export interface VerifiedSecretDigestsStore {
  readonly store: AccountStore;
  readonly storeTimeout: number;
  readonly observer?: CallObserver | undefined;
}

/**
 * See the module description. One per `ServiceAccounts` instance.
 *
 * @example
 * ```ts
 * import type { Keyring } from '../access-tokens/keyring.js'
 * import { verifySecretHash } from './secret-verifier.js'
 * import type { PresentedSecret } from './remembered-secrets.js'
 *
 * declare const keyring: Keyring // the instance's resolved signing keys
 * declare const store: AccountStore
 * declare const presented: PresentedSecret // what the request sent
 * declare const secret: SecretRecord // the live secret it names, from the account record
 *
 * const digests = new VerifiedSecretDigests(keyring, { store, storeTimeout: 2000 })
 * if (digests.matches(presented, secret)) {
 *   // verified by some instance before: no bcrypt
 * } else if (await verifySecretHash(presented.value, secret.hash)) {
 *   digests.record(presented, secret) // off the request path
 * }
 * ```
 */
export class VerifiedSecretDigests {
  /** The key new digests are made with: derived from the key that signs tokens. */
  readonly #current: DigestKey | undefined;
  /** Every key a digest is recognised under: derived from each key of the keyring that can sign. */
  readonly #keys = new Map<string, DigestKey>();
  readonly #target: VerifiedSecretDigestsStore;

  constructor(keyring: Keyring, target: VerifiedSecretDigestsStore) {
    this.#target = target;
    for (const entry of keyring.keys.values()) {
      const derived = entry.signKey && deriveKey(entry.signKey);
      if (derived) this.#keys.set(derived.id, derived);
    }
    this.#current = deriveKey(keyring.signer.signKey);
  }

  /**
   * Whether the record's digest proves that this exact value passed bcrypt against the record's hash,
   * under a key this instance holds. Synchronous; one HMAC when the record has a digest.
   */
  matches(presented: PresentedSecret, secret: SecretRecord): boolean {
    const stored = secret.verifiedDigest;
    if (typeof stored !== 'string') return false;
    const [version, keyId, mac, extra] = stored.split('.');
    if (version !== VERSION || extra !== undefined || keyId === undefined || mac === undefined) return false;
    const key = this.#keys.get(keyId);
    const expected = key && digestOf(key, presented, secret.hash);
    if (expected === undefined) return false;
    const [given, wanted] = [Buffer.from(stored, 'utf8'), Buffer.from(expected, 'utf8')];
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }

  /**
   * After bcrypt accepted `presented` against `secret.hash`: writes its digest to the store, off the
   * request path, unless the record already holds a digest of it that this instance recognises, the
   * store cannot keep one (no `recordSecretDigest`), or the value is not of the generated format. A
   * failed write only means one more bcrypt compare somewhere.
   */
  record(presented: PresentedSecret, secret: SecretRecord): void {
    const { store, storeTimeout, observer } = this.#target;
    const key = this.#current;
    if (!store.recordSecretDigest || !key || this.matches(presented, secret)) return;
    const digest = digestOf(key, presented, secret.hash);
    if (digest === undefined) return;
    const write = (): Promise<void> => store.recordSecretDigest!(presented.clientId, presented.secretId, digest);
    callStore(write, storeTimeout, 'recordSecretDigest', observer).catch(() => undefined);
  }
}

/** The key material of a signing key: an HS256 secret's bytes, or a private key's PKCS #8 encoding. */
function keyMaterial(signKey: KeyObject): Buffer | undefined {
  try {
    return signKey.type === 'secret' ? signKey.export() : signKey.export({ format: 'der', type: 'pkcs8' });
  } catch {
    return undefined; // a key that cannot be exported: digests are not kept, every instance pays bcrypt once
  }
}

function deriveKey(signKey: KeyObject): DigestKey | undefined {
  const material = keyMaterial(signKey);
  if (!material) return undefined;
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', material, HKDF_SALT, HKDF_INFO, 32)));
  const id = createHmac('sha256', key).update('key id').digest('base64url').slice(0, 16);
  return { id, key };
}

/** The digest of a value of the generated format, whose secret ID it names; `undefined` for any other value. */
function digestOf(key: DigestKey, presented: PresentedSecret, hash: string): string | undefined {
  if (parseSecret(presented.value)?.secretId !== presented.secretId) return undefined;
  const mac = createHmac('sha256', key.key);
  // Each field is length-prefixed, so no two different inputs share a byte string.
  for (const field of [VERSION, presented.clientId, presented.secretId, hash, presented.value]) {
    mac.update(`${Buffer.byteLength(field, 'utf8')}:`).update(field, 'utf8');
  }
  return `${VERSION}.${key.id}.${mac.digest('base64url')}`;
}
