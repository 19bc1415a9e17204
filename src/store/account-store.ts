/**
 * @module account-store
 * The persistence interface a host application implements, and the plain records it stores.
 * Stores only persist data: hashing, ID generation, scope checks and clock reads stay in the core.
 */
import type { AddKeyOptions, AddKeyResult, KeyRecord, NewKeyRecord } from './key-records.js';

export type { AddKeyOptions, AddKeyResult, KeyRecord, NewKeyRecord, PublicKeyJwk } from './key-records.js';
import type { AddFederatedCredentialResult, FederatedCredentialRecord, NewFederatedCredentialRecord } from './federated-records.js';
export type { AddFederatedCredentialResult, FederatedCredentialRecord, NewFederatedCredentialRecord } from './federated-records.js';

/**
 * One client secret of an account, as stored. The plaintext value is never stored.
 *
 * @example
 * ```ts
 * import type { SecretRecord } from 'express-service-accounts'
 *
 * // In your own store: a row of your persistence layer as a record.
 * interface SecretRow { id: string; hash: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }
 * const toSecretRecord = (row: SecretRow): SecretRecord => ({
 *   id: row.id,
 *   hash: row.hash,
 *   createdAt: row.created_at,
 *   lastUsedAt: row.last_used_at,
 *   revokedAt: row.revoked_at,
 * })
 * ```
 */
export interface SecretRecord {
  /** Public ID of the secret (shown by `list`, carried in tokens as `secret_id`). */
  readonly id: string;
  /** bcrypt hash of the secret. Never shown to anyone. */
  readonly hash: string;
  readonly createdAt: Date;
  /** Last successful client authentication with this secret, recorded at most once a minute. */
  readonly lastUsedAt: Date | null;
  /** When the secret was revoked; `null` while it is live. Revocation is final. */
  readonly revokedAt: Date | null;
  /**
   * When the secret stops working on its own (docs/rotation.md); `null` or absent: never. From that
   * instant it is refused like a revoked secret, and so is every token issued against it, on every
   * instance, with nothing written. Kept by a store with {@link AccountStore.keepsCredentialExpiry}.
   */
  readonly expiresAt?: Date | null;
  /**
   * What {@link AccountStore.recordSecretDigest} last stored for this secret, returned as it was
   * given; absent (or `undefined`) when nothing was. Like `hash`, never shown to anyone. A store without
   * `recordSecretDigest` leaves it out.
   */
  readonly verifiedDigest?: string | undefined;
}

/**
 * A service account with all of its credentials: secrets, public keys and federated credentials.
 *
 * @example
 * ```ts
 * import type { AccountRecord } from 'express-service-accounts'
 *
 * const account: AccountRecord | undefined = await store.findAccount(clientId)
 * const liveSecrets = account?.secrets.filter((secret) => secret.revokedAt === null) ?? []
 * ```
 */
export interface AccountRecord {
  readonly clientId: string;
  /** Shown in audit logs and activity history against every action of the account. */
  readonly name: string;
  /** The client account (your customer or tenant) the service account acts for, if any. */
  readonly clientAccountId: string | null;
  /** Scopes the account may be granted; empty means unrestricted. */
  readonly scopes: readonly string[];
  /**
   * The resources (RFC 8707: absolute URIs, or audience names the host chooses) its tokens may be
   * for; each token carries one of them as its `aud`. Empty means none: its tokens are for the
   * server's configured audience. A store without `setAccountResources`, such as one written for an
   * earlier version, may leave it out: the library reads a missing `resources` as none.
   */
  readonly resources?: readonly string[];
  /**
   * The lifetime, in seconds, of the access tokens issued to this account (`expires_in`), or `null`
   * for the server's `tokenLifetime`. The token endpoint never issues a token longer than its
   * `maxAccessTokenLifetime`, whatever is stored here (docs/account-policy.md). A store without
   * `setAccountPolicy` may leave it out: the library reads a missing value as `null`.
   */
  readonly accessTokenLifetime?: number | null;
  /**
   * Whether the account's access tokens must be bound to a DPoP key (RFC 9449 §5.2
   * `dpop_bound_access_tokens`): a token request without a DPoP proof is refused with 400
   * `invalid_dpop_proof`. A store without
   * `setAccountPolicy` may leave it out: the library reads a missing value as `false`.
   */
  readonly dpopBoundAccessTokens?: boolean;
  readonly enabled: boolean;
  readonly createdAt: Date;
  /** Every secret, live and revoked, oldest first. */
  readonly secrets: readonly SecretRecord[];
  /**
   * Every public key, live and revoked, oldest first. A store without key credentials (no `addKey`),
   * such as one written for an earlier version, may leave it out: the library reads a missing `keys`
   * as an account with no keys.
   */
  readonly keys?: readonly KeyRecord[];
  /**
   * Every federated credential (trust in an outside issuer for one subject), live and revoked, oldest
   * first. A store without federated credentials (no `addFederatedCredential`) may leave it out: the
   * library reads a missing `federated` as none.
   */
  readonly federated?: readonly FederatedCredentialRecord[];
}

