/**
 * @module admin-credential-life
 * The admin API's flows every credential kind shares: the live count the cap reads, adding a
 * credential (account read, store check, live twin, cap, store call, races answered, change reported)
 * and revoking one (account read, the ID looked up in the account's credentials of its kind, store
 * call, change reported). Each kind's module says only what differs: its input checks, its record,
 * its errors, and its audit event.
 */
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import {
  CREDENTIAL_KINDS,
  credentialsOf,
  findOfKind,
  supportsKind,
  type CredentialKindName,
  type CredentialRecords,
  type FederatedCredentialStore,
  type KeyCredentialStore,
} from '../store/credential-kinds.js';
import type { AdminContext } from './admin-context.js';
import { accountNotFound, credentialLimitReached, type AdminError, type LiveCredentials } from './admin-errors.js';

/** The admin API's own helpers the credential flows share. */
export interface CredentialOperationHelpers {
  call<T>(what: string, fn: () => Promise<T>): Promise<T>;
  requireAccount(clientId: string): Promise<AccountRecord>;
}

/**
 * The live credentials of an account, by kind.
 *
 * @example
 * ```ts
 * import { credentialLimitReached } from './admin-errors.js'
 *
 * const limit = config.maxSecretsPerAccount
 * const live = liveCredentials(account)
 * if (liveTotal(live) >= limit) throw credentialLimitReached('secret_limit_reached', clientId, limit, live)
 * ```
 */
export function liveCredentials(account: AccountRecord): LiveCredentials {
  const live = { secrets: 0, keys: 0, federated: 0 };
  for (const { kind, field } of Object.values(CREDENTIAL_KINDS)) {
    live[field] = credentialsOf(account, kind).filter((credential) => credential.revokedAt === null).length;
  }
  return live;
}

/**
 * All live credentials of {@link liveCredentials}: what the cap counts.
 *
 * @example
 * ```ts
 * const full = liveTotal(liveCredentials(account)) >= config.maxSecretsPerAccount
 * ```
 */
export function liveTotal(live: LiveCredentials): number {
  return live.secrets + live.keys + live.federated;
}

/** The store, as it holds each kind. */
interface KindStores {
  readonly secret: AccountStore;
  readonly key: KeyCredentialStore;
  readonly federated: FederatedCredentialStore;
}

/**
 * The store, when it has every method the kind needs; otherwise throws, naming them (a store written
 * before the kind existed).
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 *
 * declare const context: AdminContext
 * declare const clientId: string, keyId: string
 * const store = requireKindStore(context, 'key')
 * await store.revokeKey(clientId, keyId, new Date())
 * ```
 */
export function requireKindStore<K extends CredentialKindName>(context: AdminContext, kind: K): KindStores[K] {
  const store = context.config.store;
  if (!supportsKind(store, kind)) {
    const { noun, storeMethods } = CREDENTIAL_KINDS[kind];
    const lacks = `${storeMethods.slice(0, -1).join(', ')} or ${String(storeMethods.at(-1))}`;
    throw new Error(`This account store cannot hold ${noun}s: it lacks ${lacks} (see docs/writing-a-store.md)`);
  }
  return store as KindStores[K];
}

/** What adding a credential of one kind needs besides the shared flow. */
export interface AddCredentialSteps<S extends AccountStore, N, C> {
  /** The store, when it holds the kind (throws otherwise). */
  readonly store: () => S;
  /** The account's live credential that the new one would duplicate, if any. */
  readonly twin: (account: AccountRecord) => { readonly id: string } | undefined;
  /** The error for a live twin (`twinId` unknown when the store found it). */
  readonly alreadyRegistered: (clientId: string, twinId?: string) => AdminError;
  /** The new record (its ID and creation time made now, once the checks passed). */
  readonly record: () => N;
  /** The store method, by name (as timeouts and outages report it) and call. */
  readonly method: string;
  readonly add: (store: S, record: N, options: { maxLiveCredentials: number }) => Promise<C | undefined | 'limit_reached' | 'duplicate'>;
}

