/**
 * @module output
 * What each CLI command prints: the exact `--json` documents of docs/cli.md (dates as ISO strings,
 * `null` when absent) and their human-readable counterparts. No function here prints a hash, and only
 * the two that create a secret print its value. Human-readable text escapes any control or invisible
 * character a store may hold (one written before names were checked), so nothing prints raw to a terminal.
 */
import { escapeUnprintable as shown } from '../admin/printable-text.js';
import type {
  AccountPolicy,
  AccountResources,
  AccountStatus,
  AccountSummary,
  CreatedAccount,
  CreatedFederatedCredential,
  CreatedKey,
  CreatedSecret,
  FederatedCredentialSummary,
  RevokedFederatedCredential,
  RevokedKey,
  RevokedSecret,
  RevokedToken,
  StaleCredential,
} from '../index.js';

/** A JSON value, so a document can only hold what `JSON.stringify` renders as-is. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/**
 * `create`: `{clientId, name, clientAccountId, scopes, resources, secret: {id, value, expiresAt},
 * client_secret_expires_at}`, the last in seconds since the epoch, 0 for a secret that never expires (RFC 7591 §3.2.1).
 */
export function createdAccountJson(account: CreatedAccount): Json {
  const expiresAt = account.secret.expiresAt;
  return {
    clientId: account.clientId,
    name: account.name,
    clientAccountId: account.clientAccountId,
    scopes: [...account.scopes],
    resources: [...account.resources],
    accessTokenLifetime: account.accessTokenLifetime,
    dpopBoundAccessTokens: account.dpopBoundAccessTokens,
    secret: createdSecretJson(account.secret),
    client_secret_expires_at: expiresAt === null ? 0 : Math.floor(expiresAt.getTime() / 1000),
  };
}

/** `secret add`: `{id, value, expiresAt}`. */
export function createdSecretJson(secret: CreatedSecret): { id: string; value: string; expiresAt: string | null } {
  return { id: secret.id, value: secret.value, expiresAt: iso(secret.expiresAt) };
}

/** `credentials stale`: `[{clientId, name, clientAccountId, kind, id, createdAt, lastUsedAt, expiresAt, reasons}]`. */
export function staleCredentialsJson(stale: readonly StaleCredential[]): Json {
  return stale.map((credential) => ({
    clientId: credential.clientId,
    name: credential.name,
    clientAccountId: credential.clientAccountId,
    kind: credential.kind,
    id: credential.id,
    createdAt: iso(credential.createdAt),
    lastUsedAt: iso(credential.lastUsedAt),
    expiresAt: iso(credential.expiresAt),
    reasons: [...credential.reasons],
  }));
}

/** Human-readable `credentials stale`. */
export function staleCredentialsText(stale: readonly StaleCredential[]): string {
  if (stale.length === 0) return 'No credentials match.';
  return stale
    .map((credential) => {
      const expiry = credential.expiresAt ? `expires ${credential.expiresAt.toISOString()}` : 'never expires';
      const used = credential.lastUsedAt ? credential.lastUsedAt.toISOString() : 'never';
      return `${shown(credential.clientId)}  "${shown(credential.name)}"  ${credential.kind} ${shown(credential.id)}  ${credential.reasons.join(', ')}  ${expiry}  last used ${used}`;
    })
    .join('\n');
}

/** The line a new credential's text ends with about its expiry. */
const expiryLine = (expiresAt: Date | null): string => `  expires:         ${expiresAt === null ? 'never' : expiresAt.toISOString()}`;
/** The state of a listed credential: revoked, expired or live (with its expiry). */
function stateText(credential: { readonly revokedAt: Date | null; readonly expiresAt: Date | null }, now: number): string {
  if (credential.revokedAt) return `revoked ${credential.revokedAt.toISOString()}`;
  if (credential.expiresAt === null) return 'live';
  return credential.expiresAt.getTime() <= now ? `EXPIRED ${credential.expiresAt.toISOString()}` : `live until ${credential.expiresAt.toISOString()}`;
}