/**
 * A secret to add: the core has already generated its ID and hashed its value.
 *
 * @example
 * ```ts
 * import type { AccountRecord, AddSecretOptions, AddSecretResult, NewSecretRecord, SecretRecord } from 'express-service-accounts'
 *
 * // `AccountStore.addSecret` of a store that keeps accounts in a Map (a single process: the check and
 * // the insert run without an `await` between them, so no other call can get in between).
 * const accounts = new Map<string, AccountRecord>()
 * async function addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
 *   const account = accounts.get(clientId)
 *   if (!account) return undefined
 *   const live = [...account.secrets, ...(account.keys ?? [])].filter((c) => c.revokedAt === null).length
 *   if (live >= options.maxLiveCredentials) return 'limit_reached'
 *   const record: SecretRecord = { ...secret, lastUsedAt: null, revokedAt: null }
 *   accounts.set(clientId, { ...account, secrets: [...account.secrets, record] })
 *   return record
 * }
 * ```
 */
export interface NewSecretRecord {
  readonly id: string;
  readonly hash: string;
  readonly createdAt: Date;
  /**
   * When it stops working on its own; `null` or absent: never. The core sets it only for a store with
   * {@link AccountStore.keepsCredentialExpiry}, which stores it and returns it in every record.
   */
  readonly expiresAt?: Date | null;
}

/**
 * The cap {@link AccountStore.addSecret} enforces.
 *
 * @example
 * ```ts
 * import type { AddSecretOptions } from 'express-service-accounts'
 *
 * // What the admin API passes with `maxSecretsPerAccount: 5`.
 * const options: AddSecretOptions = { maxLiveCredentials: 5, maxLiveSecrets: 5 }
 * const result = await store.addSecret(clientId, { id: secretId, hash: '$2b$10$...', createdAt: new Date() }, options)
 * ```
 */
export interface AddSecretOptions {
  /**
   * Live (unrevoked) credentials, secrets, keys and federated credentials together, the account may hold. The store adds the
   * secret only when the account has fewer live credentials than this, checked and inserted as one
   * atomic step.
   */
  readonly maxLiveCredentials: number;
  /**
   * The same number as `maxLiveCredentials`, under the name stores written for earlier versions read.
   * A store without key credentials may keep counting its live secrets against it.
   * @deprecated Read `maxLiveCredentials`, and count live keys too.
   */
  readonly maxLiveSecrets: number;
}

/**
 * What {@link AccountStore.addSecret} resolves to: the stored secret; `undefined` when the client ID
 * is unknown; or `'limit_reached'` when the account already has `maxLiveCredentials` live credentials
 * (secrets, keys and federated credentials), in which case nothing was stored.
 *
 * @example
 * ```ts
 * import type { AddSecretResult, NewSecretRecord } from 'express-service-accounts'
 *
 * declare const newSecret: NewSecretRecord // ID and hash made by the core
 * const result: AddSecretResult = await store.addSecret(clientId, newSecret, { maxLiveCredentials: 5, maxLiveSecrets: 5 })
 * if (result === undefined) console.log('no such account')
 * else if (result === 'limit_reached') console.log('revoke a secret or a key first')
 * else console.log(`stored secret ${result.id}`)
 * ```
 */
