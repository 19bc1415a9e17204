/**
 * @module credential-kinds
 * The kinds of credential an account holds (secrets, public keys, federated credentials), each
 * described once. They share one life: created, listed, last used, revoked, counted by the cap on live
 * credentials, audited, summarised, and changed on every instance within a second. What differs per
 * kind is a row of {@link CREDENTIAL_KINDS}: the prefix of its IDs, where an account record holds it,
 * the store methods that hold it (a store written before the kind existed has none of them), the
 * method that records its use, and its audit events. The lookups below follow the table; they run on
 * every protected request, hence plain loops.
 *
 * Adding a kind (for example a certificate for `tls_client_auth`) means a row here, its record type
 * and store methods in account-store.ts, one client-authentication method file, and their tests:
 * see docs/architecture.md.
 */
import { FEDERATED_CREDENTIAL_ID_PREFIX, KEY_ID_PREFIX, isFederatedCredentialId, isKeyId, isSecretId } from '../credentials/generate-credentials.js';
import type {
  AccountRecord,
  AccountStore,
  FederatedCredentialRecord,
  KeyRecord,
  NewFederatedCredentialRecord,
  NewKeyRecord,
  NewSecretRecord,
  SecretRecord,
} from './account-store.js';

/** The name of a credential kind, as tokens, audit events and `lastUsed` summaries carry it. */
export type CredentialKindName = 'secret' | 'key' | 'federated';

/** What each kind's records are. */
export interface CredentialRecords {
  readonly secret: SecretRecord;
  readonly key: KeyRecord;
  readonly federated: FederatedCredentialRecord;
}

/** One kind of credential, described once. */
export interface CredentialKind<K extends CredentialKindName> {
  readonly kind: K;
  /** How people call it, in messages: `secret`, `public key`, `federated credential`. */
  readonly noun: string;
  /** The prefix of its IDs, so an ID says its kind; a secret's ID has none (it is read from the secret's value, `esas_<ID>_...`). */
  readonly idPrefix: string | undefined;
  /** Whether a text has the shape of this kind's IDs (another text is no credential of the kind). */
  readonly isId: (value: string) => boolean;
  /** Where an account record holds it (`undefined` there, from a store that predates the kind, is none). */
  readonly field: 'secrets' | 'keys' | 'federated';
  /** The store methods a store must have to hold this kind; a store lacking one holds none. */
  readonly storeMethods: readonly (keyof AccountStore)[];
  /** The store method that adds one (under the cap on live credentials). */
  readonly add: 'addSecret' | 'addKey' | 'addFederatedCredential';
  /** The store method that revokes one. */
  readonly revoke: 'revokeSecret' | 'revokeKey' | 'revokeFederatedCredential';
  /** The store method that records a use (`lastUsedAt`). */
  readonly recordUse: 'recordSecretUse' | 'recordKeyUse' | 'recordFederatedCredentialUse';
  /** Its audit event types. */
  readonly events: { readonly created: string; readonly revoked: string };
}

/**
 * Every kind, in the order an ID is looked up.
 *
 * @example
 * ```ts
 * for (const kind of Object.values(CREDENTIAL_KINDS)) console.log(kind.noun, kind.idPrefix)
 * ```
 */
export const CREDENTIAL_KINDS: { readonly [K in CredentialKindName]: CredentialKind<K> } = {
  secret: {
    kind: 'secret',
    noun: 'secret',
    idPrefix: undefined,
    isId: isSecretId,
    field: 'secrets',
    storeMethods: ['addSecret', 'revokeSecret', 'recordSecretUse'],
    add: 'addSecret',
    revoke: 'revokeSecret',
    recordUse: 'recordSecretUse',
    events: { created: 'secret.created', revoked: 'secret.revoked' },
  },
  key: {
    kind: 'key',
    noun: 'public key',
    idPrefix: KEY_ID_PREFIX,
    isId: isKeyId,
    field: 'keys',
    storeMethods: ['addKey', 'revokeKey', 'recordKeyUse', 'consumeAssertionId'],
    add: 'addKey',
    revoke: 'revokeKey',
    recordUse: 'recordKeyUse',
    events: { created: 'key.created', revoked: 'key.revoked' },
  },
  federated: {
    kind: 'federated',
    noun: 'federated credential',
    idPrefix: FEDERATED_CREDENTIAL_ID_PREFIX,
    isId: isFederatedCredentialId,
    field: 'federated',
    storeMethods: ['addFederatedCredential', 'revokeFederatedCredential', 'recordFederatedCredentialUse', 'findFederatedClients', 'consumeAssertionId'],
    add: 'addFederatedCredential',
    revoke: 'revokeFederatedCredential',
    recordUse: 'recordFederatedCredentialUse',
    events: { created: 'federated_credential.created', revoked: 'federated_credential.revoked' },
  },
};

