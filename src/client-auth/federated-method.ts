/**
 * @module federated-method
 * The federated method, decided wholly here: a client authenticates by a token its platform gave it
 * (a Kubernetes service-account token, a GitHub Actions OIDC token, a SPIFFE JWT-SVID), a client
 * assertion (RFC 7523 §2.2) whose `iss` is an outside issuer. The account is the one holding a live
 * federated credential for exactly that issuer and subject (or the one `client_id` names, which must
 * hold one). Only then are the issuer's keys looked up (federation/issuer-key-sets.ts), so a token
 * naming an issuer nobody trusts never causes a request; a few of them are tried on it (the bounded
 * key-try loop of key-tries.ts, {@link verifyIssuerToken}, one budget for the token across its
 * credentials). The token must carry the credential's
 * audience as its sole audience, be signed by the issuer, be within its lifetime and no longer-lived
 * than allowed, meet every claim condition of the credential (claim-conditions.ts), and, when it has
 * a `jti`, be used once (assertion-rules.ts).
 *
 * Checked against the failure limiter, not counted in advance, and every failure counted when
 * decided, as for key-pair assertions. Which accounts trust an issuer and subject is looked up and
 * remembered in federated-subjects.ts; this file verifies the token for their credentials.
 */
import { decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';
import type { AssertionRefusal, ClientAuthenticationFailure } from '../errors.js';
import { describeError } from '../observability/operational-events.js';
import type { Runtime } from '../create-runtime.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord, FederatedCredentialRecord } from '../store/account-store.js';
import { federatedOf, hasExpired, supportsFederatedCredentials } from '../store/credential-kinds.js';
import { FEDERATED_LIMITS, isFederatedUrlText } from '../federation/address-policy.js';
import type { ResolvedFederationConfig } from '../federation/federation-options.js';
import { IssuerKeySets, type FederatedKeySource, type KeySetVerification } from '../federation/issuer-key-sets.js';
import { verifiableAlgorithms, type KeySet } from '../federation/key-set.js';
import { claimRefusalOf, firstUse, hasUsableJti, timesRefusalOf, type AssertionReplayParts } from './assertion-rules.js';
import type { Attempt, Attempts } from './client-authenticator.js';
import { unmetClaimCondition } from './claim-conditions.js';
import { FederatedSubjects } from './federated-subjects.js';
import { keyAttemptOf, tryCandidateKeys, TokenKeyTries } from './key-tries.js';
import { isClientIdLookup, isLookupValue, type AuthenticationDone, type FederatedCredentials, type FederatedTokenNames } from './presented-credentials.js';

/**
 * Whether an outside token's issuer and subject could name a registered credential at all (what a
 * credential may hold: see `FEDERATED_LIMITS`). Others are untrusted without any store call.
 */
function couldBeTrusted(names: FederatedTokenNames): boolean {
  const { issuer, subject } = names;
  return isFederatedUrlText(issuer, FEDERATED_LIMITS.issuer) && isLookupValue(subject, FEDERATED_LIMITS.subjectBytes) && Buffer.byteLength(subject) <= FEDERATED_LIMITS.subjectBytes;
}

/**
 * Verifies `token` as one of `source.issuer`'s with that issuer's keys (held by `keySets`): its signature
 * (asymmetric algorithms only, whatever `options.algorithms` says; a token that could never verify
 * causes no fetch), its `iss`, and the claims `options` asks for (at `options.currentDate`, by default
 * the key sets' clock). The keys tried are the bounded loop's: those with the token's `kid`, or without
 * one every key suiting its algorithm, when at most `MAX_CANDIDATE_KEYS`. `undefined` when not valid;
 * rejects only when keys are needed and cannot be fetched. `onRefused` gets jose's error when a key made
 * the signature but a claim failed. `tries` is shared by the calls made for one token (one per
 * credential), so the bound holds for the token, whatever the number of credentials and key sets.
 *
 * @example
 * ```ts
 * import { IssuerKeySets } from '../federation/issuer-key-sets.js'
 *
 * const keySets = new IssuerKeySets({ settings: config.federation, now: () => new Date() })
 * const verified = await verifyIssuerToken(keySets, token, { issuer: 'https://token.actions.githubusercontent.com' }, { audience: issuer })
 * ```
 */
export async function verifyIssuerToken(
  keySets: Pick<IssuerKeySets, 'verify' | 'now'>,
  token: string,
  source: FederatedKeySource,
  options: JWTVerifyOptions,
  onRefused?: (error: unknown) => void,
  tries: TokenKeyTries = new TokenKeyTries(),
): Promise<JWTVerifyResult | undefined> {
  const algorithms = verifiableAlgorithms(token, options.algorithms);
  if (algorithms === undefined) return undefined;
  const { alg, kid } = decodeProtectedHeader(token); // read by verifiableAlgorithms: alg is one of them
  const verifyOptions: JWTVerifyOptions = { ...options, algorithms, issuer: source.issuer, currentDate: options.currentDate ?? keySets.now() };
  let keySetsGiven = 0;
  return keySets.verify(source, (keySet) => {
    // A second key set for this source is the one fetched again (the issuer may have rotated its keys).
    if (++keySetsGiven > 1) tries.refetched();
    return verifyWithKeySet(token, keySet, alg!, kid, verifyOptions, onRefused, tries);
  });
}

/** {@link verifyIssuerToken} with one of the issuer's key sets: the bounded loop over its candidate keys. */
async function verifyWithKeySet(
  token: string,
  keySet: KeySet,
  alg: string,
  kid: unknown,
  options: JWTVerifyOptions,
  onRefused: ((error: unknown) => void) | undefined,
  tries: TokenKeyTries,
): Promise<KeySetVerification<JWTVerifyResult>> {
  const outcome = await tryCandidateKeys(keySet.keysFor(alg), { kid, named: (key, id) => key.kid === id, unnamedFallsBack: false }, async (key) => {
    const keyObject = keySet.keyObject(key);
    // A key that did not make this token's signature for one credential cannot for another: not checked
    // twice; and past the bound, no other key of any credential's key set is checked.
    if (keyObject === undefined || !tries.mayTry(keyObject)) return 'other_key';
    try {
      return { verified: await jwtVerify(token, keyObject, options) };
    } catch (error) {
      const attempt = keyAttemptOf(error);
      if (attempt === 'refused') onRefused?.(error);
      else tries.unsigned(keyObject);
      return attempt;
    }
  });
  if ('key' in outcome) return { result: outcome.verified, mayBeRotated: false };
  // The issuer may have rotated its keys: none has the token's kid, or none tried made a kid-less token's signature.
  return { result: undefined, mayBeRotated: outcome.failure === 'no_key' || (outcome.failure === 'not_verified' && !outcome.signed && typeof kid !== 'string') };
}

/** What the check found: the account and the credential it authenticated with, or why not. */
export type FederatedOutcome =
  | { readonly account: AccountRecord; readonly credential: FederatedCredentialRecord }
  | {
      readonly failure: ClientAuthenticationFailure;
      readonly account?: AccountRecord;
      /** For `claim_condition_failed`: the name of the condition the token did not meet. */
      readonly claim?: string;
    };

/** What the check works with, built once per token endpoint. */
export interface FederatedClientCheckParts {
  readonly accounts: AccountCache;
  readonly subjects: Pick<FederatedSubjects, 'clientIds' | 'forget'>;
  readonly keySets: Pick<IssuerKeySets, 'verify' | 'now'>;
  readonly settings: ResolvedFederationConfig;
  /** This server's issuer identifier: the audience of a credential that names none. */
  readonly issuerIdentifier: string;
  /** Where each `jti` is recorded once, namespaced by issuer. */
  readonly replays: AssertionReplayParts;
}

/** The federated decision: which account and credential an outside token authenticates as, or why none. */
export class FederatedClientCheck {
  constructor(private readonly parts: FederatedClientCheckParts) {}

  /**
   * Checks `assertion`, which names `names`, sent with `clientId` when the request had one. Rejects
   * (503) only when the store or the issuer's keys cannot be reached.
   */
  async check(assertion: string, names: FederatedTokenNames, clientId: string | undefined, now: Date): Promise<FederatedOutcome> {
    const { accounts, subjects } = this.parts;
    if (!couldBeTrusted(names)) return { failure: 'untrusted_token' };
    if (clientId !== undefined && !isClientIdLookup(clientId)) return { failure: 'unknown_client' };
    const clientIds = clientId !== undefined ? [clientId] : await subjects.clientIds(names.issuer, names.subject, now);
    if (clientIds.length === 0) return { failure: 'untrusted_token' };
    // Several accounts trust this workload: the request must say which it acts as.
    if (clientIds.length > 1) return { failure: 'ambiguous_token' };
    const account = await accounts.get(clientIds[0]!);
    if (!account) return { failure: clientId !== undefined ? 'unknown_client' : 'untrusted_token' };
    const trusting = federatedOf(account).filter((credential) => credential.issuer === names.issuer && credential.subject === names.subject);
    const unrevoked = trusting.filter((credential) => credential.revokedAt === null);
    // Past its expiresAt, a credential is refused like a revoked one (and its issuer's keys are not fetched for it).
    const live = unrevoked.filter((credential) => !hasExpired(credential, now.getTime()));
    if (live.length === 0) {
      // The remembered answer named an account that no longer trusts the pair: ask the store again next
      // time, for this pair only (the token is not verified yet, so it must not clear anyone else's).
      if (clientId === undefined) subjects.forget(names.issuer, names.subject);
      const failure = unrevoked.length > 0 ? 'expired_credential' : trusting.length > 0 ? 'revoked_federated_credential' : 'untrusted_token';
      return { failure, account };
    }
    // Usually one credential; several only with other audiences or key URLs. One whose issuer keys
    // cannot be fetched now does not stop another from verifying the token.
    let unavailable: unknown;
    let refusal: AssertionRefusal | undefined;
    let unmetClaim: string | undefined;
    // The keys tried on the token, shared by the credentials: each key that did not make its signature
    // is checked once per token, and only a few such keys in all.
    const tries = new TokenKeyTries();
    for (const credential of live) {
      let payload: JWTPayload | AssertionRefusal;
      try {
        payload = await this.#verify(assertion, credential, account.clientAccountId, now, tries);
      } catch (err) {
        unavailable ??= err;
        continue;
      }
      if (typeof payload === 'string') {
        refusal ??= payload;
        continue;
      }
      // Checked on the verified claims only, so a forged token learns nothing of the conditions.
      const unmet = unmetClaimCondition(credential.claims, payload);
      if (unmet !== undefined) {
        unmetClaim ??= unmet;
        continue;
      }
      if (!account.enabled) return { failure: 'disabled_account', account };
      if (payload.jti !== undefined && !(await firstUse(this.parts.replays, names.issuer, payload, now))) return { failure: 'replayed_assertion', account };
      return { account, credential };
    }
    if (unavailable !== undefined) throw unavailable;
    // A token the issuer signed for this credential but for a workload it does not trust says most.
    if (unmetClaim !== undefined) return { failure: 'claim_condition_failed', account, claim: unmetClaim };
    return { failure: refusal ?? 'invalid_assertion', account };
  }

  /**
   * The token's claims when the issuer signed it for this credential and every rule holds; else the
   * rule it broke (`invalid_assertion` when no key of the issuer verified it).
   */
  async #verify(assertion: string, credential: FederatedCredentialRecord, owner: string | null, now: Date, tries: TokenKeyTries): Promise<JWTPayload | AssertionRefusal> {
    const { keySets, issuerIdentifier, settings } = this.parts;
    const { clockTolerance } = this.parts.replays;
    let claimError: unknown;
    const { issuer, subject, jwksUri } = credential;
    const options = { issuer, subject, audience: credential.audience ?? issuerIdentifier, requiredClaims: ['exp'], currentDate: now, clockTolerance };
    // The client account owns the source's place in the key cache: one cannot push out another's issuers.
    const verified = await verifyIssuerToken(keySets, assertion, { issuer, jwksUri, owner }, options, (error) => (claimError = error), tries);
    if (!verified) return claimError === undefined ? 'invalid_assertion' : claimRefusalOf(claimError);
    const { aud, exp, iat, jti } = verified.payload;
    // The credential's audience as the token's sole audience (jose checked it is among them): a token
    // made out to other parties too could be replayed here by any of them.
    if (Array.isArray(aud) && aud.length !== 1) return 'wrong_audience';
    const times = timesRefusalOf({ exp, iat }, { now, clockTolerance, maxLifetime: settings.maxTokenLifetime });
    if (times) return times;
    if (!hasUsableJti(jti, false)) return 'invalid_assertion';
    return verified.payload;
  }
}