export type AddSecretResult = SecretRecord | 'limit_reached' | undefined;

/**
 * What {@link AccountStore.listAccounts} is asked for; absent members narrow nothing.
 *
 * @example
 * ```ts
 * const acme: AccountRecord[] = await store.listAccounts({ clientAccountId: 'acme' })
 * ```
 */
export interface AccountListFilter {
  /** Only the accounts acting for this client account (your customer or tenant). */
  readonly clientAccountId?: string;
}

/**
 * An account to create, with its first secret.
 *
 * @example
 * ```ts
 * import type { AccountRecord, NewAccountRecord } from 'express-service-accounts'
 *
 * // `AccountStore.createAccount` of a store that keeps accounts in a Map.
 * const accounts = new Map<string, AccountRecord>()
 * async function createAccount(input: NewAccountRecord): Promise<AccountRecord> {
 *   if (accounts.has(input.clientId)) throw new Error(`Account ${input.clientId} already exists`)
 *   const { secret, ...account } = input
 *   const record: AccountRecord = { ...account, enabled: true, secrets: [{ ...secret, lastUsedAt: null, revokedAt: null }], keys: [] }
 *   accounts.set(input.clientId, record)
 *   return record
 * }
 * ```
 */
export interface NewAccountRecord {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: readonly string[];
  /**
   * The resources its tokens may be for (see {@link AccountRecord.resources}). Absent or empty: none.
   * The core only passes resources to a store that has `setAccountResources`.
   */
  readonly resources?: readonly string[];
  /**
   * Its token lifetime in seconds, `null` or absent for the server's (see
   * {@link AccountRecord.accessTokenLifetime}). The core only passes it to a store that has `setAccountPolicy`.
   */
  readonly accessTokenLifetime?: number | null;
  /**
   * Whether its tokens must be DPoP-bound (see {@link AccountRecord.dpopBoundAccessTokens}); absent: `false`.
   * The core only passes it to a store that has `setAccountPolicy`.
   */
  readonly dpopBoundAccessTokens?: boolean;
  readonly createdAt: Date;
  readonly secret: NewSecretRecord;
}

/**
 * A change of an account's token policy, given to {@link AccountStore.setAccountPolicy}: each field
 * present is set, each absent one is left as it is. The admin API has checked the values.
 *
 * @example
 * ```ts
 * import type { AccountPolicyChange } from 'express-service-accounts'
 *
 * const shorter: AccountPolicyChange = { accessTokenLifetime: 900 }          // 15-minute tokens
 * const serverDefault: AccountPolicyChange = { accessTokenLifetime: null }   // back to tokenLifetime
 * const bound: AccountPolicyChange = { dpopBoundAccessTokens: true }         // DPoP proofs required
 * ```
 */
export interface AccountPolicyChange {
  /** Seconds, or `null` for the server's `tokenLifetime`. */
  readonly accessTokenLifetime?: number | null;
  readonly dpopBoundAccessTokens?: boolean;
}

/**
 * A revoked access token, by its ID (`jti`): the store's deny-list. The token itself is never stored.
 *
 * @example
 * ```ts
 * import type { RevokedTokenRecord } from 'express-service-accounts'
 *
 * // What the revocation endpoint stores for a token that expires in 40 minutes.
 * const record: RevokedTokenRecord = {
 *   tokenId: '0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b',
 *   clientId: 'esa_4fT0qLx2mZb8Rk1sVw7yNc3d',
 *   revokedAt: new Date(),
 *   expiresAt: new Date(Date.now() + 40 * 60_000),
 * }
 * ```
 */
export interface RevokedTokenRecord {
  /** The token's `jti`. */
  readonly tokenId: string;
  /** The client the token was issued to, when known (an operator may revoke a token by its ID alone). */
  readonly clientId: string | null;
  readonly revokedAt: Date;
  /**
   * Until when the entry matters: the token's `exp` (or, when unknown, the longest a token can live).
   * After it the token is refused as expired anyway, and the store may forget the entry.
   */
  readonly expiresAt: Date;
}

