/**
 * @module admin-federated
 * The admin API's federated credentials: trust an outside issuer (a Kubernetes cluster, GitHub
 * Actions, a SPIFFE trust domain, any OpenID Connect provider) for one exact subject, and revoke that
 * trust. Each credential counts against the same cap as secrets and keys, and every change is
 * reported to {@link AdminContext.changed} at once and announced to the audit hook.
 */
import { FEDERATED_LIMITS, federatedUrlProblem } from '../federation/address-policy.js';
import { generateFederatedCredentialId } from '../credentials/generate-credentials.js';
import { containsSecretStart } from '../credentials/redact-secrets.js';
import type { NewFederatedCredentialRecord } from '../store/account-store.js';
import { federatedOf, isLiveTwin } from '../store/credential-kinds.js';
import type { AdminContext } from './admin-context.js';
import { resolveExpiry, type CredentialExpiryInput } from './credential-expiry.js';
import { addCredential, requireKindStore, revokeCredential, type CredentialOperationHelpers } from './admin-credential-life.js';
import { AdminError, federatedCredentialAlreadyRegistered, federatedCredentialNotFound } from './admin-errors.js';
import { summarizeFederated, type CreatedFederatedCredential, type RevokedFederatedCredential } from './federated-summaries.js';
import { unsafeCharacter } from './printable-text.js';
import { checkClaimConditions, sameClaimConditions } from './claim-condition-input.js';

/**
 * What {@link AdminApi.addFederatedCredential} takes: the outside issuer, the one subject it vouches
 * for, and optionally the audience its tokens must carry and where its keys are.
 *
 * @example
 * ```ts
 * import type { FederatedCredentialInput } from 'express-service-accounts'
 *
 * // A Kubernetes workload: the cluster's service account issuer, and the pod's service account.
 * const input: FederatedCredentialInput = {
 *   issuer: 'https://oidc.prod-cluster.example.com',
 *   subject: 'system:serviceaccount:payments:exporter',
 * }
 * const created = await sa.admin.addFederatedCredential(clientId, input)
 * ```
 */
export interface FederatedCredentialInput extends CredentialExpiryInput {
  /**
   * The outside issuer's identifier, exactly as its tokens carry it in `iss`: an https URL (plain
   * http only on a loopback host) of printable ASCII, without spaces, user name, password, query or
   * fragment; at most 600 characters.
   */
  issuer: string;
  /**
   * The one subject (`sub`) accepted, compared exactly: 1 to 1000 bytes (UTF-8) of printable
   * characters. Patterns are not supported: a `*` is refused.
   */
  subject: string;
  /**
   * The audience the outside token must carry in `aud`: 1 to 600 bytes (UTF-8) of printable characters. Left out
   * (or `null`), it is this server's issuer identifier, whatever that is when a token is checked.
   */
  audience?: string | null;
  /**
   * The issuer's JWK Set URL, for an issuer without OpenID Connect discovery (a Kubernetes cluster
   * often has none); same rules as `issuer`, except that it may have a query, up to 2048 characters. Left out, the keys are found through discovery or the
   * `federation.issuers` option.
   */
  jwksUri?: string | null;
  /**
   * Claim conditions: other claims the outside token must carry, with exactly these values, all of
   * them (for GitHub Actions `{ repository_owner: 'acme', environment: 'production' }`). A name is a
   * top-level claim, or a JSON Pointer (RFC 6901) for a nested one (`/kubernetes.io/namespace`); not
   * `iss`, `sub`, `aud`, `exp`, `nbf`, `iat` or `jti`. A string claim must equal the value; a boolean
   * claim matches `true` or `false`; any other claim never matches. At most 16 conditions, names up to
   * 200 and values up to 1000 bytes (UTF-8) of printable characters; patterns (`*`) are refused. Left
   * out, `null` or `{}`: none. See docs/federated-credentials.md#claim-conditions.
   */
  claims?: Record<string, string> | null;
}

/**
 * The federated credential methods of {@link AdminApi}.
 *
 * @example
 * ```ts
 * const { id, audience } = await sa.admin.addFederatedCredential(clientId, {
 *   issuer: 'https://token.actions.githubusercontent.com',
 *   subject: 'repo:acme/billing:ref:refs/heads/main',
 * })
 * console.log(`registered ${id}: request the workflow's token for audience ${audience}`)
 * await sa.admin.revokeFederatedCredential(clientId, id)
 * ```
 */
