/**
 * @module remembered-secrets
 * The secrets that passed bcrypt on this instance, so a repeat client pays bcrypt once: for each client
 * ID and secret ID, the stored hash it matched and an HMAC of the value under a per-process key (bounded
 * LRU, bounded lifetime). The value itself is never kept.
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
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

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
 * (secret-check-flights.ts). Never stored, never sent: a new process has a new key.
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
