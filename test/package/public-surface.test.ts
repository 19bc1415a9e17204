/**
 * The published API, name by name: what `express-service-accounts`, `/sql` and `/testing` export from
 * the built package (dist/, which `npm test` builds first), as values (require) and as types (the
 * `.d.ts` and `.d.mts` declarations). Adding or removing an export is a decision, taken here and
 * listed in the CHANGELOG; internals (option resolution, SQL tables, the change feed) stay out.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const dist = resolve(__dirname, '../../dist');
const requireDist = createRequire(join(dist, 'index.js'));

const VALUES: Readonly<Record<string, readonly string[]>> = {
  index: [
    'AdminError',
    'CREDENTIAL_EXPIRING_LEAD_TIME',
    'CLIENT_ID_PREFIX',
    'INTROSPECTION_SCOPE',
    'InsufficientScopeError',
    'InvalidClientError',
    'InvalidDpopProofError',
    'InvalidGrantError',
    'InvalidRequestError',
    'InvalidScopeError',
    'InvalidTargetError',
    'InvalidTokenError',
    'KEY_ID_PREFIX',
    'FEDERATED_CREDENTIAL_ID_PREFIX',
    'MemoryAccountStore',
    'MethodNotAllowedError',
    'MissingTokenError',
    'OAuthError',
    'SECRET_PATTERN',
    'SECRET_PREFIX',
    'ServerError',
    'TemporarilyUnavailableError',
    'TooManyRequestsError',
    'UnauthorizedClientError',
    'UnsupportedTokenTypeError',
    'UseDpopNonceError',
    'buildAdminOpenApiDocument',
    'CONSOLE_STRINGS',
    'createAdminApi',
    'createAdminRouter',
    'createConsoleRouter',
    'createServiceAccounts',
    'isCrossOriginRequest',
    'revokedTokenChangeKey',
  ],
  'sql/index': ['createPostgresAccountStore', 'createSqliteAccountStore', 'openAccountStore', 'parseAccountStoreUrl'],
  'testing/index': ['describeAccountStore'],
};

/** Exports that are types only (no value at run time). */
const TYPES: Readonly<Record<string, readonly string[]>> = {
  index: [
    'AccessTokenClaims',
    'AccountChangeListener',
    'AccountEvent',
    'AccountListFilter',
    'AccountRecord',
    'AccountResources',
    'AccountResourcesEvent',
    'AccountPolicy',
    'AccountPolicyChange',
    'AccountPolicyEvent',
    'ExtraTokenClaims',
    'ExtraTokenClaimsInput',
    'ExtraClaimsRefusedEvent',
    'AccountStatus',
    'AccountStore',
    'AccountSummary',
    'Actor',
    'AddKeyOptions',
    'AddKeyResult',
    'AddSecretOptions',
    'AddSecretResult',
    'AdminApi',
    'AdminApiOptions',
    'AdminErrorCode',
    'AdminPrincipal',
    'AdminProblemName',
    'AdminRouterOptions',
    'AllTenantsOperator',
    'AnyOAuthError',
    'AssertionRefusal',
    'AuditActor',
    'AuditEvent',
    'AuthorizationServerMetadata',
    'ChangeFeedEvent',
    'ChangeFeedState',
    'ClientAuthMethods',
    'ClientAuthenticationFailedEvent',
    'ClientAuthenticationFailure',
    'ConsoleRouterOptions',
    'ConsoleStrings',
    'CreateAccountInput',
    'CreateAdminRouterOptions',
    'CreateConsoleRouterOptions',
    'CreatedAccount',
    'CreatedFederatedCredential',
    'CreatedKey',
    'CreatedSecret',
    'CredentialExpiringEvent',
    'CredentialExpiryInput',
    'StaleCredential',
    'StaleCredentialCriteria',
    'StaleReason',
    'DependencyRecoveredEvent',
    'DependencyUnavailableEvent',
    'FailureLimitOptions',
    'FederationOptions',
    'FederatedIssuerKeys',
    'FederatedCredentialEvent',
    'FederatedCredentialInput',
    'FederatedCredentialSummary',
    'HealthReport',
    'HealthStatus',
    'InvalidParam',
    'InvalidTokenReason',
    'KeyEvent',
    'KeyRecord',
    'FederatedCredentialRecord',
    'NewFederatedCredentialRecord',
    'AddFederatedCredentialResult',
    'KeySummary',
    'MetadataOptions',
    'NewAccountRecord',
    'NewKeyRecord',
    'NewSecretRecord',
    'OAuthErrorCode',
    'OperationalEvent',
    'ProblemDetails',
    'PublicKeyInput',
    'PublicKeyJwk',
    'RequireActorOptions',
    'RequireBearerOptions',
    'RevokedFederatedCredential',
    'RevokedKey',
    'RevokedSecret',
    'RevokedToken',
    'RevokedTokenRecord',
    'RevokeTokenOptions',
    'RevokeTokenResult',
    'RevocationLimitReachedEvent',
    'DpopReplayCacheFullEvent',
    'DpopOptions',
    'DpopAlgorithm',
    'DpopChallenge',
    'SecretChecksSaturatedEvent',
    'FederatedIssuerEvent',
    'SecretEvent',
    'SecretRecord',
    'SecretSummary',
    'ServiceAccountPrincipal',
    'ServiceAccounts',
    'ServiceAccountsConfig',
    'ServiceAccountsOptions',
    'SigningAlgorithm',
    'SigningKeyOptions',
    'TelemetryOptions',
    'TenantAdministrator',
    'TokenIntrospectedEvent',
    'TokenIssuedEvent',
    'TokenRefusedEvent',
    'TokenRevokedEvent',
    'UserIdentity',
    'WatchOptions',
  ],
  'sql/index': [
    'AccountStoreLocation',
    'OpenAccountStoreOptions',
    'PgPool',
    'PostgresAccountStoreOptions',
    'SqlAccountStore',
    'SqliteAccountStoreOptions',
  ],
  'testing/index': ['AccountStoreFixture', 'AccountStoreMatchers', 'AccountStoreTestApi'],
};

const ENTRIES = Object.keys(VALUES);
const DECLARATIONS = ENTRIES.flatMap((entry) => [join(dist, `${entry}.d.ts`), join(dist, `${entry}.d.mts`)]);
let program: ts.Program | undefined;

/** Every name a declaration file exports (values and types), as a user's compiler sees them. */
function declaredExports(file: string): string[] {
  program ??= ts.createProgram(DECLARATIONS, {
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  expect(source, `no declarations at ${file}: run \`npm run build\` first`).toBeDefined();
  return checker.getExportsOfModule(checker.getSymbolAtLocation(source!)!).map((symbol) => symbol.name).sort();
}

describe.each(ENTRIES)('the published %s', (entry) => {
  it('exports exactly the listed values at run time', () => {
    expect(Object.keys(requireDist(join(dist, `${entry}.js`)) as object).sort()).toEqual([...VALUES[entry]!].sort());
  });

  it.each(['d.ts', 'd.mts'])('declares exactly the listed values and types (.%s)', (extension) => {
    const expected = [...VALUES[entry]!, ...TYPES[entry]!].sort();
    expect(declaredExports(join(dist, `${entry}.${extension}`))).toEqual(expected);
  });
});
