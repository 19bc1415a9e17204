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
import { BcryptGate, type BcryptGateKeys, type BcryptGateOptions } from './bcrypt-gate.js';
import { SecretChecksBusyError } from '../errors.js';
import type { Telemetry } from '../observability/telemetry.js';

/** At most one "queue full" report in this many milliseconds. */
const SATURATION_REPORT_INTERVAL_MS = 10_000;

/** Tuning of {@link SecretVerifier}. */
export interface SecretVerifierOptions {
  /** bcrypt rounds of the dummy hash compared when no real hash exists. */
  readonly rounds: number;
  /** Most remembered secrets. @default 10000 */
  readonly max?: number;
  /** Milliseconds a remembered secret skips bcrypt. @default 600000 */
  readonly ttl?: number;
  /** Bounds on concurrent bcrypt compares (see {@link BcryptGate}). @default { concurrency: 2, queue: 256, perKey: 16 } */
  readonly gate?: BcryptGateOptions;
  /** Records queue wait and compare durations. */
  readonly telemetry?: Pick<Telemetry, 'secretVerified' | 'secretQueueWait'>;
  /** Told (at most every 10 s) that a check was refused because the queue was full. */
  readonly onSaturated?: (queued: number) => void;
}

/** See the module description. One per `ServiceAccounts` instance. */
export class SecretVerifier {
  // A KeyObject, made once: HMAC with it costs about half of HMAC with a Buffer key.
  readonly #key = createSecretKey(randomBytes(32));
  readonly #verified: LRUCache<string, Buffer>;
  readonly #rounds: number;
  readonly #gate: BcryptGate;
  readonly #telemetry: SecretVerifierOptions['telemetry'];
  readonly #onSaturated: SecretVerifierOptions['onSaturated'];
  #saturationReportedAt = -Infinity;
  #dummyHash: Promise<string> | undefined;

  constructor(options: SecretVerifierOptions) {
    this.#rounds = options.rounds;
    this.#gate = new BcryptGate(options.gate);
    this.#telemetry = options.telemetry;
    this.#onSaturated = options.onSaturated;
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
   * `keys` says who asks (client address, presented client ID): the bcrypt gate shares its queue fairly among them.
   */
  async verify(value: string, hash: string | undefined, mayUseCache: boolean, keys: BcryptGateKeys = {}): Promise<boolean> {
    if (hash !== undefined && mayUseCache && this.isRemembered(value, hash)) return true;
    const against = hash ?? (await this.dummyHash());
    // Every compare, real or dummy, waits for a slot and its address's turn: a flood cannot exhaust
    // libuv's thread pool nor starve other addresses (→ 503 when the queue or the key's share is full).
    const ok = await this.#compare(value, against, keys);
    if (ok && hash !== undefined && mayUseCache) this.#verified.set(hash, this.#mac(value));
    return ok && hash !== undefined;
  }

  /** bcrypt compares running now, waiting, and how many may wait. */
  get load(): { running: number; queued: number; queueLimit: number } {
    return { running: this.#gate.running, queued: this.#gate.queued, queueLimit: this.#gate.queueLimit };
  }

  async #compare(value: string, hash: string, keys: BcryptGateKeys): Promise<boolean> {
    const telemetry = this.#telemetry;
    const queuedAt = performance.now();
    try {
      return await this.#gate.run(async () => {
        const startedAt = performance.now();
        telemetry?.secretQueueWait((startedAt - queuedAt) / 1000);
        try {
          return await verifySecretHash(value, hash);
        } finally {
          telemetry?.secretVerified((performance.now() - startedAt) / 1000);
        }
      }, keys);
    } catch (error) {
      if (error instanceof SecretChecksBusyError) this.#reportSaturation();
      throw error;
    }
  }

  #reportSaturation(): void {
    const now = performance.now();
    if (!this.#onSaturated || now - this.#saturationReportedAt < SATURATION_REPORT_INTERVAL_MS) return;
    this.#saturationReportedAt = now;
    this.#onSaturated(this.#gate.queued);
  }

  /**
   * The 503 that {@link verify} would meet now in the bcrypt gate for `keys`, or `undefined`: lets the
   * token endpoint refuse a flooding address or client ID before reading the store.
   */
  refusal(keys: BcryptGateKeys): SecretChecksBusyError | undefined {
    const refused = this.#gate.refusal(keys);
    if (refused) this.#reportSaturation();
    return refused;
  }

  /** Forgets every remembered secret (e.g. when the store reports that anything may have changed). */
  clear(): void {
    this.#verified.clear();
  }
}
