/**
 * @module console-strings
 * Every text the self-service page shows, in one object, so a host can translate it or reword it
 * (`strings` of {@link ConsoleRouterOptions}). `{name}`-style placeholders are filled in by the page.
 */

/**
 * The self-service page's texts. A host passes the ones it changes as `strings`; the rest keep
 * these English defaults ({@link CONSOLE_STRINGS}). Placeholders in braces (`{name}`, `{id}`) are
 * replaced by the page; keep them in a translation.
 *
 * @example
 * ```ts
 * import type { ConsoleStrings } from 'express-service-accounts'
 *
 * const german: Partial<ConsoleStrings> = { title: 'Dienstkonten', create: 'Dienstkonto anlegen' }
 * ```
 */
export interface ConsoleStrings {
  readonly title: string;
  readonly intro: string;
  readonly signedInAs: string;
  readonly clientAccount: string;
  readonly allClientAccounts: string;
  readonly signInTitle: string;
  readonly signInHint: string;
  readonly signInLink: string;
  readonly forbiddenTitle: string;
  readonly forbiddenHint: string;
  readonly errorTitle: string;
  readonly errorHint: string;
  readonly noScript: string;
  readonly loading: string;
  readonly empty: string;
  readonly createHeading: string;
  readonly nameLabel: string;
  readonly nameHint: string;
  readonly scopesLabel: string;
  readonly scopesHint: string;
  readonly firstSecretExpiryLabel: string;
  readonly expiryLabel: string;
  readonly expiryHint: string;
  readonly expiryNever: string;
  readonly expiry30d: string;
  readonly expiry90d: string;
  readonly expiry180d: string;
  readonly expiry365d: string;
  /** The longest expiry the server allows, when it sets one; `{duration}` is that lifetime (for example "45 days"). */
  readonly expiryLongest: string;
  /** The expiry hint when the server bounds a credential's lifetime; `{duration}` is that bound. */
  readonly expiryLimitHint: string;
  readonly create: string;
  readonly accountsHeading: string;
  readonly clientId: string;
  readonly status: string;
  readonly enabled: string;
  readonly disabled: string;
  readonly scopes: string;
  readonly unrestricted: string;
  /** The account's resources (RFC 8707): the APIs its tokens may be for. */
  readonly resources: string;
  /** Shown when the account names no resource: its tokens are for the server's own audience. */
  readonly resourcesDefault: string;
  readonly tokenLifetime: string;
  /** Shown when the account has no lifetime of its own. */
  readonly tokenLifetimeDefault: string;
  /** Whether the account's tokens must be DPoP-bound (RFC 9449). */
  readonly dpop: string;
  readonly dpopRequired: string;
  readonly dpopOptional: string;
  readonly created: string;
  readonly credentials: string;
  readonly noCredentials: string;
  readonly kind: string;
  readonly id: string;
  readonly lastUsed: string;
  readonly never: string;
  readonly expires: string;
  readonly noExpiry: string;
  readonly state: string;
  readonly live: string;
  readonly revokedAt: string;
  readonly expired: string;
  readonly actions: string;
  readonly kindSecret: string;
  readonly kindKey: string;
  readonly kindFederated: string;
  /** Under a federated credential with an audience: the `aud` its issuer's tokens must carry. */
  readonly federatedAudience: string;
  /** Under a federated credential with claim conditions: the claims its issuer's tokens must carry, as `name = value` pairs. */
  readonly federatedClaims: string;
  readonly addSecret: string;
  readonly addKey: string;
  readonly addFederated: string;
  readonly tokenSettings: string;
  readonly disable: string;
  readonly enable: string;
  readonly revoke: string;
  readonly revokeLabel: string;
  readonly cancel: string;
  readonly close: string;
  readonly copy: string;
  readonly copied: string;
  readonly copyFailed: string;
  readonly secretTitle: string;
  readonly secretWarning: string;
  readonly secretLabel: string;
  readonly secretDone: string;
  readonly secretExpiresAt: string;
  readonly secretNoExpiry: string;
  readonly secretAddTitle: string;
  readonly secretAdd: string;
  readonly keyTitle: string;
  readonly keyLabel: string;
  readonly keyHint: string;
  readonly keyFile: string;
  readonly keyAdd: string;
  readonly federatedTitle: string;
  readonly issuerLabel: string;
  readonly issuerHint: string;
  readonly subjectLabel: string;
  readonly subjectHint: string;
  readonly audienceLabel: string;
  readonly audienceHint: string;
  readonly federatedAdd: string;
  /** The token settings dialog's title; `{name}` is the account. */
  readonly tokenSettingsTitle: string;
  readonly tokenLifetimeLabel: string;
  readonly tokenLifetimeHint: string;
  /** The lifetime choice that gives the account the server's lifetime again. */
  readonly tokenLifetimeServer: string;
  /** The longest lifetime the server allows; `{duration}` is that lifetime (for example "1 day"). */
  readonly tokenLifetimeLongest: string;
  readonly dpopLabel: string;
  readonly dpopHint: string;
  /** The DPoP hint on a server that issues no DPoP-bound tokens, for an account that still requires them. */
  readonly dpopOffHint: string;
  /** A lifetime above the server's current bound; `{duration}` is that lifetime, `{limit}` the bound. */
  readonly tokenLifetimeAbove: string;
  readonly tokenSettingsSave: string;
  readonly confirmTitle: string;
  readonly confirmRevokeSecret: string;
  readonly confirmRevokeKey: string;
  readonly confirmRevokeFederated: string;
  readonly confirmDisable: string;
  readonly confirmEnable: string;
  readonly created_account: string;
  readonly added_secret: string;
  readonly added_key: string;
  readonly added_federated: string;
  readonly revoked_secret: string;
  readonly revoked_key: string;
  readonly revoked_federated: string;
  readonly disabled_account: string;
  readonly enabled_account: string;
  readonly saved_policy: string;
  readonly errorPrefix: string;
  readonly networkError: string;
  readonly sessionExpired: string;
  /**
   * Refusals of the server, one text per kind. By default the page shows the server's own words
   * (English, naming the limit or the field); once you give one of these (other than its default),
   * the page shows yours for that kind instead. These defaults are shown when an answer has no words
   * of its own (a proxy's 502).
   */
  readonly refusedInvalid: string;
  readonly refusedForbidden: string;
  readonly refusedNotFound: string;
  readonly refusedLimit: string;
  readonly refusedTooLarge: string;
  readonly refusedUnavailable: string;
  readonly refusedServerError: string;
  readonly clientIdLabel: string;
  readonly fileTooLarge: string;
}