/**
 * Adds a credential: reads the account, checks the store holds the kind, refuses a live twin and a
 * full cap (checked here first for the clearer message; the store checks both again atomically),
 * stores the record and reports the change. The caller audits and answers.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 * import type { PublicKeyJwk } from '../store/account-store.js'
 * import { keysOf } from '../store/credential-kinds.js'
 * import { keyAlreadyRegistered } from './admin-errors.js'
 * import { generateKeyId } from '../credentials/generate-credentials.js'
 *
 * declare const context: AdminContext
 * declare const helpers: CredentialOperationHelpers
 * declare const clientId: string, thumbprint: string
 * declare const publicKey: PublicKeyJwk
 * const config = context.config
 * const { account, record } = await addCredential(context, helpers, clientId, {
 *   store: () => requireKindStore(context, 'key'),
 *   twin: (account) => keysOf(account).find((key) => key.revokedAt === null && key.thumbprint === thumbprint),
 *   alreadyRegistered: keyAlreadyRegistered,
 *   record: () => ({ id: generateKeyId(), thumbprint, publicKey, createdAt: config.now() }),
 *   method: 'addKey',
 *   add: (store, record, options) => store.addKey(clientId, record, options),
 * })
 * ```
 */
export async function addCredential<S extends AccountStore, N, C>(
  context: AdminContext,
  { call, requireAccount }: CredentialOperationHelpers,
  clientId: string,
  steps: AddCredentialSteps<S, N, C>,
): Promise<{ account: AccountRecord; record: N; stored: C }> {
  const limit = context.config.maxSecretsPerAccount;
  const account = await requireAccount(clientId);
  const store = steps.store();
  const twin = steps.twin(account);
  if (twin) throw steps.alreadyRegistered(clientId, twin.id);
  const live = liveCredentials(account);
  if (liveTotal(live) >= limit) throw credentialLimitReached('credential_limit_reached', clientId, limit, live);
  const record = steps.record();
  const stored = await call(steps.method, () => steps.add(store, record, { maxLiveCredentials: limit }));
  if (stored === undefined) throw accountNotFound(clientId);
  // Another call (here, the CLI, another instance) took the last free place, or added the same credential, meanwhile.
  if (stored === 'limit_reached') throw credentialLimitReached('credential_limit_reached', clientId, limit);
  if (stored === 'duplicate') throw steps.alreadyRegistered(clientId);
  context.changed(clientId);
  return { account, record, stored };
}

/** What revoking a credential of one kind needs besides the shared flow. */
export interface RevokeCredentialSteps<K extends CredentialKindName, S extends AccountStore> {
  readonly kind: K;
  /** Whether the text has the shape of this kind's IDs (another text is no credential of the kind). */
  readonly isId: (id: string) => boolean;
  /** The error for an ID the account holds no credential of this kind under. */
  readonly notFound: (clientId: string, id: unknown) => AdminError;
  /** The store, when it holds the kind (throws otherwise). */
  readonly store: () => S;
  /** The store method, by name (as timeouts and outages report it) and call. */
  readonly method: string;
  readonly revoke: (store: S, id: string, at: Date) => Promise<{ readonly revokedAt: Date | null } | undefined>;
}

/**
 * Revokes a credential: reads the account, finds the ID among its credentials of the kind, revokes it
 * in the store and reports the change. A second revocation keeps the first `revokedAt`. The caller
 * audits and answers.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 * import { keyNotFound } from './admin-errors.js'
 * import { isKeyId } from '../credentials/generate-credentials.js'
 *
 * declare const context: AdminContext
 * declare const helpers: CredentialOperationHelpers
 * declare const clientId: string, keyId: string
 * const { account, credential, revokedAt } = await revokeCredential(context, helpers, clientId, keyId, {
 *   kind: 'key',
 *   isId: isKeyId,
 *   notFound: keyNotFound,
 *   store: () => requireKindStore(context, 'key'),
 *   method: 'revokeKey',
 *   revoke: (store, id, at) => store.revokeKey(clientId, id, at),
 * })
 * ```
 */
export async function revokeCredential<K extends CredentialKindName, S extends AccountStore>(
  context: AdminContext,
  { call, requireAccount }: CredentialOperationHelpers,
  clientId: string,
  id: string,
  steps: RevokeCredentialSteps<K, S>,
): Promise<{ account: AccountRecord; credential: CredentialRecords[K]; revokedAt: Date }> {
  const account = await requireAccount(clientId);
  const credential = typeof id === 'string' && steps.isId(id) ? findOfKind(account, steps.kind, id) : undefined;
  if (!credential) throw steps.notFound(clientId, id);
  const store = steps.store();
  const revoked = await call(steps.method, () => steps.revoke(store, id, context.config.now()));
  context.changed(clientId);
  if (!revoked?.revokedAt) throw steps.notFound(clientId, id);
  return { account, credential, revokedAt: revoked.revokedAt };
}
