/**
 * @module secret-verifier
 * The secret hash, made and checked in one home ({@link hashSecret}, {@link verifySecretHash}): bcrypt
 * reads only 72 bytes and stops at a NUL byte, so it is fed a fixed-length SHA-256 digest of the
 * secret (44 base64 characters), never the raw value.
 *
 * Compares presented secrets with stored hashes by bcrypt, through the bcrypt gate: every compare, real
 * or against a dummy hash when no real hash exists, waits for a slot and its address's turn, so every
 * failure (unknown client, wrong, revoked, disabled) costs the time of one compare and a flood can
 * neither exhaust libuv's thread pool nor starve other addresses. Repeat clients skip it entirely
 * (see {@link RememberedSecrets}).
 *
 * Single flight for secret checks ({@link SecretCheckFlights}): while one request's check of a
 * presented secret is under way, requests presenting the byte-identical value for the same client ID
 * and secret ID wait for it instead of queueing bcrypt compares of their own. A fleet sharing one credential, started at once,
 * costs one compare, which the bcrypt gate counts once.
 *
 * Flights are keyed by the client ID, the secret ID and an HMAC of the value under a key generated per
 * process, so only the exact same value shares a check: a wrong secret never rides on a right one's
 * result, and the value itself is not kept. A flight lasts as long as its first request's check, and
 * ends with what that check learned (see {@link FlightOutcome}); the waiting requests then decide
 * their own answer from it (secret-method.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { BcryptGate, type BcryptGateKeys, type BcryptGateOptions } from './bcrypt-gate.js';
import { SecretChecksBusyError } from '../errors.js';
import type { Telemetry } from '../observability/telemetry.js';
import { secretFingerprint, type PresentedSecret } from './remembered-secrets.js';

/** What bcrypt is fed for a secret: its SHA-256 digest, 44 characters with no NUL byte, whatever the secret's length. */
function prehash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64');
}

/**
 * Hashes a secret for storage.
 * @example
 * ```ts
 * const hash = await hashSecret(value, 10)
 * ```
 */
export function hashSecret(value: string, rounds: number): Promise<string> {
  return bcrypt.hash(prehash(value), rounds);
}

/**
 * Hashes new secrets one at a time. bcrypt runs on libuv's thread pool (4 threads by default), where
 * the token endpoint keeps at most two compares at once (the bcrypt gate): with the admin API's hashes
 * (one per account created, one per secret added) held to one more, a burst of creates never takes the
 * threads a client's token request needs. Waiting hashes take turns by owner (the client account the
 * secret is for, `''` for none), round-robin, in the order asked within one owner: a burst from one
 * client account's administrator delays another's creation by at most one hash per owner waiting.
 *
 * @example
 * ```ts
 * const hasher = new SecretHasher(12)
 * const hashes = await Promise.all(['a', 'b', 'c'].map((value) => hasher.hash(value, 'acme'))) // one after another
 * ```
 */
export class SecretHasher {
  /** One hash at a time; nothing refused (the waiting hashes are bounded by the admin requests in flight). */
  readonly #gate = new BcryptGate({ concurrency: 1, queue: Infinity, perKey: Infinity });

  constructor(private readonly rounds: number) {}

  hash(value: string, owner = ''): Promise<string> {
    return this.#gate.run(() => hashSecret(value, this.rounds), { address: owner });
  }
}

/**
 * Compares a presented secret with a stored hash, in bcrypt's constant time (`false` for a hash that
 * is no bcrypt hash).
 * @example
 * ```ts
 * const presented = clientSecret
 * const matches = await verifySecretHash(presented, account.secrets[0]!.hash)
 * ```
 */
export async function verifySecretHash(value: string, hash: string): Promise<boolean> {
  try {
    return await bcrypt.compare(prehash(value), hash);
  } catch {
    return false;
  }
}

