/**
 * @module federated-summaries
 * What the admin API returns for federated credentials: what each trusts (issuer, exact subject,
 * audience) and its dates. Nothing in them is secret. Re-exported by `admin-summaries.ts`.
 */
import type { FederatedCredentialRecord } from '../store/account-store.js';

/**
 * A federated credential as listed: which outside issuer's tokens, for which exact subject and
 * audience, authenticate the account, and its dates.
 *
 * @example
 * ```ts
 * import type { FederatedCredentialSummary } from 'express-service-accounts'
 *
 * // Which live credentials trust GitHub Actions?
 * const account = await sa.admin.getAccount(clientId)
 * const github: FederatedCredentialSummary[] = (account?.federated ?? []).filter(
 *   (credential) => credential.revokedAt === null && credential.issuer === 'https://token.actions.githubusercontent.com',
 * )
 * ```
 */
export interface FederatedCredentialSummary {
  readonly id: string;
  /** The outside issuer's identifier, as its tokens carry it in `iss`. */
  readonly issuer: string;
  /** The one subject (`sub`) accepted, compared exactly. */
  readonly subject: string;
  /**
   * The audience the outside token must carry in `aud`. A credential registered without one follows
   * this server's issuer identifier, shown here; `null` only when the admin API does not know it
   * (`createAdminApi` without its `issuer` option).
   */
  readonly audience: string | null;
  /** The issuer's JWK Set URL, present only when one was given at registration (else keys come from discovery). */
  readonly jwksUri?: string;
  /**
   * The claim conditions: other claims the outside token must carry with exactly these values;
   * present only when the credential has some.
   */
  readonly claims?: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
  /** When it stops working on its own; `null`: never. */
  readonly expiresAt: Date | null;
}

/**
 * Result of {@link AdminApi.addFederatedCredential}: the credential's ID (carried by the tokens it
 * obtains) and what it trusts.
 *
 * @example
 * ```ts
 * import type { CreatedFederatedCredential } from 'express-service-accounts'
 *
 * const created: CreatedFederatedCredential = await sa.admin.addFederatedCredential(clientId, {
 *   issuer: 'https://token.actions.githubusercontent.com',
 *   subject: 'repo:acme/billing:ref:refs/heads/main',
 * })
 * console.log(`registered ${created.id}; tokens must be issued for ${created.audience}`)
 * ```
 */
export interface CreatedFederatedCredential extends Omit<FederatedCredentialSummary, 'lastUsedAt' | 'revokedAt'> {
  /** As in {@link FederatedCredentialSummary.audience}. */
  readonly audience: string | null;
  /** Present only when given. */
  readonly jwksUri?: string;
  /** As in {@link FederatedCredentialSummary.claims}: present only when given. */
  readonly claims?: Readonly<Record<string, string>>;
}

/**
 * Result of {@link AdminApi.revokeFederatedCredential}.
 *
 * @example
 * ```ts
 * import type { RevokedFederatedCredential } from 'express-service-accounts'
 *
 * // The outside tokens are refused from now on, and so are the tokens the credential obtained, on every instance within a second.
 * declare const credentialId: string
 * const revoked: RevokedFederatedCredential = await sa.admin.revokeFederatedCredential(clientId, credentialId)
 * console.log(`${revoked.clientId}: ${revoked.credentialId} revoked at ${revoked.revokedAt.toISOString()}`)
 * ```
 */
export interface RevokedFederatedCredential {
  readonly clientId: string;
  readonly credentialId: string;
  readonly revokedAt: Date;
}

/**
 * A federated credential as listed. `issuer` is the issuer identifier of the server the admin API
 * belongs to, shown as the audience of a credential stored without one (`null` when unknown).
 *
 * @example
 * ```ts
 * import { federatedOf } from '../store/credential-kinds.js'
 *
 * const shown = federatedOf(account).map((credential) => summarizeFederated(credential, 'https://api.example.com'))
 * ```
 */
export function summarizeFederated(credential: FederatedCredentialRecord, issuer: string | undefined): FederatedCredentialSummary {
  return {
    id: credential.id,
    issuer: credential.issuer,
    subject: credential.subject,
    audience: credential.audience ?? issuer ?? null,
    ...(credential.jwksUri !== null && { jwksUri: credential.jwksUri }),
    ...(credential.claims !== undefined && Object.keys(credential.claims).length > 0 && { claims: { ...credential.claims } }),
    createdAt: credential.createdAt,
    lastUsedAt: credential.lastUsedAt,
    revokedAt: credential.revokedAt,
    expiresAt: credential.expiresAt ?? null,
  };
}