/**
 * What {@link AccountStore.revokeToken} is told besides the entry: the cap on one client's live entries.
 *
 * @example
 * ```ts
 * import type { RevokeTokenOptions } from 'express-service-accounts'
 *
 * // What the revocation endpoint passes with its default cap (option maxRevokedTokensPerClient).
 * const options: RevokeTokenOptions = { maxPerClient: 1000 }
 * ```
 */
export interface RevokeTokenOptions {
  /**
   * When the entry names a client (`clientId` is not null) and its token is not listed yet: the most
   * entries of that client whose `expiresAt` is after the entry's `revokedAt` the list may hold. With
   * that many already, nothing is stored and `revokeToken` returns `'limit_reached'`. The count and the
   * insert must be one atomic step across every process sharing the store. Absent: no cap.
   */
  readonly maxPerClient?: number;
}

/**
 * What {@link AccountStore.revokeToken} returns: the stored entry (the new one, or the first one when
 * the token was already listed), or `'limit_reached'` when the client's cap
 * ({@link RevokeTokenOptions.maxPerClient}) left no room and nothing was stored.
 *
 * @example
 * ```ts
 * import type { RevokeTokenResult } from 'express-service-accounts'
 *
 * declare const result: RevokeTokenResult
 * if (result === 'limit_reached') console.log('revoke the credential instead: it revokes all its tokens at once')
 * ```
 */
export type RevokeTokenResult = RevokedTokenRecord | 'limit_reached';

/**
 * Called with the client ID of an account that changed (a credential added or revoked, enabled, disabled, created),
 * and with a token revocation's change key (see {@link AccountStore.revokeToken}), which is never a client ID.
 *
 * @example
 * ```ts
 * import type { AccountChangeListener } from 'express-service-accounts'
 *
 * // `AccountStore.watch` of a store whose database announces changes.
 * const listeners = new Set<AccountChangeListener>()
 * async function watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
 *   listeners.add(listener)
 *   return async () => void listeners.delete(listener)
 * }
 * // On each announcement; '*' when changes may have been missed (after a reconnect):
 * for (const listener of listeners) listener(clientId)
 * ```
 */
export type AccountChangeListener = (clientId: string) => void;

/**
 * How the store delivers changes made by other instances, as the store reports it: `push` (a live
 * notification connection, such as PostgreSQL `LISTEN`, with polling behind it), `polling` (the store
 * polls and has no push channel), `reconnecting` (the push connection is down and being reconnected;
 * polling still delivers changes) or `failing` (the change feed cannot be read: cached account status
 * is dropped and every request asks the store).
 *
 * @example
 * ```ts
 * import type { ChangeFeedState } from 'express-service-accounts'
 *
 * const worrying: ChangeFeedState[] = ['reconnecting', 'failing']
 * ```
 */
export type ChangeFeedState = 'push' | 'polling' | 'reconnecting' | 'failing';

/**
 * Optional second argument of {@link AccountStore.watch}: a store that can tell how it delivers
 * changes reports it, and `sa.health()` and the `onEvent` hook show it. A store may ignore it.
 *
 * @example
 * ```ts
 * import type { ChangeFeedState, WatchOptions } from 'express-service-accounts'
 *
 * // In a store that listens on a push channel and falls back to polling: report changes only.
 * let reported: ChangeFeedState | undefined
 * function reportState(options: WatchOptions | undefined, pushConnected: boolean): void {
 *   const state = pushConnected ? 'push' : 'reconnecting'
 *   if (state === reported) return
 *   reported = state
 *   options?.onStateChange?.(state)
 * }
 * ```
 */
export interface WatchOptions {
  /**
   * Call it with the state once watching has started, then each time the state changes, and never
   * with the state of the previous call: every call is reported as a change (the
   * `change_feed.state_changed` event of docs/observability.md, with the previous state) and becomes
   * the `changeFeed` status of `sa.health()`.
   */
  onStateChange?(state: ChangeFeedState): void;
}

