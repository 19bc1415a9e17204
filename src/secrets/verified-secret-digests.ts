/**
 * @module verified-secret-digests
 * A proof, kept in the store beside the secret's bcrypt hash, that a presented value passed bcrypt, so
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
import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Keyring } from '../access-tokens/keyring.js';
import { parseSecret } from '../credentials/generate-credentials.js';
import type { AccountStore, SecretRecord } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';
import type { PresentedSecret } from './remembered-secrets.js';

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
 * import { verifySecretHash } from './hash-secret.js'
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
