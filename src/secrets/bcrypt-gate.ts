/**
 * @module bcrypt-gate
 * Bounds the bcrypt work a flood of token requests can cause, and shares it so that the flood, not
 * the legitimate client, waits or is refused. bcrypt runs on libuv's thread pool (4 threads by
 * default), which the host's file system, DNS and zlib calls share: an unbounded flood of wrong secrets
 * would queue there and starve everything else. The gate lets at most `concurrency` compares run at
 * once and `queue` more wait.
 *
 * Who goes first. Waiting compares are kept per client address (an IPv6 address per /48, the block one
 * site is given, RFC 6177, so one attacker's network holds one place however many addresses it uses).
 * A compare for a client ID that names an existing account goes before any compare for an unknown one;
 * within each of the two, a freed slot goes to the address with the fewest compares running,
 * round-robin among equals. Client IDs are long random values: a flood cannot guess existing ones, so
 * its compares are for unknown IDs and every real client's first request passes them all.
 *
 * Who is refused. Each address and each client ID may keep at most `perKey` compares waiting; past
 * that, that key alone gets 503 `temporarily_unavailable` with `Retry-After`, at once. When the whole
 * queue is full, a newcomer is not refused while the flood holds the queue: a compare for an existing
 * account takes the place of the newest compare for an unknown one, and any compare takes the place of
 * the newest compare of the address that holds the most places when that address holds at least two
 * more than the newcomer's. The compare that loses its place is answered 503. Only when no place can be
 * taken is the newcomer refused. The queue is a memory bound; it never grows past `queue`.
 *
 * Every compare costs the same, so plain round-robin is as fair as deficit round-robin here. The
 * bearer check never uses bcrypt, so protected routes keep answering while the gate is full.
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
 * caller normalises it: see {@link GATE_IPV6_PREFIX}); `clientId` is the presented client ID, whether or
 * not it exists, so a refusal for a full share tells nothing about accounts. `known` says that the
 * client ID names an existing account (see the module description).
 */
export interface BcryptGateKeys {
  readonly address?: string | undefined;
  readonly clientId?: string | undefined;
  readonly known?: boolean | undefined;
}

/** IPv6 client addresses share one place in the gate per this many leading bits: one site's block (RFC 6177). */
export const GATE_IPV6_PREFIX = 48;

/**
 * A counting semaphore with a bounded queue, fair across client addresses, that serves existing
 * accounts first (see the module description).
 *
 * @example
 * ```ts
 * import bcrypt from 'bcrypt'
 *
 * const gate = new BcryptGate()
 * // throws a 503 error when the queue, or this address's or client ID's share of it, is full
 * const ok = await gate.run(() => bcrypt.compare(value, hash), { address: req.ip, clientId, known: account !== undefined })
 * ```
 */
