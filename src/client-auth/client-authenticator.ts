/**
 * @module client-authenticator
 * Client authentication, in one place and free of any framework: given the credentials a token
 * request presented and the client's address, it answers the authenticated client, or the typed
 * failure to render (401 `invalid_client`, 429 `too_many_requests`, 503 `temporarily_unavailable`).
 * Which method decides was settled when the credentials were read (presented-credentials.ts); here it
 * is one dispatch to that method's file: secret-method.ts, key-pair-method.ts, federated-method.ts.
 * What every method shares, whatever it checks, is here too ({@link Attempts}): the failure limiter
 * (docs/security.md), the audit event of every failure with its reason, and how an attempt ends:
 * authenticated (its count given back, the credential's last use recorded), refused (401
 * `invalid_client`, counted; 429 once past the limit), or undecided (503: the store, the issuer's
 * keys or the bcrypt queue could not answer). The methods decide; the attempts decide nothing. The
 * rules both assertion kinds share are assertion-rules.ts's, and the bounded key-try loop they both
 * use is key-tries.ts's.
 *
 * What follows a credential's use, for every kind alike (secret, public key, federated credential):
 * - its last use is recorded ({@link CredentialUseRecorder}) without a store write on every request:
 *   at most one write per credential per minute per process, off the request path. A failed write
 *   only loses a timestamp.
 * - the `credential.expiring` event ({@link ExpiringCredentialNotices}): a credential obtained a token
 *   while it expires within {@link CREDENTIAL_EXPIRING_LEAD_TIME} seconds, so whoever runs the client
 *   still has time to rotate. Raised on the token path, where the credential is in hand, at most once
 *   per credential on each instance (a fleet of N instances may raise it up to N times); nothing is
 *   written and no timer runs.
 *
 * Attempts answer through callbacks, not promises: every token request goes through them, and the
 * repeat client's path then needs no allocation beyond its result.
 *
 * passport's strategies (token-endpoint/passport-adapter.ts) are thin adapters that call it.
 */
import { LRUCache } from 'lru-cache';
import { InvalidClientError, TooManyRequestsError, type ClientAuthenticationFailure, type SecretChecksBusyError } from '../errors.js';
import type { AuditEventInput } from '../audit/audit-events.js';
import type { OperationalEventInput } from '../observability/operational-events.js';
import type { Telemetry } from '../observability/telemetry.js';
import { presentedClientId } from '../credentials/redact-secrets.js';
import { ipAddressOf } from '../ip-address.js';
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { CREDENTIAL_KINDS, findOfKind, type CredentialKindName } from '../store/credential-kinds.js';
import { callStore, type CallObserver } from '../runtime/call-store.js';
import type { SharedCompare } from '../secrets/secret-verifier.js';
import type { AttemptReservation, FailureLimiter } from './failure-limiter.js';
import type { AuthenticatedClient, AuthenticationDone, FederatedCredentials, KeyPairCredentials, PresentedCredentials } from './presented-credentials.js';

export type { AuthenticatedClient, AuthenticationDone, PresentedCredentials, UsedCredential } from './presented-credentials.js';

/**
 * One method of client authentication, deciding its kind of credential wholly and answering `done`
 * with the same outcome as every other: secret-method.ts, key-pair-method.ts, federated-method.ts.
 */
export interface ClientAuthMethod<C> {
  authenticate(credentials: C, address: string | undefined, done: AuthenticationDone, mountPath?: string): void;
}

/** The three methods, one per kind of credential (built by create-client-authenticator.ts). */
export interface ClientAuthMethods {
  readonly secret: ClientAuthMethod<Exclude<PresentedCredentials, KeyPairCredentials | FederatedCredentials>>;
  readonly key: ClientAuthMethod<KeyPairCredentials>;
  readonly federated: ClientAuthMethod<FederatedCredentials>;
}

/** See the module description. One per token endpoint. */
export class ClientAuthenticator {
  readonly #methods: ClientAuthMethods;

  constructor(methods: ClientAuthMethods) {
    this.#methods = methods;
  }

  /**
   * Authenticates the client of one token request. `address` is the client's address as Express sees it
   * (`req.ip`, which respects `trust proxy`). `done` gets the client, or the error to answer with:
   * `InvalidClientError` (401), `TooManyRequestsError` (429), or a 503 (`StoreUnavailableError`,
   * `SecretChecksBusyError`, `FederatedKeysUnavailableError`). `mountPath` is the path the token
   * router is mounted on (`req.baseUrl`), from which the token endpoint URL is derived.
   */
  authenticate(credentials: PresentedCredentials, address: string | undefined, done: AuthenticationDone, mountPath?: string): void {
    switch (credentials.kind) {
      case 'key':
        return this.#methods.key.authenticate(credentials, address, done, mountPath);
      case 'federated':
        return this.#methods.federated.authenticate(credentials, address, done);
      default:
        return this.#methods.secret.authenticate(credentials, address, done);
    }
  }
}