const KIND_LIST = Object.values(CREDENTIAL_KINDS);

/**
 * The account's credentials of one kind (none from a store that predates the kind).
 *
 * @example
 * ```ts
 * const liveKeys = credentialsOf(account, 'key').filter((key) => key.revokedAt === null)
 * ```
 */
export function credentialsOf<K extends CredentialKindName>(account: AccountRecord, kind: K): readonly CredentialRecords[K][] {
  return (account[CREDENTIAL_KINDS[kind].field] ?? []) as readonly CredentialRecords[K][];
}

/**
 * Whether a store holds credentials of this kind: it has every store method the kind needs.
 *
 * @example
 * ```ts
 * if (!supportsKind(store, 'federated')) throw new Error('this store cannot hold federated credentials')
 * ```
 */
export function supportsKind(store: AccountStore, kind: CredentialKindName): boolean {
  return CREDENTIAL_KINDS[kind].storeMethods.every((method) => typeof store[method] === 'function');
}

/**
 * The account's credential of this kind with this ID.
 *
 * @example
 * ```ts
 * const secret = findOfKind(account, 'secret', 'a1B2c3D4e5F6g7H8')
 * if (secret?.revokedAt === null) console.log('live')
 * ```
 */
export function findOfKind<K extends CredentialKindName>(account: AccountRecord | undefined, kind: K, id: string): CredentialRecords[K] | undefined {
  const records = account?.[CREDENTIAL_KINDS[kind].field] as readonly CredentialRecords[K][] | undefined;
  if (records) for (const record of records) if (record.id === id) return record;
  return undefined;
}

/**
 * The account's secret with this ID.
 *
 * @example
 * ```ts
 * const secret = findSecret(account, 'a1B2c3D4e5F6g7H8')
 * if (secret?.revokedAt === null) console.log('live')
 * ```
 */
export function findSecret(account: AccountRecord | undefined, id: string): SecretRecord | undefined {
  if (account) for (const secret of account.secrets) if (secret.id === id) return secret;
  return undefined;
}

/** The account's public keys (none from a store that predates them). */
export const keysOf = (account: AccountRecord): readonly KeyRecord[] => credentialsOf(account, 'key');

/** The account's federated credentials (none from a store that predates them). */
export const federatedOf = (account: AccountRecord): readonly FederatedCredentialRecord[] => credentialsOf(account, 'federated');

/** The account's public key with this ID. */
export const findKey = (account: AccountRecord | undefined, id: string): KeyRecord | undefined => findOfKind(account, 'key', id);

/** The account's federated credential with this ID. */
export const findFederated = (account: AccountRecord | undefined, id: string): FederatedCredentialRecord | undefined => findOfKind(account, 'federated', id);

/**
 * The account's credential of any kind with this ID: a token carries the ID of the credential it was
 * issued against, so revoking that credential revokes the token.
 *
 * @example
 * ```ts
 * const credential = findCredential(account, 'esak_V1StGXR8Z5jdHi6BmyT0aQ2k')
 * const live = credential !== undefined && credential.revokedAt === null
 * ```
 */
export function findCredential(account: AccountRecord | undefined, id: string): SecretRecord | KeyRecord | FederatedCredentialRecord | undefined {
  return findSecret(account, id) ?? findKey(account, id) ?? findFederated(account, id);
}

/**
 * How many live (unrevoked) credentials of every kind the account holds: what the cap on live
 * credentials counts.
 *
 * @example
 * ```ts
 * if (countLiveCredentials(account) >= 10) throw new Error('revoke a credential first')
 * ```
 */
export function countLiveCredentials(account: AccountRecord): number {
  let live = 0;
  for (const kind of KIND_LIST) for (const credential of credentialsOf(account, kind.kind)) if (credential.revokedAt === null) live++;
  return live;
}

/**
 * An {@link AccountStore} that holds key-pair credentials: it has `addKey`, `revokeKey`,
 * `recordKeyUse` and `consumeAssertionId`.
 *
 * @example
 * ```ts
 * declare const jti: string // the ID of a verified client assertion
 * declare const expiresAt: Date // its `exp`
 * const first = supportsKeyCredentials(store) && (await store.consumeAssertionId(clientId, jti, expiresAt, new Date()))
 * ```
 */