export interface FederatedOperations {
  /**
   * Trusts tokens of `issuer` for exactly `subject` (and `audience`) as a credential of the account.
   * Fails with `invalid_input` naming the field for a bad issuer, subject (a pattern among them),
   * audience, JWK Set URL or claim condition; with `federated_credential_already_registered` when a live federated
   * credential of the account has the same issuer, subject and audience; and with
   * `credential_limit_reached` when the account already has `maxSecretsPerAccount` live credentials
   * (secrets, keys and federated credentials together). Fails with `not_supported` when the store
   * cannot hold federated credentials, or does not say it keeps claim conditions and some are given;
   * rejects when a store gives the credential back without its conditions (it is revoked at once, so
   * it never trusts more than asked).
   */
  addFederatedCredential(clientId: string, input: FederatedCredentialInput): Promise<CreatedFederatedCredential>;
  /**
   * Revokes a federated credential: the issuer's tokens no longer authenticate the account through
   * it, and every token issued against it is refused, on every instance within 1 s. A second
   * revocation keeps the first `revokedAt`.
   */
  revokeFederatedCredential(clientId: string, credentialId: string): Promise<RevokedFederatedCredential>;
}

/** The admin API's own helpers the federated credential methods share. */
export type FederatedOperationHelpers = CredentialOperationHelpers;

/** The checked fields of a {@link FederatedCredentialInput}, as stored. */
/** The start of the error when the store cannot keep claim conditions (the test of the refusal matches it). */
const CANNOT_HOLD_CLAIMS = 'This account store cannot hold claim conditions of federated credentials';

type CheckedFederatedInput = Pick<NewFederatedCredentialRecord, 'issuer' | 'subject' | 'audience' | 'jwksUri' | 'claims'>;

function checkUrl(field: string, value: unknown, maxLength: number, allowQuery = false): string {
  const problem = federatedUrlProblem(value, maxLength, allowQuery);
  if (problem !== undefined) throw new AdminError('invalid_input', `${field} ${problem}`);
  return value as string;
}

function checkExactText(field: string, value: unknown, maxBytes: number): string {
  const rule = `${field} must be 1 to ${maxBytes} bytes (UTF-8) of printable characters`;
  if (typeof value !== 'string' || value.trim() === '' || Buffer.byteLength(value) > maxBytes) throw new AdminError('invalid_input', rule);
  const unsafe = unsafeCharacter(value);
  if (unsafe !== undefined) {
    throw new AdminError(
      'invalid_input',
      `${rule}: no control characters, bidirectional formatting characters, line or paragraph separators or unpaired surrogates (found ${unsafe})`,
    );
  }
  // Compared exactly with the token's claim, so a space copied along would make it never match.
  if (value.trim() !== value) throw new AdminError('invalid_input', `${field} must not begin or end with white space: it is compared exactly`);
  return value;
}

/**
 * Checks a {@link FederatedCredentialInput}. Throws `invalid_input` naming the field. The subject and
 * audience are stored exactly as given (they are compared exactly with the token's claims).
 *
 * @example
 * ```ts
 * const { issuer, subject, audience, jwksUri, claims } = checkFederatedInput({ issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' })
 * // audience and jwksUri are null, claims undefined
 * ```
 */
export function checkFederatedInput(input: FederatedCredentialInput): CheckedFederatedInput {
  if (typeof input !== 'object' || input === null) throw new AdminError('invalid_input', 'addFederatedCredential needs { issuer, subject }');
  const issuer = checkUrl('issuer', input.issuer, FEDERATED_LIMITS.issuer);
  const subject = checkExactText('subject', input.subject, FEDERATED_LIMITS.subjectBytes);
  if (subject.includes('*')) {
    throw new AdminError(
      'invalid_input',
      'subject must be one exact subject: patterns (*) are not supported, since a pattern would let every workload it matches ' +
        '(any branch, pull request or namespace) act as this account; register one credential per subject',
    );
  }
  const audience = input.audience === undefined || input.audience === null ? null : checkExactText('audience', input.audience, FEDERATED_LIMITS.audienceBytes);
  const jwksUri = input.jwksUri === undefined || input.jwksUri === null ? null : checkUrl('jwksUri', input.jwksUri, FEDERATED_LIMITS.jwksUri, true);
  const claims = checkClaimConditions(input.claims);
  // Long runs of letters and digits are real subjects and audiences (a client ID as subject), so only a
  // secret's prefixed start is refused: listings and audit events show these fields.
  for (const [field, value] of [['subject', subject], ['audience', audience ?? ''], ['claims', claims === undefined ? '' : JSON.stringify(claims)]] as const) {
    if (containsSecretStart(value)) {
      throw new AdminError(
        'invalid_input',
        `${field} must not contain a client secret (esas_...): it would be stored and shown in listings and audit logs. ` +
          'If a live secret was pasted, treat it as exposed and rotate it.',
      );
    }
  }
  return { issuer, subject, audience, jwksUri, ...(claims !== undefined && { claims }) };
}

