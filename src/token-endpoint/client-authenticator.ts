/**
 * @module client-authenticator
 * Client authentication, in one place and free of any framework: given the credentials a token request
 * presented (of whatever kind) and the client's address, it answers the authenticated client, or the
 * typed failure to render (401 `invalid_client`, 429 `too_many_requests`, 503 `temporarily_unavailable`).
 * Everything that decides it lives behind {@link ClientAuthenticator.authenticate}:
 *
 * - the failure limiter (docs/security.md): a repeat client is only checked against the limit, also
 *   while its account is read again; any other attempt is counted before its check and given back on
 *   success, so a burst cannot pass the limit all at once;
 * - the bcrypt gate's early refusal of an address or client ID whose share is full (503 before any store read);
 * - the remembered-secret shortcut (a secret that passed bcrypt here, or on any instance sharing the
 *   store and the signing keys, skips it; see {@link RememberedSecrets} and {@link VerifiedSecretDigests});
 * - one bcrypt check at a time per exact presented secret: identical concurrent requests share it
 *   (see {@link SecretCheckFlights});
 * - one method per kind of credential, with one timing path for every failure of that kind;
 * - last-use recording, and the audit event of every failure with its reason.
 *
 * passport's strategies (client-strategies.ts) are thin adapters that call it. It answers through a
 * callback, not a promise: every token request goes through it, and the repeat client's path then
 * needs no allocation beyond its result.
 */
import { InvalidClientError, SecretChecksBusyError, TooManyRequestsError, type ClientAuthenticationFailure } from '../errors.js';
import type { AuditEventInput } from '../audit/audit-events.js';
import type { Telemetry } from '../observability/telemetry.js';
import { GATE_IPV6_PREFIX } from '../secrets/bcrypt-gate.js';
import { parseSecret } from '../credentials/generate-credentials.js';
import { presentedClientId } from '../credentials/redact-secrets.js';
import type { PresentedSecret, RememberedSecrets } from '../secrets/remembered-secrets.js';
import type { FlightOutcome, SecretCheckFlights, SharedCompare } from '../secrets/secret-check-flights.js';
import type { VerifiedSecretDigests } from '../secrets/verified-secret-digests.js';
import type { SecretUseRecorder } from '../secrets/secret-use-recorder.js';
import type { SecretVerifier } from '../secrets/secret-verifier.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord, AccountStore, SecretRecord } from '../store/account-store.js';
import { findSecret } from '../store/account-credentials.js';
import { callStore } from '../runtime/call-store.js';
import { isClientIdLookup } from '../store/lookup-values.js';
import type { CallObserver } from '../observability/dependency-monitor.js';
import { assertionClientId, assertionNames, type KeyAssertionChecker } from './key-assertion.js';
import { tokenEndpointAudienceOf, type TokenEndpointAudienceSetting } from '../token-endpoint-audience.js';
import { federatedTokenNames, type FederatedClientCheck, type FederatedTokenNames } from '../federation/federated-client-check.js';
import type { AttemptReservation, FailureLimiter } from './failure-limiter.js';
import { limiterAddress } from './limiter-address.js';
import type { AuthenticatedClient, AuthenticationDone, PresentedCredentials } from './presented-credentials.js';

export type { AuthenticatedClient, AuthenticationDone, PresentedCredentials, UsedCredential } from './presented-credentials.js';

