/**
 * @module bcrypt-gate
 * Bounds the bcrypt work a flood of token requests can cause. bcrypt runs on libuv's thread pool
 * (4 threads by default), which the host's file system, DNS and zlib calls share: an unbounded flood
 * of wrong secrets would queue there and starve everything else. The gate lets at most `concurrency`
 * compares run at once and `queue` more wait in order; past that, the request is answered at once with
 * 503 `temporarily_unavailable` and `Retry-After` instead of waiting. The bearer check never uses
 * bcrypt, so protected routes keep answering while the gate is full.
 */
import { TemporarilyUnavailableError } from '../errors.js';

/** bcrypt compares allowed in flight at once: half of libuv's default pool of 4. */
export const DEFAULT_BCRYPT_CONCURRENCY = 2;
/**
 * Compares allowed to wait. Large enough that a burst of concurrent attempts still gets the contract's
 * answers (401, then 429 from the failure limiter) rather than 503; small enough to bound memory and
 * latency (at cost 10, ~60 ms a compare, the last one waits about eight seconds).
 */
export const DEFAULT_BCRYPT_QUEUE = 256;
/** `Retry-After` (seconds) when the queue is full. */
export const BCRYPT_BUSY_RETRY_AFTER = 1;

/** Tuning of a {@link BcryptGate}. */
export interface BcryptGateOptions {
  /** @default 2 */
  readonly concurrency?: number;
  /** @default 256 */
  readonly queue?: number;
}

/**
 * A counting semaphore with a bounded FIFO queue.
 *
 * @example
 * ```ts
 * const gate = new BcryptGate()
 * const ok = await gate.run(() => bcrypt.compare(value, hash)) // throws a 503 error when the queue is full
 * ```
 */
export class BcryptGate {
  readonly #concurrency: number;
  readonly #queueLimit: number;
  readonly #waiting: Array<() => void> = [];
  #running = 0;

  constructor(options: BcryptGateOptions = {}) {
    this.#concurrency = options.concurrency ?? DEFAULT_BCRYPT_CONCURRENCY;
    this.#queueLimit = options.queue ?? DEFAULT_BCRYPT_QUEUE;
  }

  /** Compares running now. */
  get running(): number {
    return this.#running;
  }

  /** Compares waiting for a slot. */
  get queued(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `task` when a slot is free.
   * @throws {TemporarilyUnavailableError} at once (503 with `Retry-After`), when every slot is busy and the queue is full
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#concurrency) {
      if (this.#waiting.length >= this.#queueLimit) {
        const busy = new TemporarilyUnavailableError();
        busy.headers['Retry-After'] = String(BCRYPT_BUSY_RETRY_AFTER);
        throw busy;
      }
      // The slot is handed over by release(): #running is not decremented in between.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}
