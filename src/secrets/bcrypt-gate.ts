/**
 * @module bcrypt-gate
 * Bounds the bcrypt work a flood of token requests can cause, and shares it fairly. bcrypt runs on
 * libuv's thread pool (4 threads by default), which the host's file system, DNS and zlib calls share:
 * an unbounded flood of wrong secrets would queue there and starve everything else. The gate lets at
 * most `concurrency` compares run at once and `queue` more wait; past that, the request is answered at
 * once with 503 `temporarily_unavailable` and `Retry-After` instead of waiting.
 *
 * Waiting compares are kept per client address. When a slot frees, it goes to the address with the
 * fewest compares running, round-robin among equals: a flood from one address, however many it sent,
 * delays another address's first request only until one of the flood's running compares ends. Each address and each client ID may keep at most `perKey` compares waiting;
 * past that, that key alone gets the 503. Every compare costs the same, so plain round-robin is as fair
 * as deficit round-robin here. The bearer check never uses bcrypt, so protected routes keep answering
 * while the gate is full.
 */
import { SecretChecksBusyError } from '../errors.js';

/** bcrypt compares allowed in flight at once: half of libuv's default pool of 4. */
export const DEFAULT_BCRYPT_CONCURRENCY = 2;
/**
 * Compares allowed to wait, from every address together: a memory bound. Round-robin across
 * addresses, not this number, bounds how long a legitimate request waits.
 */
export const DEFAULT_BCRYPT_QUEUE = 256;
/**
 * Compares one address, or one client ID, may keep waiting. At least the failure limiter's default of
 * 10, so that a burst of concurrent attempts on one key still gets its answers (401, then 429) rather
 * than 503; small enough that one key holds a small share of the queue.
 */
export const DEFAULT_BCRYPT_QUEUE_PER_KEY = 16;
/** `Retry-After` (seconds) when the queue, or a key's share of it, is full. */
export const BCRYPT_BUSY_RETRY_AFTER = 1;

/** Tuning of a {@link BcryptGate}. */
export interface BcryptGateOptions {
  /** @default 2 */
  readonly concurrency?: number;
  /** @default 256 */
  readonly queue?: number;
  /** @default 16 */
  readonly perKey?: number;
}

/**
 * Who asks for a compare. `address` is the client address as the host's proxy settings give it (the
 * caller normalises it); `clientId` is the presented client ID, whether or not it exists, so a refusal
 * tells nothing about accounts.
 */
export interface BcryptGateKeys {
  readonly address?: string | undefined;
  readonly clientId?: string | undefined;
}

/**
 * A counting semaphore with a bounded queue, fair across client addresses.
 *
 * @example
 * ```ts
 * import bcrypt from 'bcrypt'
 *
 * const gate = new BcryptGate()
 * // throws a 503 error when the queue, or this address's or client ID's share of it, is full
 * const ok = await gate.run(() => bcrypt.compare(value, hash), { address: req.ip, clientId })
 * ```
 */
export class BcryptGate {
  readonly #concurrency: number;
  readonly #queueLimit: number;
  readonly #perKey: number;
  /** Waiting compares per round-robin key, in turn order: the next turn is the first entry. */
  readonly #turns = new Map<string, Waiter[]>();
  /** Waiting compares per client ID. */
  readonly #perClientId = new Map<string, number>();
  /** Running compares per round-robin key. */
  readonly #runningByTurn = new Map<string, number>();
  #waiting = 0;
  #running = 0;

  constructor(options: BcryptGateOptions = {}) {
    this.#concurrency = options.concurrency ?? DEFAULT_BCRYPT_CONCURRENCY;
    this.#queueLimit = options.queue ?? DEFAULT_BCRYPT_QUEUE;
    this.#perKey = options.perKey ?? DEFAULT_BCRYPT_QUEUE_PER_KEY;
  }

  /** Compares running now. */
  get running(): number {
    return this.#running;
  }

