/**
 * @module secret-method
 * The secret method (`client_secret_basic`, `client_secret_post`): a client ID and a secret, decided
 * wholly here.
 *
 * - A repeat client's exact secret is verified without bcrypt: a value that passed bcrypt here
 *   ({@link RememberedSecrets}) or on any instance sharing the store and the signing keys (the
 *   record's digest: {@link VerifiedSecretDigests}). It is not a guess, so only checked against the
 *   failure limiter, not counted.
 * - The bcrypt gate refuses early (503) an address or client ID whose share of the queue is full,
 *   before any store read.
 * - One bcrypt check at a time per exact presented value: identical concurrent requests share it
 *   ({@link SecretCheckFlights}).
 * - One bcrypt compare for every outcome (against a dummy hash when nothing matches), so an unknown
 *   client, a wrong or revoked secret and a disabled account take the same time. A value that cannot
 *   be a secret of ours (shape, checksum) is refused without one, after the time one takes.
 */
import { GATE_IPV6_PREFIX } from '../secrets/bcrypt-gate.js';
import { SecretChecksBusyError, TooManyRequestsError } from '../errors.js';
import { parseSecret } from '../credentials/generate-credentials.js';
import type { PresentedSecret, RememberedSecrets, VerifiedSecretDigests } from '../secrets/remembered-secrets.js';
import type { FlightOutcome, SecretCheckFlights, SecretVerifier } from '../secrets/secret-verifier.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord, SecretRecord } from '../store/account-store.js';
import { findSecret, hasExpired } from '../store/credential-kinds.js';
import type { Attempt, Attempts } from './client-authenticator.js';
import { limiterAddress } from './failure-limiter.js';
import { isClientIdLookup, type AuthenticatedClient, type AuthenticationDone, type PresentedCredentials } from './presented-credentials.js';

/** What the secret method works with, built once per token endpoint. */
export interface SecretMethodParts {
  readonly attempts: Attempts;
  readonly accounts: AccountCache;
  readonly secrets: SecretVerifier;
  readonly remembered: RememberedSecrets;
  /** The digests of verified secrets kept in the store, shared by every instance. */
  readonly digests: VerifiedSecretDigests;
  readonly flights: SecretCheckFlights;
  /** IPv6 addresses are limited per prefix of this many bits. */
  readonly ipv6Prefix: number;
  /** The clock a secret's `expiresAt` is read against. */
  readonly now: () => Date;
}

/** Credentials this method decides: a secret, unreadable ones, or none at all. */
export type SecretCredentials = PresentedCredentials & { readonly kind: 'secret' | 'malformed' | 'none' };

/** A presented secret that could be ours (its format and checksum hold), with the secret ID it names. */
function presentedSecret(clientId: string, value: string): PresentedSecret | undefined {
  if (!isClientIdLookup(clientId)) return undefined;
  const parsed = parseSecret(value);
  return parsed ? { clientId, value, secretId: parsed.secretId } : undefined;
}

/** Enabled account, and the secret neither revoked nor expired: what both fast paths require before they trust a value verified earlier. */
const isLive = (account: AccountRecord | undefined, secret: SecretRecord | undefined, now: () => Date): account is AccountRecord =>
  account !== undefined && account.enabled && secret !== undefined && secret.revokedAt === null && (secret.expiresAt == null || !hasExpired(secret, now().getTime()));

/** See the module description. */
export class SecretMethod {
  readonly #parts: SecretMethodParts;
  readonly #attempts: Attempts;
  /** The prefix the bcrypt gate keys IPv6 addresses by: a site's /48, or the limiter's prefix if shorter. */
  readonly #gatePrefix: number;

  constructor(parts: SecretMethodParts) {
    this.#parts = parts;
    this.#attempts = parts.attempts;
    this.#gatePrefix = Math.min(parts.ipv6Prefix, GATE_IPV6_PREFIX);
  }

