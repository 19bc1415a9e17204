/**
 * @module admin-credential-life
 * The admin API's flows every credential kind shares: the live count the cap reads, adding a
 * credential (account read, store check, live twin, cap, store call, races answered, change reported)
 * and revoking one (account read, the ID looked up in the account's credentials of its kind, store
 * call, change reported). Each kind's module says only what differs: its input checks, its record,
 * its errors, and its audit event.
 */
import type { AccountRecord } from '../store/account-store.js';
import {
  CREDENTIAL_KINDS,
  credentialsOf,
  findOfKind,
  supportsKind,
  type CredentialKindName,
  type CredentialKindStores,
  type CredentialRecords,
  type NewCredentialRecords,
} from '../store/credential-kinds.js';
import type { AdminContext } from './admin-context.js';
import { accountNotFound, AdminError, credentialLimitReached, type LiveCredentials } from './admin-errors.js';

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

/** A kind's add method (`addKey`, ...), as the shared flow calls it. */
type AddMethod = (clientId: string, record: unknown, options: { maxLiveCredentials: number }) => Promise<unknown>;
/** A kind's revoke method (`revokeKey`, ...), as the shared flow calls it. */
type RevokeMethod = (clientId: string, id: string, at: Date) => Promise<{ readonly revokedAt: Date | null } | undefined>;

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
export function requireKindStore<K extends CredentialKindName>(context: AdminContext, kind: K): CredentialKindStores[K] {
  const store = context.config.store;
  if (!supportsKind(store, kind)) {
    const { noun, storeMethods } = CREDENTIAL_KINDS[kind];
    // Only the methods it lacks: a store written with some of them is told which ones to add.
    const missing = storeMethods.filter((method) => typeof store[method] !== 'function').map(String);
    const lacks = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(', ')} and ${String(missing.at(-1))}`;
    throw new AdminError('not_supported', `This account store cannot hold ${noun}s: it lacks ${lacks} (see docs/writing-a-store.md)`);
  }
  return store as CredentialKindStores[K];
}

/** What adding a credential of one kind needs besides the shared flow (the store method follows its descriptor). */
export interface AddCredentialSteps<K extends CredentialKindName> {
  readonly kind: K;
  /** The account's live credential that the new one would duplicate, if any. */
  readonly twin: (account: AccountRecord) => { readonly id: string } | undefined;
  /** The error for a live twin (`twinId` unknown when the store found it). */
  readonly alreadyRegistered: (clientId: string, twinId?: string) => AdminError;
  /** The new record (its ID and creation time made now, once the checks passed). */
  readonly record: () => NewCredentialRecords[K];
}

/**
 * Adds a credential: reads the account, checks the store holds the kind, refuses a live twin and a
 * full cap (checked here first for the clearer message; the store checks both again atomically),
 * stores the record with the kind's add method and reports the change. The caller audits and answers.
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
 *   kind: 'key',
 *   twin: (account) => keysOf(account).find((key) => key.revokedAt === null && key.thumbprint === thumbprint),
 *   alreadyRegistered: keyAlreadyRegistered,
 *   record: () => ({ id: generateKeyId(), thumbprint, publicKey, createdAt: config.now() }),
 * })
 * ```
 */
export async function addCredential<K extends CredentialKindName>(
  context: AdminContext,
  { call, requireAccount }: CredentialOperationHelpers,
  clientId: string,
  steps: AddCredentialSteps<K>,
): Promise<{ account: AccountRecord; record: NewCredentialRecords[K]; stored: CredentialRecords[K] }> {
  const limit = context.config.maxSecretsPerAccount;
  const account = await requireAccount(clientId);
  const method = CREDENTIAL_KINDS[steps.kind].add;
  const store = requireKindStore(context, steps.kind) as unknown as Record<typeof method, AddMethod>;
  const twin = steps.twin(account);
  if (twin) throw steps.alreadyRegistered(clientId, twin.id);
  const live = liveCredentials(account);
  if (liveTotal(live) >= limit) throw credentialLimitReached('credential_limit_reached', clientId, limit, live);
  const record = steps.record();
  const stored = await call(method, () => store[method](clientId, record, { maxLiveCredentials: limit }));
  if (stored === undefined) throw accountNotFound(clientId);
  // Another call (here, the CLI, another instance) took the last free place, or added the same credential, meanwhile.
  if (stored === 'limit_reached') throw credentialLimitReached('credential_limit_reached', clientId, limit);
  if (stored === 'duplicate') throw steps.alreadyRegistered(clientId);
  context.changed(clientId);
  return { account, record, stored: stored as CredentialRecords[K] };
}

/**
 * Revokes a credential: reads the account, finds the ID among its credentials of the kind (an ID of
 * another shape is none), revokes it with the kind's revoke method and reports the change. A second
 * revocation keeps the first `revokedAt`. The caller audits and answers.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 * import { keyNotFound } from './admin-errors.js'
 *
 * declare const context: AdminContext
 * declare const helpers: CredentialOperationHelpers
 * declare const clientId: string, keyId: string
 * const { account, credential, revokedAt } = await revokeCredential(context, helpers, clientId, keyId, 'key', keyNotFound)
 * ```
 */
export async function revokeCredential<K extends CredentialKindName>(
  context: AdminContext,
  { call, requireAccount }: CredentialOperationHelpers,
  clientId: string,
  id: string,
  kind: K,
  notFound: (clientId: string, id: unknown) => AdminError,
): Promise<{ account: AccountRecord; credential: CredentialRecords[K]; revokedAt: Date }> {
  const account = await requireAccount(clientId);
  const { isId, revoke } = CREDENTIAL_KINDS[kind];
  const credential = typeof id === 'string' && isId(id) ? findOfKind(account, kind, id) : undefined;
  if (!credential) throw notFound(clientId, id);
  const store = requireKindStore(context, kind) as unknown as Record<typeof revoke, RevokeMethod>;
  const revoked = await call(revoke, () => store[revoke](clientId, id, context.config.now()));
  context.changed(clientId);
  if (!revoked?.revokedAt) throw notFound(clientId, id);
  return { account, credential, revokedAt: revoked.revokedAt };
}