/**
 * Persistence for service accounts. Every method is async; "not found" resolves to `undefined`;
 * throwing (or rejecting) means the infrastructure failed, which the HTTP layer answers with
 * 503 `temporarily_unavailable` and never lets a request through.
 *
 * Inputs have already been validated by the core: a store trusts them.
 *
 * @example
 * ```ts
 * import { createServiceAccounts, MemoryAccountStore, type AccountStore } from 'express-service-accounts'
 *
 * // Any implementation: MemoryAccountStore, the SQL stores of `express-service-accounts/sql`, or your own.
 * const store: AccountStore = new MemoryAccountStore()
 * const sa = createServiceAccounts({ store, issuer, signingKeys })
 * ```
 */
export interface AccountStore {
  /**
   * Called before first use (lazily, on the first request or admin call, or by `sa.ready()`), and
   * again on the next use after it rejected. Creates the schema, opens pools. It gets at least 30 s
   * (`storeTimeout` if longer). Must be idempotent and safe when several processes call it at once.
   */
  init?(): Promise<void>;

  /** Releases connections and stops watching for changes. Called by `ServiceAccounts.close()`. */
  close?(): Promise<void>;

  /**
   * `true` when the store keeps the `expiresAt` of new secrets, keys and federated credentials
   * (`addSecret`, `addKey`, `addFederatedCredential` and `createAccount`'s first secret) and returns
   * it in every record. Without it (a store written for an earlier version), the admin API refuses to
   * create a credential that expires, rather than create one that would never expire, and a server
   * with `maxCredentialLifetime` cannot add credentials to it.
   */
  readonly keepsCredentialExpiry?: boolean;

  /**
   * `true` when the store keeps the `claims` (claim conditions) of new federated credentials and
   * returns them in every record. Without it (a store written for an earlier version), the admin API
   * refuses to register a federated credential with conditions before anything is stored, since the
   * credential would otherwise trust every workload of its subject.
   */
  readonly keepsClaimConditions?: boolean;

  /**
   * Stores a new account and its first secret atomically.
   * @returns the stored account, as {@link AccountStore.findAccount} would return it.
   * @throws when the client ID already exists or the store failed.
   */
  createAccount(input: NewAccountRecord): Promise<AccountRecord>;

  /**
   * Called by the token endpoint and the bearer check through each instance's cache of accounts (so
   * not on every request: see `statusCacheTtl`), and by the admin API.
   * @returns the account with all its secrets (hashes included) and keys, or `undefined` when unknown.
   */
  findAccount(clientId: string): Promise<AccountRecord | undefined>;

  /**
   * Every account, oldest first, with all its credentials. Used by the admin API and the CLI's `list`.
   * With `filter.clientAccountId`, only that client account's accounts are asked for: read only those
   * when your persistence can (the tenant admin router lists one tenant's accounts this way, so one
   * client account's many accounts do not slow another's listing). Returning more is allowed: every
   * caller keeps only the accounts it asked for, so a store that ignores the filter stays correct.
   */
  listAccounts(filter?: AccountListFilter): Promise<AccountRecord[]>;

  /**
   * Enables or disables an account.
   * @returns the updated account, or `undefined` when the client ID is unknown.
   */
  setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined>;

  /**
   * Optional: replaces the resources an account's tokens may be for (RFC 8707), `[]` for none, and
   * announces the change to watchers like `setAccountEnabled`, so every instance issues tokens for the
   * new list from then on. A store that has it stores `resources` given to `createAccount` and returns
   * them in every record; without it, the admin API refuses to give an account resources.
   * @returns the updated account, or `undefined` when the client ID is unknown.
   */
  setAccountResources?(clientId: string, resources: readonly string[]): Promise<AccountRecord | undefined>;

  /**
   * Optional: changes an account's token policy, the fields `policy` has and only those (an absent
   * field keeps its value; `accessTokenLifetime: null` goes back to the server's lifetime), and
   * announces the change to watchers like `setAccountEnabled`, so every instance issues tokens under
   * the new policy from then on. A store that has it stores the policy given to `createAccount` and
   * returns `accessTokenLifetime` (`null` for none) and `dpopBoundAccessTokens` in every record;
   * without it, the admin API refuses to set a policy.
   * @returns the updated account, or `undefined` when the client ID is unknown.
   */
  setAccountPolicy?(clientId: string, policy: AccountPolicyChange): Promise<AccountRecord | undefined>;