export type KeyCredentialStore = AccountStore & Required<Pick<AccountStore, 'addKey' | 'revokeKey' | 'recordKeyUse' | 'consumeAssertionId'>>;

/**
 * An {@link AccountStore} that holds federated credentials: it has `addFederatedCredential`,
 * `revokeFederatedCredential`, `recordFederatedCredentialUse`, `findFederatedClients` and
 * `consumeAssertionId`.
 *
 * @example
 * ```ts
 * const clientIds = supportsFederatedCredentials(store) ? await store.findFederatedClients('https://token.actions.githubusercontent.com', 'repo:acme/billing:ref:refs/heads/main', 2) : []
 * ```
 */
export type FederatedCredentialStore = AccountStore &
  Required<Pick<AccountStore, 'addFederatedCredential' | 'revokeFederatedCredential' | 'recordFederatedCredentialUse' | 'findFederatedClients' | 'consumeAssertionId'>>;

/**
 * The store, as it holds each kind (what {@link supportsKind} proves of it).
 *
 * @example
 * ```ts
 * declare const keyId: string
 * const keys = supportsKind(store, 'key') ? (store as CredentialKindStores['key']) : undefined
 * await keys?.revokeKey(clientId, keyId, new Date())
 * ```
 */
export interface CredentialKindStores {
  readonly secret: AccountStore;
  readonly key: KeyCredentialStore;
  readonly federated: FederatedCredentialStore;
}

/** What a store is given to add a credential of each kind. */
export interface NewCredentialRecords {
  readonly secret: NewSecretRecord;
  readonly key: NewKeyRecord;
  readonly federated: NewFederatedCredentialRecord;
}

/**
 * Whether a store holds key-pair credentials (every method of the `key` kind present).
 *
 * @example
 * ```ts
 * if (!supportsKeyCredentials(store)) throw new Error('this store cannot hold public keys')
 * ```
 */
export function supportsKeyCredentials(store: AccountStore): store is KeyCredentialStore {
  return supportsKind(store, 'key');
}

/**
 * Whether a store holds federated credentials (every method of the `federated` kind present).
 *
 * @example
 * ```ts
 * if (!supportsFederatedCredentials(store)) throw new Error('this store cannot hold federated credentials')
 * ```
 */
export function supportsFederatedCredentials(store: AccountStore): store is FederatedCredentialStore {
  return supportsKind(store, 'federated');
}

/**
 * Whether `credential` is live and trusts exactly the same workload (issuer, subject, audience) as
 * `trust`: a second one would only duplicate it.
 *
 * @example
 * ```ts
 * const requested = { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main', audience: null }
 * const twin = credentialsOf(account, 'federated').find((existing) => isLiveTwin(existing, requested))
 * ```
 */
export function isLiveTwin(credential: FederatedCredentialRecord, trust: Pick<FederatedCredentialRecord, 'issuer' | 'subject' | 'audience'>): boolean {
  return credential.revokedAt === null && credential.issuer === trust.issuer && credential.subject === trust.subject && credential.audience === trust.audience;
}

/**
 * Whether a credential of any kind has expired at `now` (milliseconds since the epoch): its
 * `expiresAt` is set and not after `now`. An expired credential is refused like a revoked one, and so
 * are the tokens issued against it; each instance decides it from the record it holds and its own
 * clock, so nothing is written when it happens.
 *
 * @example
 * ```ts
 * const secret = findSecret(account, 'a1B2c3D4e5F6g7H8')
 * const usable = secret !== undefined && secret.revokedAt === null && !hasExpired(secret, Date.now())
 * ```
 */
export function hasExpired(credential: { readonly expiresAt?: Date | null }, now: number): boolean {
  const expiresAt = credential.expiresAt;
  return expiresAt != null && expiresAt.getTime() <= now;
}

/**
 * Whether a store keeps credential expiry (`keepsCredentialExpiry`): only then may a credential be
 * created with an `expiresAt`.
 *
 * @example
 * ```ts
 * if (!supportsCredentialExpiry(store)) throw new Error('this store cannot keep an expiry')
 * ```
 */
export function supportsCredentialExpiry(store: AccountStore): boolean {
  return store.keepsCredentialExpiry === true;
}