  /** Compares allowed to wait in all. */
  get queueLimit(): number {
    return this.#queueLimit;
  }

  /** Compares waiting for a slot. */
  get queued(): number {
    return this.#waiting;
  }

  /**
   * Runs `task` when a slot is free and it is the turn of its address (see the module description).
   * @throws {SecretChecksBusyError} at once (answered 503 with `Retry-After`), when every slot is busy and
   * the queue, or the share of `keys.address` or `keys.clientId`, is full
   */
  async run<T>(task: () => Promise<T>, keys: BcryptGateKeys = {}): Promise<T> {
    const turn = turnOf(keys);
    const refused = this.refusal(keys);
    if (refused) throw refused;
    if (this.#running >= this.#concurrency) {
      const line = this.#turns.get(turn);
      // The slot is handed over by release(): #running is not decremented in between.
      await new Promise<void>((start) => {
        const waiter = { start, clientId: keys.clientId };
        if (line) line.push(waiter);
        else this.#turns.set(turn, [waiter]); // a new key joins the back of the turns
        this.#waiting++;
        if (keys.clientId !== undefined) this.#count(this.#perClientId, keys.clientId, 1);
      });
    } else {
      this.#running++;
      this.#count(this.#runningByTurn, turn, 1);
    }
    try {
      return await task();
    } finally {
      this.#release(turn);
    }
  }

  /**
   * The 503 that {@link run} would throw for `keys` now, or `undefined` when it would run or queue the
   * compare. Synchronous, so a caller can refuse a flooding key before doing any work for its request.
   */
  refusal(keys: BcryptGateKeys = {}): SecretChecksBusyError | undefined {
    if (this.#running < this.#concurrency) return undefined;
    const waitingForTurn = this.#turns.get(turnOf(keys))?.length ?? 0;
    const waitingForClientId = keys.clientId === undefined ? 0 : (this.#perClientId.get(keys.clientId) ?? 0);
    const full = this.#waiting >= this.#queueLimit || waitingForTurn >= this.#perKey || waitingForClientId >= this.#perKey;
    return full ? busy() : undefined;
  }

  #count(counts: Map<string, number>, key: string, delta: number): void {
    const value = (counts.get(key) ?? 0) + delta;
    if (value > 0) counts.set(key, value);
    else counts.delete(key);
  }

  /**
   * Hands the slot of a compare of `finished` to the first waiting compare of the key with the fewest
   * compares running, the first such key in turn order; that key goes to the back of the turns.
   */
  #release(finished: string): void {
    this.#count(this.#runningByTurn, finished, -1);
    let chosen: [string, Waiter[]] | undefined;
    let fewest = Infinity;
    for (const entry of this.#turns) {
      const running = this.#runningByTurn.get(entry[0]) ?? 0;
      if (running < fewest) [chosen, fewest] = [entry, running];
      if (running === 0) break;
    }
    if (!chosen) {
      this.#running--;
      return;
    }
    const [turn, line] = chosen;
    this.#turns.delete(turn);
    const { start, clientId } = line.shift()!;
    if (line.length > 0) this.#turns.set(turn, line);
    this.#waiting--;
    if (clientId !== undefined) this.#count(this.#perClientId, clientId, -1);
    this.#count(this.#runningByTurn, turn, 1);
    start();
  }
}

/** The round-robin key: the address; without one (no socket address) the client ID; without either, one shared turn. */
function turnOf(keys: BcryptGateKeys): string {
  return keys.address !== undefined ? `a:${keys.address}` : keys.clientId !== undefined ? `c:${keys.clientId}` : '';
}

interface Waiter {
  readonly start: () => void;
  readonly clientId: string | undefined;
}

/** The one refusal of the gate (answered 503 `temporarily_unavailable` with `Retry-After`). */
function busy(): SecretChecksBusyError {
  return new SecretChecksBusyError(BCRYPT_BUSY_RETRY_AFTER);
}