/** One attempt while it is decided: what it presented, where from, and what the limiter holds for it. */
export interface Attempt {
  readonly credentials: PresentedCredentials;
  /** The client ID the attempt is counted and audited under: the presented one, else the one a client assertion names. */
  readonly clientId: string | undefined;
  readonly address: string | undefined;
  readonly done: AuthenticationDone;
  reservation?: AttemptReservation;
  /** The bcrypt compare made for it, once made (what a secret check it leads ends with). */
  compared?: SharedCompare;
}

/** What the attempts work with, built once per token endpoint. */
export interface AttemptParts {
  readonly limiter: FailureLimiter | undefined;
  readonly credentialUse: CredentialUseRecorder;
  readonly audit: (event: AuditEventInput) => void;
  readonly telemetry: Pick<Telemetry, 'limiterRefused'>;
  readonly now: () => Date;
}

/** See the module description. One per token endpoint, shared by its methods. */
export class Attempts {
  readonly limiter: FailureLimiter | undefined;
  readonly #parts: AttemptParts;

  constructor(parts: AttemptParts) {
    this.#parts = parts;
    this.limiter = parts.limiter;
  }

  /** Authenticated: the count in advance given back, the credential's use recorded, the client answered. */
  succeed(client: AuthenticatedClient, done: AuthenticationDone, attempt?: Attempt): void {
    attempt?.reservation?.release();
    this.#parts.credentialUse.record(client.account.clientId, client.credential.kind, client.credential.id, this.#parts.now());
    done(null, client);
  }

  /** Ended without a decision (503): the count in advance is given back. */
  undecided(attempt: Attempt, err: unknown): void {
    attempt.reservation?.release();
    attempt.done(err as SecretChecksBusyError);
  }

  /** Counts the attempt before its check, so a burst cannot pass the limit all at once (docs/security.md); then `then`. */
  counted(attempt: Attempt, then: () => void): void {
    const { limiter } = this;
    if (!limiter) return then();
    limiter.reserve({ clientId: attempt.clientId, address: attempt.address }).then((counted) => {
      if (counted.retryAfter > 0) return this.#refuse(attempt, counted.retryAfter);
      attempt.reservation = counted;
      then();
    }, attempt.done);
  }

  /**
   * Checks the attempt against the limit without counting it (429 when a key is already at the
   * limit), then `then`; a failure is counted when it is decided (see {@link Attempts.fail}).
   */
  checked(attempt: Attempt, then: () => void): void {
    const { limiter } = this;
    if (!limiter) return then();
    const limited = limiter.check({ clientId: attempt.clientId, address: attempt.address });
    if (limited === 0) return then();
    this.afterCheck(limited, attempt, then);
  }

  /** Goes on with `then` once the limiter's answer `limited` (seconds to wait) is 0, else refuses (429). */
  afterCheck(limited: Promise<number>, attempt: Attempt, then: () => void): void {
    limited.then((retryAfter) => (retryAfter > 0 ? this.#refuse(attempt, retryAfter) : then()), attempt.done);
  }

  /**
   * Refused (401 `invalid_client`, the reason, and for `claim_condition_failed` the claim's name, in
   * the audit event only). A counted attempt keeps its
   * count; one that was not counted in advance is counted now, and answered 429 once past the limit
   * (then audited as `rate_limited`, like every 429: one event per attempt, naming what it was answered).
   */
  fail(attempt: Attempt, reason: ClientAuthenticationFailure, account?: AccountRecord, claim?: string): void {
    const { limiter } = this;
    const refused = (): void => {
      this.#parts.audit({
        type: 'client.authentication_failed',
        reason,
        ...auditFields(attempt, account),
        ...(account ? { name: account.name } : {}),
        ...(claim !== undefined && { claim }),
      });
    };
    const error = new InvalidClientError(reason, { authorizationHeader: attempt.credentials.authorizationHeader });
    if (attempt.reservation || !limiter) {
      refused();
      return attempt.done(error);
    }
    limiter.reserve({ clientId: attempt.clientId, address: attempt.address }).then(
      (counted) => {
        if (counted.retryAfter > 0) return this.#refuse(attempt, counted.retryAfter, account);
        refused();
        attempt.done(error);
      },
      (err: unknown) => {
        refused();
        attempt.done(err);
      },
    );
  }