/** How many of the last bcrypt runs {@link SecretVerifier.typicalCompareMs} is the median of. */
const DURATIONS_KEPT = 15;

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
  /** How long the last bcrypt runs took (the dummy hash's, then each compare's), newest last. */
  readonly #durations: number[] = [];

  constructor(options: SecretVerifierOptions) {
    this.#rounds = options.rounds;
    this.#gate = new BcryptGate(options.gate);
    this.#telemetry = options.telemetry;
    this.#onSaturated = options.onSaturated;
  }

  /** A hash of a random value at the configured cost, made once, for comparisons that must fail. */
  dummyHash(): Promise<string> {
    if (this.#dummyHash === undefined) {
      const startedAt = performance.now();
      this.#dummyHash = hashSecret(randomBytes(32).toString('base64url'), this.#rounds).then((hash) => {
        this.#took(performance.now() - startedAt);
        return hash;
      });
    }
    return this.#dummyHash;
  }

  /**
   * Waits as long as one compare takes, without running one: a value that cannot be a secret of ours
   * (its shape or checksum is wrong) is refused in the time a wrong secret is, at no CPU cost.
   */
  async compareTime(): Promise<void> {
    if (this.#durations.length === 0) await this.dummyHash();
    await new Promise((resolve) => setTimeout(resolve, this.typicalCompareMs));
  }

  /**
   * How long a compare takes here: the median of the last bcrypt runs, so neither a paused event loop
   * (which lengthens every run it overlaps) nor a stored hash of another cost moves it far.
   */
  get typicalCompareMs(): number {
    const sorted = [...this.#durations].sort((a, b) => a - b);
    return sorted[sorted.length >> 1] ?? 0;
  }

  #took(ms: number): void {
    if (this.#durations.push(ms) > DURATIONS_KEPT) this.#durations.shift();
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
          const ms = performance.now() - startedAt;
          this.#took(ms);
          telemetry?.secretVerified(ms / 1000);
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

/** The bcrypt compare a flight made: against which stored hash (`undefined`: the dummy hash, none matched), and its result. */
export interface SharedCompare {
  readonly hash: string | undefined;
  readonly matches: boolean;
}

/**
 * How a flight ended: with its compare, or without one, with the error its request was answered with
 * (when the value was verified without bcrypt, neither: the waiting requests find it remembered).
 */
export type FlightOutcome = { readonly compared: SharedCompare } | { readonly error: unknown } | Record<string, never>;

/**
 * See the module description. One per `ServiceAccounts` instance.
 *
 * @example
 * ```ts
 * import type { PresentedSecret } from './remembered-secrets.js'
 *
 * declare const presented: PresentedSecret // what the request sent
 * declare const hash: string // the stored hash of the secret it names
 * declare const compare: (value: string, hash: string) => Promise<boolean> // bcrypt, through the gate
 *
 * const flights = new SecretCheckFlights()
 * const key = flights.keyOf(presented)
 * const inFlight = flights.get(key)
 * if (inFlight) {
 *   const outcome = await inFlight // decide from the first request's check
 * } else {
 *   const land = flights.start(key)
 *   const matches = await compare(presented.value, hash)
 *   land({ compared: { hash, matches } })
 * }
 * ```
 */
export class SecretCheckFlights {
  readonly #flights = new Map<string, Promise<FlightOutcome>>();

  /** The flight key of a presented secret. */
  keyOf(secret: PresentedSecret): string {
    return `${secret.clientId}\u0000${secret.secretId}\u0000${secretFingerprint(secret.value).toString('base64url')}`;
  }

  /** The check of this exact value under way, if any. */
  get(key: string): Promise<FlightOutcome> | undefined {
    return this.#flights.get(key);
  }

  /** Starts the flight of `key`; the function returned ends it (once) with its outcome. */
  start(key: string): (outcome: FlightOutcome) => void {
    let land!: (outcome: FlightOutcome) => void;
    const flight = new Promise<FlightOutcome>((resolve) => (land = resolve));
    this.#flights.set(key, flight);
    return (outcome) => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
      land(outcome);
    };
  }

  /** Checks under way. */
  get size(): number {
    return this.#flights.size;
  }
}
