/**
 * @module secret-verifier
 * Compares presented secrets with stored hashes by bcrypt, through the bcrypt gate: every compare, real
 * or against a dummy hash when no real hash exists, waits for a slot and its address's turn, so every
 * failure (unknown client, wrong, revoked, disabled) costs the time of one compare and a flood can
 * neither exhaust libuv's thread pool nor starve other addresses. Repeat clients skip it entirely
 * (see {@link RememberedSecrets}).
 */
import { randomBytes } from 'node:crypto';
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
  /** Bounds on concurrent bcrypt compares (see {@link BcryptGate}). @default { concurrency: 2, queue: 256, perKey: 16 } */
  readonly gate?: BcryptGateOptions;
  /** Records queue wait and compare durations. */
  readonly telemetry?: Pick<Telemetry, 'secretVerified' | 'secretQueueWait'>;
  /** Told (at most every 10 s) that a check was refused because the queue was full. */
  readonly onSaturated?: (queued: number) => void;
}

/** See the module description. One per `ServiceAccounts` instance. */
export class SecretVerifier {
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
  }

  /** A hash of a random value at the configured cost, made once, for comparisons that must fail. */
  dummyHash(): Promise<string> {
    this.#dummyHash ??= hashSecret(randomBytes(32).toString('base64url'), this.#rounds);
    return this.#dummyHash;
  }

  /**
   * Whether `value` matches `hash`. With `hash` undefined, compares against the dummy hash and returns
   * false, taking the same time. `keys` says who asks (client address, presented client ID, whether it
   * names an existing account): the bcrypt gate shares its queue by them.
   * @throws {SecretChecksBusyError} the gate refused the compare (→ 503)
   */
  async verify(value: string, hash: string | undefined, keys: BcryptGateKeys = {}): Promise<boolean> {
    const against = hash ?? (await this.dummyHash());
    const ok = await this.#compare(value, against, keys);
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
}