/**
 * The page's English texts: the defaults a host's `strings` override.
 *
 * @example
 * ```ts
 * import { CONSOLE_STRINGS } from 'express-service-accounts'
 *
 * console.log(CONSOLE_STRINGS.secretWarning) // the warning shown beside a new secret
 * ```
 */
export const CONSOLE_STRINGS: ConsoleStrings = Object.freeze({
  title: 'Service accounts',
  intro: 'Service accounts let your own systems call this API with their own credentials. Create one per system, copy its secret into your secret store, and rotate or revoke it here.',
  signedInAs: 'Signed in as {name}',
  clientAccount: 'Client account {id}',
  allClientAccounts: 'Every client account',
  signInTitle: 'Sign in to manage service accounts',
  signInHint: 'This page shows the service accounts of your client account once you are signed in.',
  signInLink: 'Sign in',
  forbiddenTitle: 'You may not manage service accounts',
  forbiddenHint: 'Your sign-in does not allow managing service accounts here. Ask an administrator of your client account.',
  errorTitle: 'Something went wrong',
  errorHint: 'The page could not be shown. Try again in a moment.',
  noScript: 'This page needs JavaScript.',
  loading: 'Loading service accounts…',
  empty: 'No service accounts yet. Create the first one above.',
  createHeading: 'Create a service account',
  nameLabel: 'Name',
  nameHint: 'Shown in audit logs and activity history, such as billing-sync.',
  scopesLabel: 'Scopes (optional)',
  scopesHint: 'Separated by spaces. Leave empty for an account that is not restricted.',
  firstSecretExpiryLabel: 'Its secret expires',
  expiryLabel: 'Expires',
  expiryHint: 'It then stops working on its own: add a new one before that.',
  expiryNever: 'Never',
  expiry30d: 'In 30 days',
  expiry90d: 'In 90 days',
  expiry180d: 'In 180 days',
  expiry365d: 'In 1 year',
  expiryLongest: 'In {duration} (the longest allowed)',
  expiryLimitHint: 'It then stops working on its own: add a new one before that. This server lets a credential live {duration} at most.',
  create: 'Create',
  accountsHeading: 'Your service accounts',
  clientId: 'Client ID',
  status: 'Status',
  enabled: 'Enabled',
  disabled: 'Disabled',
  scopes: 'Scopes',
  unrestricted: 'none (unrestricted)',
  resources: 'APIs',
  resourcesDefault: 'this server’s own (its default audience)',
  tokenLifetime: 'Token lifetime',
  tokenLifetimeDefault: 'the server’s default',
  dpop: 'Proof of possession',
  dpopRequired: 'DPoP required',
  dpopOptional: 'not required',
  created: 'Created',
  credentials: 'Credentials of {name}',
  noCredentials: 'No credentials.',
  kind: 'Kind',
  id: 'ID',
  lastUsed: 'Last used',
  never: 'never',
  expires: 'Expires',
  noExpiry: 'no expiry',
  state: 'State',
  live: 'live',
  revokedAt: 'revoked {date}',
  expired: 'expired',
  actions: 'Actions',
  kindSecret: 'Secret',
  kindKey: 'Public key',
  kindFederated: 'Federated',
  federatedAudience: 'audience {audience}',
  federatedClaims: 'only when {claims}',
  addSecret: 'Add a secret',
  addKey: 'Add a public key',
  addFederated: 'Add a federated credential',
  tokenSettings: 'Token settings',
  disable: 'Disable',
  enable: 'Enable',
  revoke: 'Revoke',
  revokeLabel: 'Revoke {kind} {id}',
  cancel: 'Cancel',
  close: 'Close',
  copy: 'Copy',
  copied: 'Copied to the clipboard.',
  copyFailed: 'Could not copy: select the secret and copy it yourself.',
  secretTitle: 'Copy the new secret of {name} now',
  secretWarning: 'This is the only time the secret is shown. It is stored as a hash and cannot be shown again: put it in your secret store before you close this window.',
  secretLabel: 'Client secret',
  secretDone: 'I have copied it, close',
  secretExpiresAt: 'It expires {date}.',
  secretNoExpiry: 'It does not expire.',
  secretAddTitle: 'Add a secret to {name}',
  secretAdd: 'Add the secret',
  keyTitle: 'Add a public key to {name}',
  keyLabel: 'Public key (PEM or JWK)',
  keyHint: 'Paste the public key, or choose its file. Never a private key: it is refused.',
  keyFile: 'Public key file',
  keyAdd: 'Add the key',
  federatedTitle: 'Add a federated credential to {name}',
  issuerLabel: 'Issuer',
  issuerHint: 'The outside issuer, exactly as its tokens carry it in iss, such as https://token.actions.githubusercontent.com.',
  subjectLabel: 'Subject',
  subjectHint: 'The one subject (sub) accepted, compared exactly.',
  audienceLabel: 'Audience (optional)',
  audienceHint: 'Leave empty for this server’s own issuer identifier.',
  federatedAdd: 'Add the credential',
  tokenSettingsTitle: 'Token settings of {name}',
  tokenLifetimeLabel: 'Its access tokens last',
  tokenLifetimeHint: 'New tokens follow it on every server within a second; tokens already issued keep their expiry.',
  tokenLifetimeServer: 'The server’s default',
  tokenLifetimeLongest: '{duration} (the longest allowed)',
  dpopLabel: 'Require DPoP-bound tokens',
  dpopHint: 'Its token requests and API calls must then prove they hold its key (DPoP, RFC 9449): a stolen token is useless without that key.',
  dpopOffHint: 'This server issues no DPoP-bound tokens, so this account can get no token while it requires them: clear this to let it get tokens again.',
  tokenLifetimeAbove: '{duration}, more than this server now allows: its tokens get {limit}',
  tokenSettingsSave: 'Save the settings',
  confirmTitle: 'Are you sure?',
  confirmRevokeSecret: 'Revoke secret {id} of {name}? Revoking this secret revokes every token issued with it, at once. It cannot be undone.',
  confirmRevokeKey: 'Revoke public key {id} of {name}? Assertions it signs are refused, and so is every token issued with it, at once. It cannot be undone.',
  confirmRevokeFederated: 'Revoke federated credential {id} of {name}? Its issuer’s tokens no longer sign in as this account, and every token issued with it is refused, at once. It cannot be undone.',
  confirmDisable: 'Disable {name}? Every token of the account is refused and no new one is issued until you enable it again.',
  confirmEnable: 'Enable {name}? Its live credentials and unexpired tokens work again.',
  created_account: 'Created {name}.',
  added_secret: 'Added a secret to {name}.',
  added_key: 'Added public key {id} to {name}.',
  added_federated: 'Added federated credential {id} to {name}.',
  revoked_secret: 'Revoked secret {id} of {name}.',
  revoked_key: 'Revoked public key {id} of {name}.',
  revoked_federated: 'Revoked federated credential {id} of {name}.',
  disabled_account: 'Disabled {name}.',
  enabled_account: 'Enabled {name}.',
  saved_policy: 'Saved the token settings of {name}.',
  errorPrefix: 'Not done:',
  networkError: 'The server could not be reached. Check your connection and try again.',
  sessionExpired: 'Your session has ended. Sign in again, then reload this page.',
  refusedInvalid: 'The server did not accept what you entered. Check it and try again.',
  refusedForbidden: 'You may not make this change.',
  refusedNotFound: 'It no longer exists. Reload the page to see the current state.',
  refusedLimit: 'This account already has as many live credentials as the server allows. Revoke one first.',
  refusedTooLarge: 'What you entered is too large.',
  refusedUnavailable: 'The service is unavailable for a moment. Try again shortly.',
  refusedServerError: 'Something went wrong on the server. Try again; if it keeps failing, tell your administrator.',
  clientIdLabel: 'Client ID',
  fileTooLarge: 'This file is too large to be a public key.',
});

/** The texts of the server's refusals: the page shows a host's own for a kind instead of the server's words. */
export const REFUSAL_TEXTS = [
  'refusedInvalid',
  'refusedForbidden',
  'refusedNotFound',
  'refusedLimit',
  'refusedTooLarge',
  'refusedUnavailable',
  'refusedServerError',
] as const satisfies readonly (keyof ConsoleStrings)[];