  /** Authenticates a request that presented a secret (or unreadable credentials, or none). */
  authenticate(credentials: SecretCredentials, address: string | undefined, done: AuthenticationDone): void {
    const attempts = this.#attempts;
    const clientId = credentials.kind === 'none' ? undefined : credentials.clientId;
    const secret = credentials.kind === 'secret' ? presentedSecret(credentials.clientId, credentials.secret) : undefined;
    const remembered = secret && this.#remembered(secret);
    if (remembered) {
      // A repeat client's exact secret, verified without bcrypt: not a guess, so only checked, not counted.
      // Written out: this is every repeat request's path, and it needs no closure when nothing is on record.
      const { limiter } = attempts;
      if (!limiter) return attempts.succeed(remembered, done);
      const limited = limiter.check({ clientId, address });
      if (limited === 0) return attempts.succeed(remembered, done); // nothing on record for either key: no store call, no wait
      return attempts.afterCheck(limited, { credentials, clientId, address, done }, () => attempts.succeed(remembered, done));
    }
    const attempt: Attempt = { credentials, clientId, address, done };
    if (secret && this.#parts.remembered.knows(secret)) {
      // The same exact secret, but its account is not in the cache (its entry expired, or a change to it
      // dropped it): read it once, then decide as above. Neither counted in advance (a busy client's
      // concurrent requests would get 429 while the read is in flight) nor refused by a full bcrypt
      // queue (no compare is needed).
      return attempts.checked(attempt, () => this.#reread(attempt, secret));
    }
    if (credentials.kind === 'none') return attempts.counted(attempt, () => attempts.fail(attempt, 'missing_credentials'));
    // A value that cannot be one of our secrets: refused without store or bcrypt work, but no sooner
    // than a wrong secret is, so its answer tells nothing a wrong secret's does not.
    if (!secret) {
      const refuse = (): void => attempts.fail(attempt, 'malformed_credentials');
      return attempts.counted(attempt, () => void this.#parts.secrets.compareTime().then(refuse, refuse));
    }
    this.#checkSecret(attempt, secret);
  }

  /** The fast path of a repeat client: its account cached, the secret live, this exact value verified before. Synchronous. */
  #remembered(presented: PresentedSecret): AuthenticatedClient | undefined {
    const account = this.#parts.accounts.peek(presented.clientId)?.account;
    const secret = findSecret(account, presented.secretId);
    if (!isLive(account, secret, this.#parts.now) || !this.#verified(presented, secret!)) return undefined;
    return { account, credential: { kind: 'secret', id: secret!.id } };
  }

  /**
   * Whether this exact value passed bcrypt against the secret's hash before: on this instance
   * (remembered), or on any instance of the deployment (the record's digest, then remembered here).
   * Liveness is the caller's to check. Synchronous.
   */
  #verified(presented: PresentedSecret, secret: SecretRecord): boolean {
    const { remembered, digests } = this.#parts;
    if (remembered.matches(presented, secret.hash)) return true;
    if (!digests.matches(presented, secret)) return false;
    remembered.remember(presented, secret.hash);
    return true;
  }

  /** A remembered value whose account is not cached: the account is read once, then the value decided from it. */
  #reread(attempt: Attempt, presented: PresentedSecret): void {
    this.#parts.accounts.get(presented.clientId).then(() => {
      const client = this.#remembered(presented);
      if (client) return this.#attempts.succeed(client, attempt.done, attempt);
      this.#attempts.counted(attempt, () => this.#verifySecret(attempt, presented)); // no longer live: decided as any other attempt
    }, (err: unknown) => this.#attempts.undecided(attempt, err));
  }