/** `list`: accounts with their secrets' IDs and dates (never a value or a hash), their keys and federated credentials. */
export function accountListJson(accounts: readonly AccountSummary[]): Json {
  return accounts.map((account) => ({
    clientId: account.clientId,
    name: account.name,
    clientAccountId: account.clientAccountId,
    enabled: account.enabled,
    scopes: [...account.scopes],
    resources: [...account.resources],
    accessTokenLifetime: account.accessTokenLifetime,
    dpopBoundAccessTokens: account.dpopBoundAccessTokens,
    secrets: account.secrets.map((secret) => ({
      id: secret.id,
      createdAt: iso(secret.createdAt),
      lastUsedAt: iso(secret.lastUsedAt),
      revokedAt: iso(secret.revokedAt),
      expiresAt: iso(secret.expiresAt),
    })),
    keys: account.keys.map((key) => ({
      id: key.id,
      thumbprint: key.thumbprint,
      createdAt: iso(key.createdAt),
      lastUsedAt: iso(key.lastUsedAt),
      revokedAt: iso(key.revokedAt),
      expiresAt: iso(key.expiresAt),
    })),
    federated: account.federated.map(listedFederatedJson),
  }));
}

/** One federated credential of `list`: `{id, issuer, subject, audience, [jwksUri,] [claims,] createdAt, lastUsedAt, revokedAt, expiresAt}`. */
function listedFederatedJson(credential: FederatedCredentialSummary): Json {
  const { expiresAt, ...created } = createdFederatedJson(credential) as { [key: string]: Json };
  return { ...created, lastUsedAt: iso(credential.lastUsedAt), revokedAt: iso(credential.revokedAt), expiresAt: expiresAt ?? null };
}

/**
 * `federated add`: `{id, issuer, subject, audience, createdAt, expiresAt}`, with `jwksUri` and `claims`
 * (the claim conditions, an object) before `createdAt` only when given.
 */
export function createdFederatedJson(credential: CreatedFederatedCredential): Json {
  return {
    id: credential.id,
    issuer: credential.issuer,
    subject: credential.subject,
    audience: credential.audience,
    ...(credential.jwksUri !== undefined && { jwksUri: credential.jwksUri }),
    ...(credential.claims !== undefined && { claims: { ...credential.claims } }),
    createdAt: iso(credential.createdAt),
    expiresAt: iso(credential.expiresAt),
  };
}

/** `federated revoke`: `{clientId, credentialId, revokedAt}`. */
export function revokedFederatedJson(revoked: RevokedFederatedCredential): Json {
  return { clientId: revoked.clientId, credentialId: revoked.credentialId, revokedAt: iso(revoked.revokedAt) };
}

/** `key add`: `{id, thumbprint, createdAt, expiresAt}`. */
export function createdKeyJson(key: CreatedKey): Json {
  return { id: key.id, thumbprint: key.thumbprint, createdAt: iso(key.createdAt), expiresAt: iso(key.expiresAt) };
}

/** `key revoke`: `{clientId, keyId, revokedAt}`. */
export function revokedKeyJson(revoked: RevokedKey): Json {
  return { clientId: revoked.clientId, keyId: revoked.keyId, revokedAt: iso(revoked.revokedAt) };
}

/** `secret revoke`: `{clientId, secretId, revokedAt}`. */
export function revokedSecretJson(revoked: RevokedSecret): Json {
  return { clientId: revoked.clientId, secretId: revoked.secretId, revokedAt: iso(revoked.revokedAt) };
}

/** `token revoke`: `{tokenId, revokedAt}`. */
export function revokedTokenJson(revoked: RevokedToken): Json {
  return { tokenId: revoked.tokenId, revokedAt: iso(revoked.revokedAt) };
}

/** `disable` / `enable`: `{clientId, enabled}`. */
export function accountStatusJson(status: AccountStatus): Json {
  return { clientId: status.clientId, enabled: status.enabled };
}

const SHOWN_ONCE =
  'This secret is shown once and cannot be shown again: put it in your secrets store now, never in source control.';

const scopesText = (scopes: readonly string[]): string => (scopes.length === 0 ? '(unrestricted)' : shown(scopes.join(' ')));
const resourcesText = (resources: readonly string[]): string =>
  resources.length === 0 ? "(none: tokens for the server's audience)" : shown(resources.join(' '));
/** The `resources:` line of an account's text, for an account that has some (most have none). */
const resourcesLines = (resources: readonly string[]): string[] => (resources.length === 0 ? [] : [`  resources:       ${resourcesText(resources)}`]);