export class BcryptGate {
  readonly #concurrency: number;
  readonly #queueLimit: number;
  readonly #perKey: number;
  /** Waiting compares of existing accounts, then of unknown client IDs, per round-robin key, in turn order: the next turn is the first entry. */
  readonly #turns: readonly [known: Map<string, Waiter[]>, unknown: Map<string, Waiter[]>] = [new Map(), new Map()];
  /** Waiting compares per round-robin key, both kinds together. */
  readonly #waitingByTurn = new Map<string, number>();
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
   * @throws {SecretChecksBusyError} (answered 503 with `Retry-After`) at once, when every slot is busy and
   * the share of `keys.address` or `keys.clientId` is full, or the queue is full and no place can be
   * taken; or later, when a compare that ranks before this one takes its place
   */
  async run<T>(task: () => Promise<T>, keys: BcryptGateKeys = {}): Promise<T> {
    const turn = turnOf(keys);
    if (this.#running >= this.#concurrency) {
      const refused = this.#makeRoom(turn, keys);
      if (refused) throw refused;
      // The slot is handed over by #release(): #running is not decremented in between.
      await new Promise<void>((start, drop) => this.#enqueue(turn, { start, drop, turn, clientId: keys.clientId, known: keys.known === true }));
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
   * compare (or might: whether the client ID exists is not known yet, so a full queue that such a
   * compare could take a place in is not a refusal). Synchronous and changes nothing, so a caller can
   * refuse a flooding key before doing any work for its request.
   */
  refusal(keys: BcryptGateKeys = {}): SecretChecksBusyError | undefined {
    if (this.#running < this.#concurrency) return undefined;
    const turn = turnOf(keys);
    if (this.#shareFull(turn, keys.clientId)) return busy();
    if (this.#waiting < this.#queueLimit) return undefined;
    return this.#victim(turn, keys.known ?? true) ? undefined : busy();
  }

  #shareFull(turn: string, clientId: string | undefined): boolean {
    const waitingForClientId = clientId === undefined ? 0 : (this.#perClientId.get(clientId) ?? 0);
    return (this.#waitingByTurn.get(turn) ?? 0) >= this.#perKey || waitingForClientId >= this.#perKey;
  }

  /** Refuses a full share; when the queue is full, drops the compare whose place this one takes, or refuses. */
  #makeRoom(turn: string, keys: BcryptGateKeys): SecretChecksBusyError | undefined {
    if (this.#shareFull(turn, keys.clientId)) return busy();
    if (this.#waiting < this.#queueLimit) return undefined;
    const victim = this.#victim(turn, keys.known === true);
    if (!victim) return busy();
    this.#dequeue(victim);
    victim.drop(busy());
    return undefined;
  }

  /**
   * The waiting compare a newcomer of `turn` may take the place of: for an existing account, the newest
   * compare for an unknown client ID of the address holding the most places; else the newest compare of
   * that kind of the address holding the most places, if it holds at least two more than `turn`.
   */
  #victim(turn: string, known: boolean): Waiter | undefined {
    const unknown = this.#heaviest(this.#turns[1]);
    if (known && unknown) return unknown.at(-1);
    const own = this.#waitingByTurn.get(turn) ?? 0;
    const line = known ? this.#heaviest(this.#turns[0]) : unknown;
    return line && (this.#waitingByTurn.get(line[0]!.turn) ?? 0) >= own + 2 ? line.at(-1) : undefined;
  }

  /** The line of the address holding the most places among `turns` (the first such in turn order). */
  #heaviest(turns: Map<string, Waiter[]>): Waiter[] | undefined {
    let heaviest: Waiter[] | undefined;
    let most = 0;
    for (const [turn, line] of turns) {
      const waiting = this.#waitingByTurn.get(turn) ?? 0;
      if (waiting > most) [heaviest, most] = [line, waiting];
    }
    return heaviest;
  }

  #enqueue(turn: string, waiter: Waiter): void {
    const turns = this.#turns[waiter.known ? 0 : 1];
    const line = turns.get(turn);
    if (line) line.push(waiter);
    else turns.set(turn, [waiter]); // a new key joins the back of the turns
    this.#waiting++;
    this.#count(this.#waitingByTurn, turn, 1);
    if (waiter.clientId !== undefined) this.#count(this.#perClientId, waiter.clientId, 1);
  }

  /** Takes `waiter` out of its line (the first or the last of it: the one served, or the one dropped). */
  #dequeue(waiter: Waiter): void {
    const turns = this.#turns[waiter.known ? 0 : 1];
    const line = turns.get(waiter.turn)!;
    if (line[0] === waiter) line.shift();
    else line.pop();
    if (line.length === 0) turns.delete(waiter.turn);
    this.#waiting--;
    this.#count(this.#waitingByTurn, waiter.turn, -1);
    if (waiter.clientId !== undefined) this.#count(this.#perClientId, waiter.clientId, -1);
  }

  #count(counts: Map<string, number>, key: string, delta: number): void {
    const value = (counts.get(key) ?? 0) + delta;
    if (value > 0) counts.set(key, value);
    else counts.delete(key);
  }

  /**
   * Hands the slot of a compare of `finished` to the first waiting compare, existing accounts first, of
   * the key with the fewest compares running, the first such key in turn order; that key goes to the
   * back of the turns.
   */
  #release(finished: string): void {
    this.#count(this.#runningByTurn, finished, -1);
    const next = this.#next(this.#turns[0]) ?? this.#next(this.#turns[1]);
    if (!next) {
      this.#running--;
      return;
    }
    const [turns, turn, line] = next;
    const waiter = line[0]!;
    this.#dequeue(waiter);
    // The key goes to the back of the turns.
    if (turns.delete(turn) || line.length > 0) turns.set(turn, line);
    this.#count(this.#runningByTurn, turn, 1);
    waiter.start();
  }

  #next(turns: Map<string, Waiter[]>): [Map<string, Waiter[]>, string, Waiter[]] | undefined {
    let chosen: [Map<string, Waiter[]>, string, Waiter[]] | undefined;
    let fewest = Infinity;
    for (const [turn, line] of turns) {
      const running = this.#runningByTurn.get(turn) ?? 0;
      if (running < fewest) [chosen, fewest] = [[turns, turn, line], running];
      if (running === 0) break;
    }
    return chosen;
  }
}

/** The round-robin key: the address; without one (no socket address) the client ID; without either, one shared turn. */
function turnOf(keys: BcryptGateKeys): string {
  return keys.address !== undefined ? `a:${keys.address}` : keys.clientId !== undefined ? `c:${keys.clientId}` : '';
}

interface Waiter {
  readonly start: () => void;
  readonly drop: (error: SecretChecksBusyError) => void;
  readonly turn: string;
  readonly clientId: string | undefined;
  readonly known: boolean;
}

/** The one refusal of the gate (answered 503 `temporarily_unavailable` with `Retry-After`). */
function busy(): SecretChecksBusyError {
  return new SecretChecksBusyError(BCRYPT_BUSY_RETRY_AFTER);
}