  #refuse(attempt: Attempt, retryAfter: number, account?: AccountRecord): void {
    this.#parts.audit({ type: 'client.authentication_failed', reason: 'rate_limited', ...auditFields(attempt, account), ...(account ? { name: account.name } : {}) });
    this.#parts.telemetry.limiterRefused();
    attempt.done(new TooManyRequestsError(retryAfter));
  }
}

/**
 * The client ID and address for a failure's audit event. The client ID is shown only when it has the
 * form of one (or named an account): a client that put its secret, or part of it, in the client ID
 * field must not find it there. An outside token sent without a client ID is audited under the
 * account it was found to name. The address only when it is an IP address (a port some proxies add,
 * `203.0.113.7:51234` or `[2001:db8::1]:443`, left out): behind `trust proxy: true`, Express's `req.ip`
 * is whatever the caller wrote first in X-Forwarded-For.
 */
function auditFields(attempt: Attempt, account?: AccountRecord): { clientId?: string; malformedClientId?: string; address?: string } {
  const clientId = attempt.clientId ?? account?.clientId;
  const address = attempt.address === undefined ? undefined : ipAddressOf(attempt.address);
  return { ...(clientId !== undefined ? presentedClientId(clientId, account !== undefined) : {}), ...(address !== undefined ? { address } : {}) };
}


/** How often, at most, one credential's `lastUsedAt` is written. */
export const CREDENTIAL_USE_WRITE_INTERVAL_MS = 60_000;

/**
 * Records the last use of each credential, at most once a minute per credential (see the module
 * description).
 *
 * @example
 * ```ts
 * const recorder = new CredentialUseRecorder(store, 2000)
 * recorder.record(clientId, 'secret', secretId, new Date())
 * ```
 */
export class CredentialUseRecorder {
  readonly #written = new LRUCache<string, number>({ max: 50_000 });

  constructor(
    private readonly store: AccountStore,
    private readonly timeout: number,
    private readonly observer?: CallObserver,
  ) {}

  /** Records a use of the secret, key or federated credential `credentialId` (`kind` says which). */
  record(clientId: string, kind: CredentialKindName, credentialId: string, at: Date): void {
    const last = this.#written.get(credentialId);
    if (last !== undefined && at.getTime() - last < CREDENTIAL_USE_WRITE_INTERVAL_MS) return;
    this.#written.set(credentialId, at.getTime());
    const { store } = this;
    const method = CREDENTIAL_KINDS[kind].recordUse;
    const recordUse = store[method]?.bind(store);
    // A store that predates the kind cannot have authenticated with it; nothing to write.
    if (!recordUse) return;
    const write = callStore(() => recordUse(clientId, credentialId, at), this.timeout, method, this.observer);
    write.catch(() => {
      this.#written.delete(credentialId);
    });
  }
}

/**
 * How long before its expiry a credential used for a token raises `credential.expiring`: 14 days, in
 * seconds.
 *
 * @example
 * ```ts
 * import { CREDENTIAL_EXPIRING_LEAD_TIME } from 'express-service-accounts'
 *
 * const days = CREDENTIAL_EXPIRING_LEAD_TIME / 86_400 // 14
 * ```
 */
export const CREDENTIAL_EXPIRING_LEAD_TIME = 14 * 86_400;

/** The most credentials remembered as announced; past it the memory starts afresh (an event may then repeat). */
const MAX_REMEMBERED = 10_000;

/**
 * Announces each credential that obtains a token within the lead time of its expiry, once.
 *
 * @example
 * ```ts
 * const notices = new ExpiringCredentialNotices(runtime.event)
 * notices.used(account, { kind: 'secret', id: secretId }, new Date())
 * ```
 */
export class ExpiringCredentialNotices {
  readonly #announced = new Set<string>();
  readonly #event: (event: OperationalEventInput) => void;

  constructor(event: (event: OperationalEventInput) => void) {
    this.#event = event;
  }

  /** Called with each credential that obtained a token: announces it when it expires within the lead time, first time only. */
  used(account: AccountRecord, credential: { readonly kind: CredentialKindName; readonly id: string }, now: Date): void {
    const expiresAt = findOfKind(account, credential.kind, credential.id)?.expiresAt;
    if (expiresAt == null || expiresAt.getTime() - now.getTime() > CREDENTIAL_EXPIRING_LEAD_TIME * 1000) return;
    if (this.#announced.has(credential.id)) return;
    if (this.#announced.size >= MAX_REMEMBERED) this.#announced.clear();
    this.#announced.add(credential.id);
    this.#event({
      type: 'credential.expiring',
      clientId: account.clientId,
      name: account.name,
      kind: credential.kind,
      credentialId: credential.id,
      expiresAt,
    });
  }
}