/** The policy lines of an account's text, for an account whose policy is not the server's default (most). */
const policyLines = (policy: Omit<AccountPolicy, 'clientId'>): string[] => [
  ...(policy.accessTokenLifetime === null ? [] : [`  token lifetime:  ${policy.accessTokenLifetime} s`]),
  ...(policy.dpopBoundAccessTokens ? ['  DPoP:            required (tokens are DPoP-bound)'] : []),
];

/** `token-lifetime set`, `dpop require` / `dpop allow`: `{clientId, accessTokenLifetime, dpopBoundAccessTokens}`. */
export function accountPolicyJson(policy: AccountPolicy): Json {
  return { clientId: policy.clientId, accessTokenLifetime: policy.accessTokenLifetime, dpopBoundAccessTokens: policy.dpopBoundAccessTokens };
}

/** Human-readable `token-lifetime set`, `dpop require` / `dpop allow`. */
export function accountPolicyText(policy: AccountPolicy): string {
  const lifetime = policy.accessTokenLifetime === null ? "the server's token lifetime" : `${policy.accessTokenLifetime} s`;
  const dpop = policy.dpopBoundAccessTokens ? 'DPoP proofs required' : 'DPoP proofs optional';
  return `Set the token policy of ${shown(policy.clientId)}: tokens live ${lifetime}, ${dpop}. New tokens follow it within 1 second.`;
}

/** `resources set`: `{clientId, resources}`. */
export function accountResourcesJson(changed: AccountResources): Json {
  return { clientId: changed.clientId, resources: [...changed.resources] };
}

/** Human-readable `resources set`. */
export function accountResourcesText(changed: AccountResources): string {
  return `Set the resources of ${shown(changed.clientId)}: ${resourcesText(changed.resources)}. Tokens for any other resource are refused within 1 second.`;
}

/** Human-readable `create`. */
export function createdAccountText(account: CreatedAccount): string {
  return [
    `Created service account "${shown(account.name)}".`,
    `  client ID:       ${account.clientId}`,
    `  client account:  ${account.clientAccountId === null ? '(none)' : shown(account.clientAccountId)}`,
    `  scopes:          ${scopesText(account.scopes)}`,
    ...resourcesLines(account.resources),
    ...policyLines(account),
    `  secret ID:       ${account.secret.id}`,
    `  client secret:   ${account.secret.value}`,
    ...(account.secret.expiresAt === null ? [] : [expiryLine(account.secret.expiresAt)]),
    SHOWN_ONCE,
  ].join('\n');
}

/** Human-readable `secret add`. */
export function createdSecretText(clientId: string, secret: CreatedSecret): string {
  return [
    `Added a secret to ${shown(clientId)}.`,
    `  secret ID:       ${secret.id}`,
    `  client secret:   ${secret.value}`,
    ...(secret.expiresAt === null ? [] : [expiryLine(secret.expiresAt)]),
    SHOWN_ONCE,
    'The older secrets keep working until you revoke them: move traffic to this one, then revoke the old one.',
  ].join('\n');
}

/** Human-readable `list`. */
export function accountListText(accounts: readonly AccountSummary[]): string {
  if (accounts.length === 0) return 'No service accounts.';
  const now = Date.now();
  const lines: string[] = [];
  for (const account of accounts) {
    lines.push(`${shown(account.clientId)}  "${shown(account.name)}"  ${account.enabled ? 'enabled' : 'DISABLED'}`);
    lines.push(`  client account:  ${account.clientAccountId === null ? '(none)' : shown(account.clientAccountId)}`);
    lines.push(`  scopes:          ${scopesText(account.scopes)}`);
    lines.push(...resourcesLines(account.resources));
    lines.push(...policyLines(account));
    if (account.secrets.length === 0) lines.push('  secrets:         (none)');
    for (const secret of account.secrets) {
      const state = stateText(secret, now);
      const used = secret.lastUsedAt ? secret.lastUsedAt.toISOString() : 'never';
      lines.push(`  secret ${shown(secret.id)}  ${state}  created ${secret.createdAt.toISOString()}  last used ${used}`);
    }
    for (const key of account.keys) {
      const state = stateText(key, now);
      const used = key.lastUsedAt ? key.lastUsedAt.toISOString() : 'never';
      lines.push(`  key ${key.id}  ${state}  created ${key.createdAt.toISOString()}  last used ${used}  thumbprint ${key.thumbprint}`);
    }
    for (const credential of account.federated) {
      const state = stateText(credential, now);
      const used = credential.lastUsedAt ? credential.lastUsedAt.toISOString() : 'never';
      lines.push(
        `  federated ${shown(credential.id)}  ${state}  created ${credential.createdAt.toISOString()}  last used ${used}  ` +
          `issuer ${shown(credential.issuer)}  subject ${shown(credential.subject)}  audience ${audienceText(credential.audience)}` +
          (credential.claims !== undefined ? `  claims ${claimsText(credential.claims)}` : ''),
      );
    }
  }
  return lines.join('\n');
}

