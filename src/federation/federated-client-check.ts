/**
 * @module federated-client-check
 * Authenticates a client by a token its platform gave it (a Kubernetes service-account token, a GitHub
 * Actions OIDC token, a SPIFFE JWT-SVID): a client assertion (RFC 7523 §2.2) whose `iss` is an outside
 * issuer. The account is the one holding a live federated credential for exactly that issuer and
 * subject (or the one `client_id` names, which must hold one). Only then are the issuer's keys looked up,
 * so a token naming an issuer nobody trusts never causes a request. The token must carry the
 * credential's audience, be signed by the issuer, be within its lifetime and no longer-lived than
 * allowed, and, when it has a `jti`, be used once. Framework-free; the client authenticator decides
 * what a failure is answered and counts it.
 */
import type { JWTPayload, JWTVerifyOptions, JWTVerifyResult } from 'jose';
import type { ClientAuthenticationFailure } from '../errors.js';
import type { CallObserver } from '../observability/dependency-monitor.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord, FederatedCredentialRecord } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import { federatedOf, type FederatedCredentialStore } from '../store/federated-credential-store.js';
import { isClientIdLookup, isLookupValue } from '../store/lookup-values.js';
import { withinAssertionTimes } from '../assertion-times.js';
import { FEDERATED_LIMITS, isFederatedUrlText, type ResolvedFederationConfig } from './federation-options.js';
import type { FederatedSubjects } from './federated-subjects.js';


/** The issuer and subject an outside token names, read before its signature is checked. */
export interface FederatedTokenNames {
  readonly issuer: string;
  readonly subject: string;
}

/**
 * The issuer and subject of an assertion that may be an outside issuer's token: both strings, the
 * issuer unlike the subject (a key-pair assertion names the client in both).
 *
 * @example
 * ```ts
 * declare const payload: { iss?: unknown; sub?: unknown } // a client assertion's claims, unverified
 * federatedTokenNames(payload) // { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' }
 * ```
 */
export function federatedTokenNames(payload: { readonly iss?: unknown; readonly sub?: unknown }): FederatedTokenNames | undefined {
  const { iss, sub } = payload;
  if (typeof iss !== 'string' || typeof sub !== 'string' || iss === sub) return undefined;
  return { issuer: iss, subject: sub };
}

/**
 * Whether an outside token's issuer and subject could name a registered credential at all (what a
 * credential may hold: see `FEDERATED_LIMITS`). Others are untrusted without any store call.
 */
function couldBeTrusted(names: FederatedTokenNames): boolean {
  const { issuer, subject } = names;
  return (
    isFederatedUrlText(issuer, FEDERATED_LIMITS.issuer) &&
    isLookupValue(subject, FEDERATED_LIMITS.subjectBytes) &&
    Buffer.byteLength(subject) <= FEDERATED_LIMITS.subjectBytes
  );
}

/**
 * Verifies an outside token with its issuer's keys (issuer-key-sets.ts): the result when the signature
 * and `options` hold, `undefined` when not; rejects when the keys are needed and cannot be fetched.
 */
export interface FederatedKeyVerifier {
  verify(token: string, source: { readonly issuer: string; readonly jwksUri?: string | null }, options: JWTVerifyOptions): Promise<JWTVerifyResult | undefined>;
}

/** What the check found: the account and the credential it authenticated with, or why not. */
export type FederatedOutcome =
  | { readonly account: AccountRecord; readonly credential: FederatedCredentialRecord }
  | { readonly failure: ClientAuthenticationFailure; readonly account?: AccountRecord };

/** What the check works with, built once by the token endpoint. */
export interface FederatedClientCheckParts {
  readonly store: FederatedCredentialStore;
  readonly accounts: AccountCache;
  readonly subjects: FederatedSubjects;
  readonly keySets: FederatedKeyVerifier;
  readonly settings: ResolvedFederationConfig;
  /** This server's issuer identifier: the audience of a credential that names none. */
  readonly issuerIdentifier: string;
  readonly clockTolerance: number;
  readonly storeTimeout: number;
  readonly storeCalls?: CallObserver;
}

/** See the module description. */
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
    const clientIds = clientId !== undefined ? [clientId] : await subjects.clientIds(names.issuer, names.subject);
    if (clientIds.length === 0) return { failure: 'untrusted_token' };
    // Several accounts trust this workload: the request must say which it acts as.
    if (clientIds.length > 1) return { failure: 'ambiguous_token' };
    const account = await accounts.get(clientIds[0]!);
    if (!account) return { failure: clientId !== undefined ? 'unknown_client' : 'untrusted_token' };
    const trusting = federatedOf(account).filter((credential) => credential.issuer === names.issuer && credential.subject === names.subject);
    const live = trusting.filter((credential) => credential.revokedAt === null);
    if (live.length === 0) {
      if (clientId === undefined) subjects.forget();
      return { failure: trusting.length > 0 ? 'revoked_federated_credential' : 'untrusted_token', account };
    }
    // Usually one credential; several only with other audiences or key URLs. One whose issuer keys
    // cannot be fetched now does not stop another from verifying the token.
    let unavailable: unknown;
    for (const credential of live) {
      let payload: JWTPayload | undefined;
      try {
        payload = await this.#verify(assertion, credential, now);
      } catch (err) {
        unavailable ??= err;
        continue;
      }
      if (!payload) continue;
      if (!account.enabled) return { failure: 'disabled_account', account };
      if (payload.jti !== undefined && !(await this.#firstUse(names.issuer, payload, now))) return { failure: 'replayed_assertion', account };
      return { account, credential };
    }
    if (unavailable !== undefined) throw unavailable;
    return { failure: 'invalid_assertion', account };
  }

  /** The token's claims when the issuer signed it for this credential and every time rule holds. */
  async #verify(assertion: string, credential: FederatedCredentialRecord, now: Date): Promise<JWTPayload | undefined> {
    const { keySets, issuerIdentifier, clockTolerance, settings } = this.parts;
    const verified = await keySets.verify(
      assertion,
      { issuer: credential.issuer, jwksUri: credential.jwksUri },
      {
        issuer: credential.issuer,
        subject: credential.subject,
        audience: credential.audience ?? issuerIdentifier,
        requiredClaims: ['exp'],
        currentDate: now,
        clockTolerance,
      },
    );
    if (!verified) return undefined;
    const { aud, exp, iat, jti } = verified.payload;
    // The credential's audience as the token's sole audience: a token made out to other parties too
    // could be replayed here by any of them.
    if (Array.isArray(aud) && aud.length !== 1) return undefined;
    if (!withinAssertionTimes({ exp, iat }, { now, clockTolerance, maxLifetime: settings.maxTokenLifetime })) return undefined;
    if (jti !== undefined && (typeof jti !== 'string' || jti.length === 0)) return undefined;
    return verified.payload;
  }

  /** Records the token's `jti` under its issuer until it could no longer be accepted: `false` for a replay. */
  #firstUse(issuer: string, payload: JWTPayload, now: Date): Promise<boolean> {
    const { store, storeTimeout, storeCalls, clockTolerance } = this.parts;
    const expiresAt = new Date(((payload.exp as number) + clockTolerance) * 1000);
    return callStore(() => store.consumeAssertionId(issuer, payload.jti as string, expiresAt, now), storeTimeout, 'consumeAssertionId', storeCalls);
  }
}