  /**
   * Adds a secret (hash only) to an account, unless the account already has
   * `options.maxLiveCredentials` live (unrevoked) credentials, secrets, keys and federated credentials together. Counting the
   * live credentials and inserting must be one atomic step with respect to every other `addSecret`,
   * `addKey` and `addFederatedCredential` on the same account, including calls from other processes sharing the store: of
   * concurrent calls, exactly as many succeed as there is room for. In SQL, count and insert in one
   * transaction that first locks the account's row (`select ... for update`); elsewhere use the
   * store's own atomic operation (a Lua script in Redis, a conditional write). A refused call stores
   * nothing, not even a revoked row. (A store without keys may count its secrets against the
   * deprecated `options.maxLiveSecrets`, which holds the same number.)
   * @returns the stored secret; `undefined` when the client ID is unknown; `'limit_reached'` when the
   * account has no room.
   */
  addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult>;

  /**
   * Marks a secret revoked at `at`. Revoking an already revoked secret keeps its first `revokedAt`.
   * @returns the secret, or `undefined` when the account or the secret is unknown.
   */
  revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined>;

  /**
   * Records a successful use of a secret. Called at most once a minute per secret and per process,
   * off the request path: its failure only loses the timestamp.
   */
  recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void>;

  /**
   * Optional: stores `digest` as the secret's `verifiedDigest`, replacing any earlier one, so that
   * {@link AccountStore.findAccount} (and `listAccounts`) return it with the secret from then on. An
   * unknown account or secret is ignored. Like `recordSecretUse`, it is bookkeeping, not status: called
   * off the request path, never announced to watchers, and its failure only costs a later bcrypt
   * compare. The digest is a short opaque string (under 100 characters) that proves, to the instances
   * of one deployment, that a value already passed bcrypt against the secret's hash; without this
   * method, each instance pays bcrypt once per secret again after every start
   * (docs/security.md, "Paying bcrypt once per secret").
   */
  recordSecretDigest?(clientId: string, secretId: string, digest: string): Promise<void>;

