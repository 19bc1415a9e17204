/**
 * @module secret-verifier
 * Verifies presented secrets against stored hashes, paying bcrypt once per secret: after a successful
 * compare, an HMAC of the value under a per-process key is remembered (bounded LRU, bounded lifetime),
 * so the same secret is verified in microseconds until the entry expires. Failed attempts never fill
 * the cache, and only live secrets of enabled accounts may use it, so the timing of every failure
 * (unknown client, wrong, revoked, disabled) stays that of one bcrypt compare.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { hashSecret, verifySecretHash } from './hash-secret.js';
import { BcryptGate, type BcryptGateOptions } from './bcrypt-gate.js';

/** Tuning of {@link SecretVerifier}. */
export interface SecretVerifierOptions {
  /** bcrypt rounds of the dummy hash compared when no real hash exists. */
  readonly rounds: number;
  /** Most remembered secrets. @default 10000 */
  readonly max?: number;
  /** Milliseconds a remembered secret skips bcrypt. @default 600000 */
  readonly ttl?: number;
  /** Bounds on concurrent bcrypt compares (see {@link BcryptGate}). @default { concurrency: 2, queue: 256 } */
  readonly gate?: BcryptGateOptions;
}

/** See the module description. One per `ServiceAccounts` instance. */
export class SecretVerifier {
  // A KeyObject, made once: HMAC with it costs about half of HMAC with a Buffer key.
  readonly #key = createSecretKey(randomBytes(32));
  readonly #verified: LRUCache<string, Buffer>;
  readonly #rounds: number;
  readonly #gate: BcryptGate;
  #dummyHash: Promise<string> | undefined;

  constructor(options: SecretVerifierOptions) {
    this.#rounds = options.rounds;
    this.#gate = new BcryptGate(options.gate);
    // ttlResolution 0: no 1 ms timer per lookup (see AccountCache).
    this.#verified = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttl ?? 600_000, ttlResolution: 0 });
  }

  #mac(value: string): Buffer {
    return createHmac('sha256', this.#key).update(value, 'utf8').digest();
  }

  /** A hash of a random value at the configured cost, made once, for comparisons that must fail. */
  dummyHash(): Promise<string> {
    this.#dummyHash ??= hashSecret(randomBytes(32).toString('base64url'), this.#rounds);
    return this.#dummyHash;
  }

  /**
   * Whether `value` is the secret behind `hash` and was verified by bcrypt here recently: true only for
   * that exact value, false when this instance cannot tell without bcrypt. Synchronous. Call it only
   * for a live secret of an enabled account.
   */
  isRemembered(value: string, hash: string): boolean {
    const known = this.#verified.get(hash);
    return known !== undefined && timingSafeEqual(known, this.#mac(value));
  }

  /**
   * Whether `value` matches `hash`. With `hash` undefined, compares against the dummy hash and
   * returns false, taking the same time. `mayUseCache` is true only for a live secret of an enabled account.
   */
  async verify(value: string, hash: string | undefined, mayUseCache: boolean): Promise<boolean> {
    if (hash !== undefined && mayUseCache && this.isRemembered(value, hash)) return true;
    const against = hash ?? (await this.dummyHash());
    // Every compare, real or dummy, waits for a slot: a flood cannot exhaust libuv's thread pool (→ 503 when full).
    const ok = await this.#gate.run(() => verifySecretHash(value, against));
    if (ok && hash !== undefined && mayUseCache) this.#verified.set(hash, this.#mac(value));
    return ok && hash !== undefined;
  }

  /** Forgets every remembered secret (e.g. when the store reports that anything may have changed). */
  clear(): void {
    this.#verified.clear();
  }
}