/** See the module description. One per token endpoint; none when the store holds no federated credentials. */
export class FederatedMethod {
  readonly #attempts: Attempts;
  readonly #check: FederatedClientCheck | undefined;
  readonly #now: () => Date;

  constructor(attempts: Attempts, check: FederatedClientCheck | undefined, now: () => Date) {
    this.#attempts = attempts;
    this.#check = check;
    this.#now = now;
  }

  /** Authenticates a request that presented an outside issuer's token. */
  authenticate(credentials: FederatedCredentials, address: string | undefined, done: AuthenticationDone): void {
    const attempts = this.#attempts;
    const attempt: Attempt = { credentials, clientId: credentials.clientId, address, done };
    attempts.checked(attempt, () => {
      const check = this.#check;
      // A store without federated credentials trusts no outside issuer (and no request is made).
      if (!check) return attempts.fail(attempt, 'untrusted_token');
      check.check(credentials.assertion, credentials.names, credentials.clientId, this.#now()).then(
        (outcome) => {
          if ('failure' in outcome) return attempts.fail(attempt, outcome.failure, outcome.account, outcome.claim);
          attempts.succeed({ account: outcome.account, credential: { kind: 'federated', id: outcome.credential.id } }, done, attempt);
        },
        (err: unknown) => attempts.undecided(attempt, err),
      );
    });
  }
}

