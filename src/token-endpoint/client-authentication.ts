/**
 * @module client-authentication
 * The client-authentication step of the token endpoint: the failure limiter (a repeat client is
 * checked, also while its account is read again; any other attempt counted in advance and given back
 * on success), the bcrypt gate's refusal of a key whose share is full (503 before any store read), the
 * passport strategies, then the client recorded on the context, or 401 `invalid_client` (challenging
 * with Basic when the request has an `Authorization` header, RFC 6749 §5.2) and an audit event with
 * the reason.
 */
import { InvalidClientError, TooManyRequestsError, type ClientAuthenticationFailure } from '../errors.js';
import type { AuditEventInput } from '../audit/audit-events.js';
import type { Telemetry } from '../observability/telemetry.js';
import { presentedClientId } from '../secrets/redact-secrets.js';
import type { SecretUseRecorder } from '../secrets/secret-use-recorder.js';
import type { AccountRecord } from '../store/account-store.js';
import { secretCandidate, type ClientCredentialsCheck } from './client-credentials-check.js';
import { createClientStrategies, type RunClientStrategy } from './client-strategies.js';
import type { FailureKeys, FailureLimiter } from './failure-limiter.js';
import { limiterAddress } from './limiter-address.js';
import type { Step, TokenRequestContext } from './token-request-context.js';

/** What the step needs, built by the token endpoint. */
export interface ClientAuthenticationParts {
  readonly check: ClientCredentialsCheck;
  readonly limiter: FailureLimiter | undefined;
  /** IPv6 addresses are limited per prefix of this many bits. */
  readonly ipv6Prefix: number;
  readonly secretUse: SecretUseRecorder;
  readonly audit: (event: AuditEventInput) => void;
  readonly telemetry: Pick<Telemetry, 'limiterRefused'>;
  readonly now: () => Date;
}

/** See the module description. */
class ClientAuthentication {
  readonly #parts: ClientAuthenticationParts;
  readonly #strategies: RunClientStrategy;

