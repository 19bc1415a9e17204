/**
 * @module remembered-secrets
 * The secrets that passed bcrypt on this instance, so a repeat client pays bcrypt once: for each client
 * ID and secret ID, the stored hash it matched and an HMAC of the value under a per-process key (bounded
 * LRU, bounded lifetime). The value itself is never kept.
 *
 * What an entry proves, and what it does not: only that this exact value matches that exact stored hash
 * (a secret's hash never changes). Whether the secret is still live, and its account enabled, is read
 * from the account record every time, so an entry never needs to be forgotten when accounts change or
 * the store's change feed reports that anything may have changed: a revoked secret or a disabled
 * account is refused from its record, within the revocation bound, entry or not. Failed attempts never
 * add an entry.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Tuning of {@link RememberedSecrets}. */
export interface RememberedSecretsOptions {
  /** Most remembered secrets. @default 10000 */
  readonly max?: number;
  /** Milliseconds a remembered secret skips bcrypt. @default 600000 */
  readonly ttl?: number;
}

interface Entry {
  /** The stored hash the value matched. */
  readonly hash: string;
  readonly mac: Buffer;
}

/** A presented secret, by its account and the secret ID its value names. */
export interface PresentedSecret {
  readonly clientId: string;
  readonly secretId: string;
  readonly value: string;
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
  // A KeyObject, made once: HMAC with it costs about half of HMAC with a Buffer key.
  readonly #key = createSecretKey(randomBytes(32));
  readonly #entries: LRUCache<string, Entry>;

  constructor(options: RememberedSecretsOptions = {}) {
    // ttlResolution 0: no 1 ms timer per lookup (see AccountCache).
    this.#entries = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttl ?? 600_000, ttlResolution: 0 });
  }

  #mac(value: string): Buffer {
    return createHmac('sha256', this.#key).update(value, 'utf8').digest();
  }

  /** Whether this exact value passed bcrypt here recently against `hash`. Synchronous. */
  matches(secret: PresentedSecret, hash: string): boolean {
    const entry = this.#entries.get(keyOf(secret));
    return entry !== undefined && entry.hash === hash && timingSafeEqual(entry.mac, this.#mac(secret.value));
  }

  /**
   * Whether this exact value passed bcrypt here recently as this client's secret, whatever the account
   * record says now (it may not be at hand): such a value is not a guess. Synchronous.
   */
  knows(secret: PresentedSecret): boolean {
    const entry = this.#entries.get(keyOf(secret));
    return entry !== undefined && timingSafeEqual(entry.mac, this.#mac(secret.value));
  }

  /** Remembers that the value matched `hash` (bcrypt said so). */
  remember(secret: PresentedSecret, hash: string): void {
    this.#entries.set(keyOf(secret), { hash, mac: this.#mac(secret.value) });
  }
}