/** What the authenticator works with, built once by the token endpoint. */
export interface ClientAuthenticatorParts {
  readonly accounts: AccountCache;
  /** The store, for the single use of client assertions (`consumeAssertionId`). */
  readonly store: AccountStore;
  readonly storeTimeout: number;
  readonly storeCalls?: CallObserver;
  readonly assertions: KeyAssertionChecker;
  /** The federated method (outside issuers' tokens); `undefined` when the store holds no federated credentials. */
  readonly federated: FederatedClientCheck | undefined;
  /**
   * The issuer identifier (the audience of client assertions), the clock tolerance, the longest assertion
   * lifetime accepted, in seconds, and whether the token endpoint URL is accepted as an audience too.
   */
  readonly assertionRules: {
    readonly issuer: string;
    readonly clockTolerance: number;
    readonly maxLifetime: number;
    readonly tokenEndpointAudience: TokenEndpointAudienceSetting;
  };
  readonly secrets: SecretVerifier;
  readonly remembered: RememberedSecrets;
  /** The digests of verified secrets kept in the store, shared by every instance. */
  readonly digests: VerifiedSecretDigests;
  readonly flights: SecretCheckFlights;
  readonly limiter: FailureLimiter | undefined;
  /** IPv6 addresses are limited per prefix of this many bits. */
  readonly ipv6Prefix: number;
  readonly secretUse: SecretUseRecorder;
  readonly audit: (event: AuditEventInput) => void;
  readonly telemetry: Pick<Telemetry, 'limiterRefused'>;
  readonly now: () => Date;
}


/** A presented secret that could be ours (its format and checksum hold), with the secret ID it names. */
function presentedSecret(clientId: string, value: string): PresentedSecret | undefined {
  if (!isClientIdLookup(clientId)) return undefined;
  const parsed = parseSecret(value);
  return parsed ? { clientId, value, secretId: parsed.secretId } : undefined;
}

const isLive = (account: AccountRecord | undefined, secret: SecretRecord | undefined): account is AccountRecord =>
  account !== undefined && account.enabled && secret !== undefined && secret.revokedAt === null;

/** One attempt while it is decided: what it presented, where from, and what the limiter holds for it. */
interface Attempt {
  readonly credentials: PresentedCredentials;
  /** The client ID the attempt is counted and audited under: the presented one, else the one a client assertion names. */
  readonly clientId: string | undefined;
  readonly address: string | undefined;
  readonly done: AuthenticationDone;
  reservation?: AttemptReservation;
  /** The bcrypt compare made for it, once made (what a flight it leads ends with). */
  compared?: SharedCompare;
}

/** See the module description. One per token endpoint. */
export class ClientAuthenticator {
  readonly #parts: ClientAuthenticatorParts;
  /** The prefix the bcrypt gate keys IPv6 addresses by: a site's /48, or the limiter's prefix if shorter. */
  readonly #gatePrefix: number;

  constructor(parts: ClientAuthenticatorParts) {
    this.#parts = parts;
    this.#gatePrefix = Math.min(parts.ipv6Prefix, GATE_IPV6_PREFIX);
  }

  /**
   * Authenticates the client of one token request. `address` is the client's address as Express sees it
   * (`req.ip`, which respects `trust proxy`). `done` gets the client, or the error to answer with:
   * {@link InvalidClientError} (401), {@link TooManyRequestsError} (429), or a 503
   * (`StoreUnavailableError`, `SecretChecksBusyError`). `mountPath` is the path the token router is
   * mounted on (`req.baseUrl`), from which the token endpoint URL is derived as an assertion audience.
   */
  authenticate(credentials: PresentedCredentials, address: string | undefined, done: AuthenticationDone, mountPath?: string): void {
    if (credentials.method === 'assertion') {
      // One decoding, unverified, tells the kind: a key-pair assertion names the client as both `iss` and
      // `sub`; an outside issuer's token names the issuer and the workload.
      const names = assertionNames(credentials.assertion);
      const federated = names && federatedTokenNames(names);
      if (federated) return this.#authenticateFederated(credentials, federated, address, done);
      return this.#authenticateAssertion(credentials, names, address, done, mountPath);
    }
    const { limiter } = this.#parts;
    const clientId = 'clientId' in credentials ? credentials.clientId : undefined;
    const secret = 'secret' in credentials ? presentedSecret(credentials.clientId, credentials.secret) : undefined;
    const remembered = secret && this.#remembered(secret);
    if (remembered) {
      // A repeat client's exact secret, verified without bcrypt: not a guess, so only checked, not counted.
      // Written out: this is every repeat request's path, and it needs no closure when nothing is on record.
      if (!limiter) return this.#succeed(remembered, done);
      const limited = limiter.check({ clientId, address });
      if (limited === 0) return this.#succeed(remembered, done); // nothing on record for either key: no store call, no wait
      return this.#afterCheck(limited, { credentials, clientId, address, done }, () => this.#succeed(remembered, done));
    }
    const attempt: Attempt = { credentials, clientId, address, done };
    if (secret && this.#parts.remembered.knows(secret)) {
      // The same exact secret, but its account is not in the cache (its entry expired, or a change to it
      // dropped it): read it once, then decide as above. Neither counted in advance (a busy client's
      // concurrent requests would get 429 while the read is in flight) nor refused by a full bcrypt
      // queue (no compare is needed).
      if (!limiter) return this.#reread(attempt, secret);
      return this.#checkThen(limiter, attempt, () => this.#reread(attempt, secret));
    }
    if (!secret) return this.#counted(attempt, () => this.#fail(attempt, credentials.method === 'none' ? 'missing_credentials' : 'malformed_credentials'));
    this.#checkSecret(attempt, secret);
  }