  /**
   * One check at a time per exact value (secret-verifier.ts). The first request leads: counted in
   * advance, then verified (#verifySecret). A request presenting the same value meanwhile is the same
   * guess: it is only checked against the limit, not counted in advance (a fleet sharing one
   * credential would otherwise pass the limit with its first requests), and decided from the leader's
   * outcome (#afterFlight); a failure is counted when decided, as for key assertions.
   */
  #checkSecret(attempt: Attempt, presented: PresentedSecret): void {
    const { flights } = this.#parts;
    const key = flights.keyOf(presented);
    const inFlight = flights.get(key);
    if (inFlight) return this.#attempts.checked(attempt, () => void inFlight.then((outcome) => this.#afterFlight(attempt, presented, outcome)));
    const land = flights.start(key);
    const leader: Attempt = {
      ...attempt,
      done: (err, client) => {
        land(leader.compared ? { compared: leader.compared } : err ? { error: err } : {});
        attempt.done(err, client);
      },
    };
    this.#attempts.counted(leader, () => this.#verifySecret(leader, presented));
  }

  /** A request that waited for the check of its exact value, decided from that check's outcome. */
  #afterFlight(attempt: Attempt, presented: PresentedSecret, outcome: FlightOutcome): void {
    // Verified (by bcrypt or by digest): as a remembered value, liveness read from the account record.
    if (this.#parts.remembered.knows(presented)) return this.#reread(attempt, presented);
    if ('compared' in outcome) {
      const compared = outcome.compared;
      this.#parts.accounts.get(presented.clientId).then((account) => {
        const secret = findSecret(account, presented.secretId);
        // The account changed since that compare (another hash, or one where there was none): a check of its own.
        if (secret?.hash !== compared.hash) return this.#checkSecret(attempt, presented);
        this.#decide(attempt, presented, account, secret, compared.matches);
      }, (err: unknown) => this.#attempts.undecided(attempt, err));
      return;
    }
    // Refused for its own address or client ID's share (429, or a full bcrypt queue): decided afresh.
    if ('error' in outcome && !(outcome.error instanceof TooManyRequestsError || outcome.error instanceof SecretChecksBusyError)) {
      return this.#attempts.undecided(attempt, outcome.error); // the store failed: the same answer (503) for every request that waited
    }
    this.#checkSecret(attempt, presented);
  }

  /** One bcrypt compare for every outcome; see the module description. */
  #verifySecret(attempt: Attempt, presented: PresentedSecret): void {
    const attempts = this.#attempts;
    const keys = { address: this.#gateAddress(attempt.address), clientId: presented.clientId };
    const busy = this.#parts.secrets.refusal(keys);
    if (busy) return attempts.undecided(attempt, busy);
    const undecided = (err: unknown): void => attempts.undecided(attempt, err);
    this.#parts.accounts.get(presented.clientId).then((account) => {
      const secret = findSecret(account, presented.secretId);
      const live = isLive(account, secret, this.#parts.now);
      // Verified before: by a concurrent first request here, or by any instance (the record's digest).
      if (live && this.#verified(presented, secret!)) return attempts.succeed({ account, credential: { kind: 'secret', id: secret!.id } }, attempt.done, attempt);
      this.#parts.secrets.verify(presented.value, secret?.hash, { ...keys, known: account !== undefined }).then((matches) => {
        attempt.compared = { hash: secret?.hash, matches };
        // Every instance may skip bcrypt for this value from now on (written off the request path).
        if (matches && live) this.#parts.digests.record(presented, secret!);
        this.#decide(attempt, presented, account, secret, matches);
      }, undecided);
    }, undecided);
  }

  /** The answer to a secret attempt, once bcrypt said whether its value matches the secret's hash. */
  #decide(attempt: Attempt, presented: PresentedSecret, account: AccountRecord | undefined, secret: SecretRecord | undefined, matches: boolean): void {
    const attempts = this.#attempts;
    if (!account) return attempts.fail(attempt, 'unknown_client');
    if (!secret || !matches) return attempts.fail(attempt, 'wrong_secret', account);
    if (secret.revokedAt !== null) return attempts.fail(attempt, 'revoked_secret', account);
    if (hasExpired(secret, this.#parts.now().getTime())) return attempts.fail(attempt, 'expired_credential', account);
    if (!account.enabled) return attempts.fail(attempt, 'disabled_account', account);
    this.#parts.remembered.remember(presented, secret.hash);
    attempts.succeed({ account, credential: { kind: 'secret', id: secret.id } }, attempt.done, attempt);
  }

  /** The bcrypt gate keys an IPv6 address by its site's /48 (or the limiter's prefix, if shorter): one network, one turn and one share. */
  #gateAddress(address: string | undefined): string | undefined {
    return address === undefined ? undefined : limiterAddress(address, this.#gatePrefix);
  }
}