  /**
   * Optional, with `revokeKey`, `recordKeyUse` and `consumeAssertionId`: a store that has all four
   * holds key-pair credentials; without them, adding a key fails and the token endpoint refuses every
   * client assertion.
   *
   * Adds a public key to an account, under the same cap as `addSecret` and atomic in the same way:
   * unless the account already has `options.maxLiveCredentials` live credentials (of every kind),
   * and unless one of its live keys has the same `thumbprint`. A refused call stores nothing.
   * @returns the stored key; `undefined` when the client ID is unknown; `'limit_reached'` when the
   * account has no room; `'duplicate'` when the key is already one of its live keys.
   */
  addKey?(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult>;

  /**
   * Marks a key revoked at `at`, like `revokeSecret`: a second revocation keeps the first `revokedAt`,
   * and the change is announced to watchers like any other, so every instance drops the account's
   * cached status and refuses the tokens issued against the key.
   * @returns the key, or `undefined` when the account or the key is unknown.
   */
  revokeKey?(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined>;

  /**
   * Records a successful use of a key, like `recordSecretUse`: at most once a minute per key and per
   * process, off the request path, never announced to watchers.
   */
  recordKeyUse?(clientId: string, keyId: string, at: Date): Promise<void>;

  /**
   * Records that a signed client assertion's ID (`jti`, RFC 7519 §4.1.7) was used, so the assertion
   * cannot be replayed (RFC 7523 §3). Inserts (`issuer`, `jti`) unless present, atomically with
   * respect to every process sharing the store (a unique key and an insert that ignores conflicts,
   * `SET NX` in Redis), and keeps it until `expiresAt`, the assertion's own expiry. An entry whose
   * `expiresAt` is not after `now` counts as absent, and the store deletes such entries from time to
   * time. Called once per client authentication by assertion, on the request path: one write, no read.
   * @param issuer who issued the assertion (its `iss`: for a key-pair credential, the client ID).
   * @param jti the assertion's ID as the client sent it: any string, possibly long.
   * @returns `true` the first time, `false` when the pair is already recorded and unexpired (a replay).
   */
  consumeAssertionId?(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean>;

  /**
   * Optional, with `revokeFederatedCredential`, `recordFederatedCredentialUse`,
   * `findFederatedClients` and `consumeAssertionId`: a store that has all five holds federated
   * credentials; without them, adding one fails and the token endpoint refuses outside tokens.
   *
   * Adds a federated credential to an account, under the same cap as `addSecret` and atomic in the
   * same way: unless the account already has `options.maxLiveCredentials` live credentials (secrets,
   * keys and federated credentials together), and unless one of its live federated credentials has the
   * same `issuer`, `subject` and `audience` (`null` equal to `null`). A refused call stores nothing.
   * @returns the stored credential; `undefined` when the client ID is unknown; `'limit_reached'` when
   * the account has no room; `'duplicate'` when the same trust is already live on the account.
   */
  addFederatedCredential?(clientId: string, credential: NewFederatedCredentialRecord, options: AddKeyOptions): Promise<AddFederatedCredentialResult>;

  /**
   * Marks a federated credential revoked at `at`, like `revokeSecret`: a second revocation keeps the
   * first `revokedAt`, and the change is announced to watchers, so every instance refuses the tokens
   * issued through it.
   * @returns the credential, or `undefined` when the account or the credential is unknown.
   */
  revokeFederatedCredential?(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined>;

  /**
   * Records a successful use of a federated credential, like `recordSecretUse`: at most once a minute
   * per credential and per process, off the request path, never announced to watchers.
   */
  recordFederatedCredentialUse?(clientId: string, credentialId: string, at: Date): Promise<void>;

  /**
   * The client IDs of the accounts holding a live federated credential for exactly this issuer and
   * subject (whether or not the account is enabled), oldest account first, at most `limit` of them.
   * When `now` is given, a credential past its `expiresAt` at `now` is left out like a revoked one (a
   * store that ignores it makes a workload whose old credential expired, instead of being revoked,
   * ambiguous while another account trusts it). Called on the token endpoint when an outside token
   * comes without a `client_id`; back it with an index on (issuer, subject).
   */
  findFederatedClients?(issuer: string, subject: string, limit: number, now?: Date): Promise<string[]>;

  /**
   * Optional: calls `listener` with the client ID of every account that changes, including changes made
   * by other processes sharing the store. When present, the core caches account status for longer
   * (`statusCacheTtl`) and relies on these calls to drop stale entries; without it, an account's status
   * is cached for at most {@link ServiceAccountsOptions.statusCacheTtl}'s watchless bound (500 ms), so
   * revocation still takes effect everywhere within 1 second.
   * @returns a function that stops watching.
   */
  watch?(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>>;

  /**
   * Optional, with {@link AccountStore.listRevokedTokens}: adds an access token to the deny-list
   * (token revocation, RFC 7009). Revoking a token already on the list keeps the first record. A store
   * with `watch` must announce a new entry to every listener, in every process sharing the store, with
   * the key `revokedTokenChangeKey(record)` (exported by this package) in place of a client ID; the
   * bearer check of each instance then refuses the token without reading the store per request. The
   * store may delete entries some minutes after their `expiresAt` has passed (the SQL stores delete,
   * on each revocation, those whose `expiresAt` is 5 minutes or more before its `revokedAt`: that is
   * the revoking instance's clock, and an instance whose clock runs behind must still find the entry).
   * With `options.maxPerClient`, a client's live entries are capped (see {@link RevokeTokenOptions}):
   * back the count with an index on (client ID, expiry).
   * Without these two methods, tokens cannot be revoked one by one (the revocation endpoint answers
   * `unsupported_token_type`); revoking a secret or disabling an account still works.
   * @returns the stored record: `record`, or the first one when the token was already revoked; or
   * `'limit_reached'`, with nothing stored.
   */
  revokeToken?(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult>;

  /**
   * Every deny-list entry whose `expiresAt` is after `now`, in any order. Each instance calls it once at
   * start-up and again only when change announcements may have been missed (or, for a store without
   * `watch`, at most every 500 ms while tokens are being checked).
   */
  listRevokedTokens?(now: Date): Promise<RevokedTokenRecord[]>;
}