  /** The fast path of a repeat client: its account cached, the secret live, this exact value verified before. Synchronous. */
  #remembered(presented: PresentedSecret): AuthenticatedClient | undefined {
    const account = this.#parts.accounts.peek(presented.clientId)?.account;
    const secret = findSecret(account, presented.secretId);
    if (!isLive(account, secret) || !this.#verified(presented, secret!)) return undefined;
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
      if (client) return this.#succeed(client, attempt.done);
      this.#counted(attempt, () => this.#verifySecret(attempt, presented)); // no longer live: decided as any other attempt
    }, attempt.done);
  }

  /**
   * The secret method, one check at a time per exact value (secret-check-flights.ts). The first request
   * leads: counted in advance, then verified (#verifySecret). A request presenting the same value
   * meanwhile is the same guess: it is only checked against the limit, not counted in advance (a fleet
   * sharing one credential would otherwise pass the limit with its first requests), and decided from
   * the leader's outcome (#afterFlight); a failure is counted when decided, as for key assertions.
   */
  #checkSecret(attempt: Attempt, presented: PresentedSecret): void {
    const { flights, limiter } = this.#parts;
    const key = flights.keyOf(presented);
    const inFlight = flights.get(key);
    if (inFlight) {
      const wait = (): void => void inFlight.then((outcome) => this.#afterFlight(attempt, presented, outcome));
      return limiter ? this.#checkThen(limiter, attempt, wait) : wait();
    }
    const land = flights.start(key);
    const leader: Attempt = {
      ...attempt,
      done: (err, client) => {
        land(leader.compared ? { compared: leader.compared } : err ? { error: err } : {});
        attempt.done(err, client);
      },
    };
    this.#counted(leader, () => this.#verifySecret(leader, presented));
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
      }, (err: unknown) => this.#undecided(attempt, err));
      return;
    }
    // Refused for its own address or client ID's share (429, or a full bcrypt queue): decided afresh.
    if ('error' in outcome && !(outcome.error instanceof TooManyRequestsError || outcome.error instanceof SecretChecksBusyError)) {
      return this.#undecided(attempt, outcome.error); // the store failed: the same answer (503) for every request that waited
    }
    this.#checkSecret(attempt, presented);
  }

  /**
   * The key-pair method (`private_key_jwt`): the assertion's signature and claims checked against the
   * account's public keys (key-assertion.ts), then its `jti` recorded in the store, once: a replay, on
   * this instance or any other sharing the store, is refused. Every failure is counted by the limiter
   * like a wrong secret.
   */
  #authenticateAssertion(
    credentials: PresentedCredentials & { method: 'assertion' },
    names: { readonly iss?: unknown; readonly sub?: unknown } | undefined,
    address: string | undefined,
    done: AuthenticationDone,
    mountPath: string | undefined,
  ): void {
    const asserted = names && assertionClientId(names);
    const attempt: Attempt = { credentials, clientId: credentials.clientId ?? asserted, address, done };
    // Checked against the limit, not counted in advance: a signature cannot be guessed, and checking one
    // costs no bcrypt, so a burst gains nothing by passing together. A failure is counted when it is
    // decided (#fail), and answered 429 once past the limit. Counting every assertion in advance would
    // keep the counts of the last second of each window (they cannot be given back safely so close to
    // its end) and answer a busy client 429 there.
    const limiter = this.#parts.limiter;
    const check = (then: () => void): void => (limiter ? this.#checkThen(limiter, attempt, then) : then());
    check(() => {
      // The client_id sent beside an assertion must name the same client (RFC 7521 §4.2).
      if (asserted === undefined || (credentials.clientId !== undefined && credentials.clientId !== asserted)) return this.#fail(attempt, 'invalid_assertion');
      const { store, storeTimeout, storeCalls, assertionRules } = this.#parts;
      const consume = store.consumeAssertionId?.bind(store);
      const undecided = (err: unknown): void => this.#undecided(attempt, err);
      this.#parts.accounts.get(asserted).then((account) => {
        if (!account) return this.#fail(attempt, 'unknown_client');
        const now = this.#parts.now();
        const { issuer, clockTolerance, maxLifetime, tokenEndpointAudience } = assertionRules;
        const tokenEndpoint = tokenEndpointAudienceOf(tokenEndpointAudience, issuer, mountPath);
        this.#parts.assertions.verify(credentials.assertion, account, { issuer, clockTolerance, maxLifetime, tokenEndpoint, now }).then((outcome) => {
          if ('failure' in outcome) return this.#fail(attempt, outcome.failure, account);
          if (!account.enabled) return this.#fail(attempt, 'disabled_account', account);
          // A store without key credentials cannot make an assertion single-use: it accepts none.
          if (!consume) return this.#fail(attempt, 'invalid_assertion', account);
          callStore(() => consume(asserted, outcome.jti, outcome.expiresAt, now), storeTimeout, 'consumeAssertionId', storeCalls).then((first) => {
            if (!first) return this.#fail(attempt, 'replayed_assertion', account);
            this.#succeed({ account, credential: { kind: 'key', id: outcome.key.id } }, done, attempt);
          }, undecided);
        }, undecided);
      }, undecided);
    });
  }

  /**
   * The federated method: a token of an outside issuer that a live federated credential of the account
   * trusts (federated-client-check.ts). Checked against the limit, not counted in advance, and every
   * failure counted when decided, as for key-pair assertions.
   */
  #authenticateFederated(
    credentials: PresentedCredentials & { method: 'assertion' },
    names: FederatedTokenNames,
    address: string | undefined,
    done: AuthenticationDone,
  ): void {
    const attempt: Attempt = { credentials, clientId: credentials.clientId, address, done };
    const { limiter, federated } = this.#parts;
    const decide = (): void => {
      if (!federated) return this.#fail(attempt, 'untrusted_token');
      federated.check(credentials.assertion, names, credentials.clientId, this.#parts.now()).then(
        (outcome) => {
          if ('failure' in outcome) return this.#fail(attempt, outcome.failure, outcome.account);
          this.#succeed({ account: outcome.account, credential: { kind: 'federated', id: outcome.credential.id } }, done, attempt);
        },
        (err: unknown) => this.#undecided(attempt, err),
      );
    };
    if (limiter) return this.#checkThen(limiter, attempt, decide);
    decide();
  }

  /**
   * The secret method: one bcrypt compare for every outcome (against a dummy hash when nothing matches),
   * so an unknown client, a wrong or revoked secret and a disabled account take the same time.
   */
  #verifySecret(attempt: Attempt, presented: PresentedSecret): void {
    const keys = { address: this.#gateAddress(attempt.address), clientId: presented.clientId };
    const busy = this.#parts.secrets.refusal(keys);
    if (busy) return this.#undecided(attempt, busy);
    const undecided = (err: unknown): void => this.#undecided(attempt, err);
    this.#parts.accounts.get(presented.clientId).then((account) => {
      const secret = findSecret(account, presented.secretId);
      const live = isLive(account, secret);
      // Verified before: by a concurrent first request here, or by any instance (the record's digest).
      if (live && this.#verified(presented, secret!)) return this.#succeed({ account, credential: { kind: 'secret', id: secret!.id } }, attempt.done, attempt);
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
    if (!account) return this.#fail(attempt, 'unknown_client');
    if (!secret || !matches) return this.#fail(attempt, 'wrong_secret', account);
    if (secret.revokedAt !== null) return this.#fail(attempt, 'revoked_secret', account);
    if (!account.enabled) return this.#fail(attempt, 'disabled_account', account);
    this.#parts.remembered.remember(presented, secret.hash);
    this.#succeed({ account, credential: { kind: 'secret', id: secret.id } }, attempt.done, attempt);
  }

  /** The bcrypt gate keys an IPv6 address by its site's /48 (or the limiter's prefix, if shorter): one network, one turn and one share. */
  #gateAddress(address: string | undefined): string | undefined {
    return address === undefined ? undefined : limiterAddress(address, this.#gatePrefix);
  }

  #succeed(client: AuthenticatedClient, done: AuthenticationDone, attempt?: Attempt): void {
    attempt?.reservation?.release();
    this.#parts.secretUse.record(client.account.clientId, client.credential.kind, client.credential.id, this.#parts.now());
    done(null, client);
  }

  /** Ended without a decision (503): the count in advance is given back. */
  #undecided(attempt: Attempt, err: unknown): void {
    attempt.reservation?.release();
    attempt.done(err as SecretChecksBusyError);
  }

  /** Counts the attempt before its check, so a burst cannot pass the limit all at once (docs/security.md); then `then`. */
  #counted(attempt: Attempt, then: () => void): void {
    const { limiter } = this.#parts;
    if (!limiter) return then();
    limiter.reserve({ clientId: attempt.clientId, address: attempt.address }).then((counted) => {
      if (counted.retryAfter > 0) return this.#refuse(attempt, counted.retryAfter);
      attempt.reservation = counted;
      then();
    }, attempt.done);
  }

  /** Refuses (429) when a key is already at the limit, else goes on with `then`. */
  #checkThen(limiter: FailureLimiter, attempt: Attempt, then: () => void): void {
    const limited = limiter.check({ clientId: attempt.clientId, address: attempt.address });
    if (limited === 0) return then();
    this.#afterCheck(limited, attempt, then);
  }

  #afterCheck(limited: Promise<number>, attempt: Attempt, then: () => void): void {
    limited.then((retryAfter) => (retryAfter > 0 ? this.#refuse(attempt, retryAfter) : then()), attempt.done);
  }

  #fail(attempt: Attempt, reason: ClientAuthenticationFailure, account?: AccountRecord): void {
    const { limiter, audit } = this.#parts;
    audit({ type: 'client.authentication_failed', reason, ...auditFields(attempt, account), ...(account ? { name: account.name } : {}) });
    const error = new InvalidClientError(reason, { authorizationHeader: attempt.credentials.authorizationHeader });
    // A counted attempt that failed keeps its count; a failure that was not counted in advance is counted now.
    if (attempt.reservation || !limiter) return attempt.done(error);
    limiter.reserve({ clientId: attempt.clientId, address: attempt.address }).then((counted) => {
      if (counted.retryAfter <= 0) return attempt.done(error);
      this.#parts.telemetry.limiterRefused();
      attempt.done(new TooManyRequestsError(counted.retryAfter));
    }, attempt.done);
  }

  #refuse(attempt: Attempt, retryAfter: number): void {
    this.#parts.audit({ type: 'client.authentication_failed', reason: 'rate_limited', ...auditFields(attempt) });
    this.#parts.telemetry.limiterRefused();
    attempt.done(new TooManyRequestsError(retryAfter));
  }
}

/**
 * The client ID and address for a failure's audit event. The client ID is shown only when it has the
 * form of one (or named an account): a client that put its secret, or part of it, in the client ID
 * field must not find it there. An outside token sent without a client ID is audited under the
 * account it was found to name.
 */
function auditFields(attempt: Attempt, account?: AccountRecord): { clientId?: string; malformedClientId?: string; address?: string } {
  const clientId = attempt.clientId ?? account?.clientId;
  const { address } = attempt;
  return { ...(clientId !== undefined ? presentedClientId(clientId, account !== undefined) : {}), ...(address !== undefined ? { address } : {}) };
}