  constructor(parts: ClientAuthenticationParts) {
    this.#parts = parts;
    this.#strategies = createClientStrategies((context, done) => {
      if (context.remembered) return done(null, context.remembered);
      const { candidate } = context;
      if (!candidate) {
        context.failure = { reason: 'malformed_credentials' };
        return done(null, false);
      }
      parts.check.verify(candidate, context.limiterAddress).then((outcome) => {
        if (outcome.ok) return done(null, outcome.client);
        context.failure = outcome;
        done(null, false);
      }, done);
    });
  }

  run(context: TokenRequestContext, next: (err?: unknown) => void): void {
    const { limiter, ipv6Prefix } = this.#parts;
    const { credentials } = context.parameters;
    const address = context.address;
    // The bcrypt gate keys addresses as the limiter does, so one IPv6 prefix gets one turn and one share.
    context.limiterAddress = address === undefined ? undefined : limiterAddress(address, ipv6Prefix);
    if ('secret' in credentials) {
      context.candidate = secretCandidate(credentials.clientId, credentials.secret);
      context.remembered = context.candidate && this.#parts.check.remembered(context.candidate);
    }
    if (!limiter) return this.#authenticate(context, next);
    const keys = failureKeys(context);
    const { candidate, remembered } = context;
    if (remembered) {
      // A repeat client's exact secret, verified without bcrypt: not a guess, so only checked, not counted.
      // #checkThen written out: this is every repeat request's path, and it needs no closure when nothing is on record.
      const limited = limiter.check(keys);
      if (limited === 0) return this.#authenticate(context, next); // nothing on record for either key: no store call, no wait
      return this.#afterCheck(limited, context, next, () => this.#authenticate(context, next));
    }
    if (candidate && this.#parts.check.isKnownSecret(candidate)) {
      // The same exact secret, but the account is not in the cache (its entry expired, or a change to it
      // dropped it): read it once, then decide as above. Counting these in advance would answer a busy
      // client's concurrent requests 429 while the read is in flight.
      return this.#checkThen(limiter, keys, context, next, () =>
        this.#parts.check.load(candidate).then(() => {
          context.remembered = this.#parts.check.remembered(candidate);
          if (context.remembered) return this.#authenticate(context, next);
          this.#reserve(limiter, keys, context, next); // no longer live: decided as any other attempt
        }, next),
      );
    }
    this.#reserve(limiter, keys, context, next);
  }

  /** Refuses (429) when a key is already at the limit, else goes on with `then`. */
  #checkThen(limiter: FailureLimiter, keys: FailureKeys, context: TokenRequestContext, next: (err?: unknown) => void, then: () => void): void {
    const limited = limiter.check(keys);
    if (limited === 0) return then();
    this.#afterCheck(limited, context, next, then);
  }

  #afterCheck(limited: Promise<number>, context: TokenRequestContext, next: (err?: unknown) => void, then: () => void): void {
    limited.then((retryAfter) => (retryAfter > 0 ? this.#refuse(context, next, retryAfter) : then()), next);
  }

  /** Counts the attempt before any bcrypt work, so a burst cannot pass the limit all at once (docs/security.md). */
  #reserve(limiter: FailureLimiter, keys: FailureKeys, context: TokenRequestContext, next: (err?: unknown) => void): void {
    limiter.reserve(keys).then((counted) => {
      if (counted.retryAfter > 0) return this.#refuse(context, next, counted.retryAfter);
      context.reservation = counted;
      this.#authenticate(context, next);
    }, next);
  }

  #authenticate(context: TokenRequestContext, next: (err?: unknown) => void): void {
    const { credentials } = context.parameters;
    if (credentials.method === 'none') return this.#fail(context, next, 'missing_credentials');
    if (!('secret' in credentials)) return this.#fail(context, next, 'malformed_credentials');
    const busy = context.remembered || !context.candidate ? undefined : this.#parts.check.busy(context.candidate, context.limiterAddress);
    if (busy) {
      context.reservation?.release(); // undecided (503): not a failure
      return next(busy);
    }
    this.#strategies(context, (err, client) => {
      if (err) {
        context.reservation?.release(); // undecided (503): not a failure
        return next(err);
      }
      if (!client) {
        const failure = context.failure ?? { reason: 'malformed_credentials' };
        return this.#fail(context, next, failure.reason, failure.account);
      }
      context.reservation?.release();
      context.client = client as TokenRequestContext['client'];
      this.#parts.secretUse.record(context.client.account.clientId, context.client.secret.id, this.#parts.now());
      next();
    });
  }

  #fail(context: TokenRequestContext, next: (err?: unknown) => void, reason: ClientAuthenticationFailure, account?: AccountRecord): void {
    const { limiter, audit } = this.#parts;
    audit({ type: 'client.authentication_failed', reason, ...auditFields(context, account !== undefined), ...(account ? { name: account.name } : {}) });
    const error = new InvalidClientError(reason, { authorizationHeader: context.req.headers.authorization !== undefined });
    // A counted attempt that failed keeps its count; a failure that was not counted in advance is counted now.
    if (context.reservation || !limiter) return next(error);
    limiter.reserve(failureKeys(context)).then((counted) => {
      if (counted.retryAfter <= 0) return next(error);
      this.#parts.telemetry.limiterRefused();
      next(new TooManyRequestsError(counted.retryAfter));
    }, next);
  }

  #refuse(context: TokenRequestContext, next: (err?: unknown) => void, retryAfter: number): void {
    this.#parts.audit({ type: 'client.authentication_failed', reason: 'rate_limited', ...auditFields(context) });
    this.#parts.telemetry.limiterRefused();
    next(new TooManyRequestsError(retryAfter));
  }
}

/** The keys an attempt is counted under: the presented client ID and the client's address. */
function failureKeys(context: TokenRequestContext): FailureKeys {
  const { credentials } = context.parameters;
  return { clientId: 'clientId' in credentials ? credentials.clientId : undefined, address: context.address };
}

/**
 * The client ID and address for a failure's audit event. The client ID is shown only when it has the
 * form of one (or named an account): a client that put its secret, or part of it, in the client ID
 * field must not find it there.
 */
function auditFields(context: TokenRequestContext, known = false): { clientId?: string; malformedClientId?: string; address?: string } {
  const { clientId, address } = failureKeys(context);
  return { ...(clientId !== undefined ? presentedClientId(clientId, known) : {}), ...(address !== undefined ? { address } : {}) };
}

/** Returns the client-authentication step. */
export function createClientAuthentication(parts: ClientAuthenticationParts): Step {
  const step = new ClientAuthentication(parts);
  return (context, next) => step.run(context, next);
}