/**
 * The federated check of `runtime`'s instance, with its subject lookup, its issuer key sets and their
 * reports (`federation.issuer_unavailable` and `_recovered` events, the key-fetch failure metric), or
 * `undefined` when its store holds no federated credentials.
 *
 * @example
 * ```ts
 * import type { Runtime } from '../create-runtime.js'
 *
 * declare const runtime: Runtime
 * const check = createFederatedClientCheck(runtime) // handed to the federated method
 * ```
 */
export function createFederatedClientCheck(runtime: Runtime): FederatedClientCheck | undefined {
  const { config, accounts, storeCalls, telemetry, event } = runtime;
  const store = config.store;
  if (!supportsFederatedCredentials(store)) return undefined;
  const keySets = new IssuerKeySets({
    settings: config.federation,
    now: config.now,
    observer: {
      unavailable: (issuer, error) => event({ type: 'federation.issuer_unavailable', issuer, error: describeError(error) }),
      recovered: (issuer, downtimeMs) => event({ type: 'federation.issuer_recovered', issuer, downtimeMs }),
      fetchFailed: (issuer) => telemetry.federatedKeyFetchFailed(issuer),
    },
  });
  return new FederatedClientCheck({
    accounts,
    subjects: new FederatedSubjects({ store, accounts, storeTimeout: config.storeTimeout, storeCalls }),
    keySets,
    settings: config.federation,
    issuerIdentifier: config.issuer,
    replays: { store, storeTimeout: config.storeTimeout, storeCalls, clockTolerance: config.clockTolerance },
  });
}