/**
 * Builds {@link FederatedOperations} over the admin API's context and helpers.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 *
 * declare const context: AdminContext // the admin API's settings and hooks
 * declare const helpers: FederatedOperationHelpers // its `call` (readiness, timeout) and `requireAccount`
 * const federated = buildFederatedOperations(context, helpers)
 * const { id } = await federated.addFederatedCredential(clientId, { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' })
 * ```
 */
export function buildFederatedOperations(context: AdminContext, helpers: FederatedOperationHelpers): FederatedOperations {
  const { config, audit } = context;
  return {
    async addFederatedCredential(clientId, input) {
      const checked = checkFederatedInput(input);
      const expiresAt = resolveExpiry(input, config, 'expiresIn');
      if (config.allowedIssuers !== undefined && !config.allowedIssuers.has(checked.issuer)) {
        throw new AdminError(
          'invalid_input',
          `issuer ${checked.issuer} is not one this server accepts: add it to the server's federation.allowedIssuers option first`,
        );
      }
      if (config.allowedIssuers !== undefined && checked.jwksUri !== null) {
        throw new AdminError(
          'invalid_input',
          "jwksUri is not accepted on this server (it limits the issuers credentials may name): configure the issuer's JWK Set URL in its federation.issuers option instead",
        );
      }
      if (checked.claims !== undefined && context.config.store.keepsClaimConditions !== true) {
        throw new AdminError('not_supported', `${CANNOT_HOLD_CLAIMS}: it does not say keepsClaimConditions (see docs/writing-a-store.md)`);
      }
      const { account, record, stored } = await addCredential(context, helpers, clientId, {
        kind: 'federated',
        twin: (account) => federatedOf(account).find((existing) => isLiveTwin(existing, checked)),
        alreadyRegistered: federatedCredentialAlreadyRegistered,
        record: (): NewFederatedCredentialRecord => ({ id: generateFederatedCredentialId(), ...checked, createdAt: config.now(), expiresAt }),
      });
      if (!sameClaimConditions(checked.claims, stored.claims)) {
        // A store from before claim conditions dropped them: the credential would trust every workload of the subject.
        await helpers.call('revokeFederatedCredential', () => requireKindStore(context, 'federated').revokeFederatedCredential(clientId, record.id, config.now()));
        context.changed(clientId);
        throw new Error(`${CANNOT_HOLD_CLAIMS}: it returned the credential without them (see docs/writing-a-store.md)`);
      }
      audit({
        type: 'federated_credential.created',
        clientId,
        name: account.name,
        credentialId: record.id,
        issuer: record.issuer,
        subject: record.subject,
        ...(record.claims !== undefined && { claims: record.claims }),
        ...(expiresAt && { expiresAt }),
      });
      const { lastUsedAt: _lastUsedAt, revokedAt: _revokedAt, ...created } = summarizeFederated(stored, config.issuer);
      return { ...created, expiresAt: stored.expiresAt ?? null };
    },

    async revokeFederatedCredential(clientId, credentialId) {
      const { account, credential, revokedAt } = await revokeCredential(context, helpers, clientId, credentialId, 'federated', federatedCredentialNotFound);
      audit({
        type: 'federated_credential.revoked',
        clientId,
        name: account.name,
        credentialId,
        issuer: credential.issuer,
        subject: credential.subject,
        ...(credential.claims !== undefined && Object.keys(credential.claims).length > 0 && { claims: credential.claims }),
      });
      return { clientId, credentialId, revokedAt };
    },
  };
}
