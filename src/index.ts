/**
 * @module express-service-accounts
 * OAuth 2.0 client credentials for Express: service accounts, hashed rotating secrets, a token
 * endpoint and a bearer check with revocation that reaches every instance within a second.
 */
import './express-augmentation.js';

export { createServiceAccounts, type ServiceAccounts } from './service-accounts.js';
export type { ServiceAccountsOptions, FailureLimitOptions } from './config.js';
export type { ExtraTokenClaims, ExtraTokenClaimsInput } from './extra-token-claims.js';
export type { FederationOptions, FederatedIssuerKeys } from './federation/federation-options.js';
export type { ServiceAccountsConfig } from './service-accounts-config.js';
export type { SigningKeyOptions, SigningAlgorithm } from './access-tokens/keyring.js';
export type { AccessTokenClaims } from './access-tokens/access-token.js';
export type { RequireBearerOptions } from './bearer/require-bearer.js';
export { INTROSPECTION_SCOPE } from './token-endpoint/introspection-step.js';
export type { ServiceAccountPrincipal } from './bearer/require-bearer.js';
export type { Actor, UserIdentity } from './actor/actor.js';
export type { RequireActorOptions } from './actor/require-actor.js';
export { isCrossOriginRequest } from './cross-origin-request.js';
export type { AdminApi } from './admin/admin-api.js';
export type { PublicKeyInput } from './admin/admin-keys.js';
export type { FederatedCredentialInput } from './admin/admin-federated.js';
export { createAdminApi } from './admin/create-admin-api.js';
export type { AdminApiOptions } from './admin-options.js';
export type { CreateAccountInput } from './admin/admin-input.js';
export type { CredentialExpiryInput } from './admin/credential-expiry.js';
export type { StaleCredential, StaleCredentialCriteria, StaleReason } from './admin/stale-credentials.js';
export type {
  CreatedAccount,
  CreatedSecret,
  AccountSummary,
  SecretSummary,
  RevokedSecret,
  RevokedToken,
  AccountStatus,
  AccountResources,
  AccountPolicy,
  CreatedKey,
  KeySummary,
  RevokedKey,
  CreatedFederatedCredential,
  FederatedCredentialSummary,
  RevokedFederatedCredential,
} from './admin/admin-summaries.js';
export { AdminError, type AdminErrorCode } from './admin/admin-errors.js';
export { createAdminRouter } from './admin-router/create-admin-router.js';
export type {
  AdminRouterOptions,
  CreateAdminRouterOptions,
  AdminPrincipal,
  TenantAdministrator,
  AllTenantsOperator,
} from './admin-router/admin-router-options.js';
export { buildAdminOpenApiDocument } from './admin-router/admin-openapi.js';
export type { AdminProblemName, ProblemDetails, InvalidParam } from './admin-router/admin-problem.js';
export { createConsoleRouter } from './console/create-console-router.js';
export type { ConsoleRouterOptions, CreateConsoleRouterOptions } from './console/console-router-options.js';
export { CONSOLE_STRINGS, type ConsoleStrings } from './console/console-strings.js';
export type {
  AccountStore,
  AccountRecord,
  AccountListFilter,
  SecretRecord,
  NewAccountRecord,
  AccountPolicyChange,
  NewSecretRecord,
  AddSecretOptions,
  AddSecretResult,
  KeyRecord,
  NewKeyRecord,
  AddKeyOptions,
  AddKeyResult,
  PublicKeyJwk,
  FederatedCredentialRecord,
  NewFederatedCredentialRecord,
  AddFederatedCredentialResult,
  AccountChangeListener,
  WatchOptions,
  ChangeFeedState,
  RevokedTokenRecord,
  RevokeTokenOptions,
  RevokeTokenResult,
} from './store/account-store.js';
export { revokedTokenChangeKey } from './store/revoked-token-change.js';
export { MemoryAccountStore } from './store/memory-account-store.js';
export type {
  AuditEvent,
  TokenIssuedEvent,
  TokenRefusedEvent,
  TokenRevokedEvent,
  TokenIntrospectedEvent,
  ClientAuthenticationFailedEvent,
  AccountEvent,
  AccountResourcesEvent,
  AccountPolicyEvent,
  SecretEvent,
  KeyEvent,
  FederatedCredentialEvent,
  AuditActor,
} from './audit/audit-events.js';
export type {
  OperationalEvent,
  DependencyUnavailableEvent,
  DependencyRecoveredEvent,
  ChangeFeedEvent,
  SecretChecksSaturatedEvent,
  RevocationLimitReachedEvent,
  ExtraClaimsRefusedEvent,
  FederatedIssuerEvent,
  CredentialExpiringEvent,
  DpopReplayCacheFullEvent,
} from './observability/operational-events.js';
export { CREDENTIAL_EXPIRING_LEAD_TIME } from './client-auth/client-authenticator.js';
export type { DpopOptions, DpopAlgorithm } from './dpop/dpop-options.js';
export type { HealthReport, HealthStatus } from './observability/health.js';
export type { TelemetryOptions } from './observability/telemetry.js';
export type { AuthorizationServerMetadata, ClientAuthMethods, MetadataOptions } from './discovery/authorization-server-metadata.js';
export {
  OAuthError,
  InvalidRequestError,
  InvalidClientError,
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
  UnauthorizedClientError,
  UnsupportedTokenTypeError,
  InvalidDpopProofError,
  UseDpopNonceError,
  InvalidTokenError,
  MissingTokenError,
  InsufficientScopeError,
  MethodNotAllowedError,
  TooManyRequestsError,
  TemporarilyUnavailableError,
  ServerError,
  type OAuthErrorCode,
  type AnyOAuthError,
  type InvalidTokenReason,
  type AssertionRefusal,
  type ClientAuthenticationFailure,
  type DpopChallenge,
} from './errors.js';
export { SECRET_PATTERN, CLIENT_ID_PREFIX, SECRET_PREFIX, KEY_ID_PREFIX, FEDERATED_CREDENTIAL_ID_PREFIX } from './credentials/generate-credentials.js';
