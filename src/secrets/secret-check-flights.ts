/**
 * @module secret-check-flights
 * Single flight for secret checks: while one request's check of a presented secret is under way,
 * requests presenting the byte-identical value for the same client ID and secret ID wait for it
 * instead of queueing bcrypt compares of their own. A fleet sharing one credential, started at once,
 * costs one compare, which the bcrypt gate counts once.
 *
 * Flights are keyed by the client ID, the secret ID and an HMAC of the value under a key generated per
 * process, so only the exact same value shares a check: a wrong secret never rides on a right one's
 * result, and the value itself is not kept. A flight lasts as long as its first request's check, and
 * ends with what that check learned (see {@link FlightOutcome}); the waiting requests then decide
 * their own answer from it (client-authenticator.ts).
 */
import { secretFingerprint, type PresentedSecret } from './remembered-secrets.js';

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