/** Human-readable `key add`. */
export function createdKeyText(clientId: string, key: CreatedKey): string {
  return [
    `Registered a public key for ${clientId}.`,
    `  key ID:          ${key.id}`,
    `  thumbprint:      ${key.thumbprint}`,
    ...(key.expiresAt === null ? [] : [expiryLine(key.expiresAt)]),
    'The client signs its token requests with the matching private key, which never leaves it (docs/private-key-jwt.md).',
  ].join('\n');
}

/** `null`: the credential takes the server's `issuer` option, which the CLI is told only through TOKEN_ISSUER. */
const audienceText = (audience: string | null): string =>
  audience === null ? "your server's `issuer` option (set TOKEN_ISSUER to show it here)" : shown(audience);

/** Claim conditions for people: `name=value` pairs, comma-separated, each escaped. */
const claimsText = (claims: Readonly<Record<string, string>>): string =>
  Object.entries(claims)
    .map(([name, value]) => `${shown(name)}=${shown(value)}`)
    .join(', ');

/** Human-readable `federated add`. */
export function createdFederatedText(clientId: string, credential: CreatedFederatedCredential): string {
  return [
    `Trusted an outside issuer for ${shown(clientId)}.`,
    `  credential ID:   ${credential.id}`,
    `  issuer:          ${shown(credential.issuer)}`,
    `  subject:         ${shown(credential.subject)}`,
    `  audience:        ${audienceText(credential.audience)}`,
    ...(credential.jwksUri !== undefined ? [`  JWK Set URL:     ${shown(credential.jwksUri)}`] : []),
    ...(credential.claims !== undefined ? [`  claims:          ${claimsText(credential.claims)}`] : []),
    ...(credential.expiresAt === null ? [] : [expiryLine(credential.expiresAt)]),
    'The workload sends a token from this issuer, for exactly this subject and audience, as its client assertion: no secret is stored.',
  ].join('\n');
}

/** Human-readable `federated revoke`. */
export function revokedFederatedText(revoked: RevokedFederatedCredential): string {
  return [
    `Revoked federated credential ${revoked.credentialId} of ${shown(revoked.clientId)} at ${revoked.revokedAt.toISOString()}.`,
    "The issuer's tokens no longer authenticate through it, and the tokens issued against it are refused within 1 second on every server sharing the store.",
  ].join('\n');
}

/** Human-readable `key revoke`. */
export function revokedKeyText(revoked: RevokedKey): string {
  return [
    `Revoked key ${revoked.keyId} of ${revoked.clientId} at ${revoked.revokedAt.toISOString()}.`,
    'Assertions it signs are refused, and so are the tokens issued against it, within 1 second on every server sharing the store.',
  ].join('\n');
}

/** Human-readable `secret revoke`. */
export function revokedSecretText(revoked: RevokedSecret): string {
  return [
    `Revoked secret ${shown(revoked.secretId)} of ${shown(revoked.clientId)} at ${revoked.revokedAt.toISOString()}.`,
    'Tokens issued against it are refused within 1 second on every server sharing the store.',
  ].join('\n');
}

/** Human-readable `token revoke`. */
export function revokedTokenText(revoked: RevokedToken): string {
  return [
    `Revoked token ${revoked.tokenId} at ${revoked.revokedAt.toISOString()}.`,
    'It is refused within 1 second on every server sharing the store; the other tokens of its account keep working.',
  ].join('\n');
}

/** Human-readable `disable` / `enable`. */
export function accountStatusText(status: AccountStatus): string {
  return status.enabled
    ? `Enabled service account ${shown(status.clientId)}.`
    : `Disabled service account ${shown(status.clientId)}: its tokens are refused within 1 second and it can get no new ones.`;
}
