/**
 * @module admin-keys
 * The admin API's key-pair credentials: register a client's public key (checked, never a private key)
 * and revoke it. Each key counts against the same cap as secrets, and every change is reported to
 * {@link AdminContext.changed} at once and announced to the audit hook.
 */
import { parsePublicKey } from '../keys/parse-public-key.js';
import { generateKeyId, isKeyId } from '../credentials/generate-credentials.js';
import type { AccountRecord } from '../store/account-store.js';
import { federatedOf, keysOf, supportsKeyCredentials, type KeyCredentialStore } from '../store/credential-kinds.js';
import type { AdminContext } from './admin-context.js';
import {
  AdminError,
  accountNotFound,
  credentialLimitReached,
  keyAlreadyRegistered,
  keyNotFound,
  type LiveCredentials,
} from './admin-errors.js';
import type { CreatedKey, RevokedKey } from './admin-summaries.js';

/**
 * A public key as the admin API takes it: PEM text (`PUBLIC KEY`, `RSA PUBLIC KEY` or a
 * `CERTIFICATE`), JSON text of a JWK or of a JWK Set holding one key, or such a JWK or JWK Set object.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import { exportJWK, generateKeyPair } from 'jose'
 * import type { PublicKeyInput } from 'express-service-accounts'
 *
 * const fromFile: PublicKeyInput = readFileSync('public.pem', 'utf8')
 * const { publicKey } = await generateKeyPair('ES256')
 * const fromJose: PublicKeyInput = await exportJWK(publicKey)
 * ```
 */
export type PublicKeyInput = string | object;

/**
 * The key-pair credential methods of {@link AdminApi}.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 *
 * const { id, thumbprint } = await sa.admin.addKey(clientId, readFileSync('public.pem', 'utf8'))
 * console.log(`registered ${id}, thumbprint ${thumbprint}`)
 * await sa.admin.revokeKey(clientId, id)
 * ```
 */
export interface KeyOperations {
  /**
   * Registers a client's public key (EC P-256, RSA of 2048 bits or more, or Ed25519) as a credential
   * of the account. Fails with `invalid_input` for a private key (never stored, never repeated in the
   * message), a symmetric key or any other key or text that is not accepted; with
   * `key_already_registered` when the key is already one of the account's live keys; and with
   * `credential_limit_reached` when the account already has `maxSecretsPerAccount` live credentials
   * (secrets, keys and federated credentials together).
   */
  addKey(clientId: string, publicKey: PublicKeyInput): Promise<CreatedKey>;
  /**
   * Revokes a key: assertions it signs are refused, and so is every token issued against it, on every
   * instance within 1 s.
   */
  revokeKey(clientId: string, keyId: string): Promise<RevokedKey>;
}

/** The admin API's own helpers the key methods share. */
export interface KeyOperationHelpers {
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
  return {
    secrets: account.secrets.filter((secret) => secret.revokedAt === null).length,
    keys: keysOf(account).filter((key) => key.revokedAt === null).length,
    federated: federatedOf(account).filter((credential) => credential.revokedAt === null).length,
  };
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

function requireKeyStore(context: AdminContext): KeyCredentialStore {
  const store = context.config.store;
  if (!supportsKeyCredentials(store)) {
    throw new Error(
      'This account store cannot hold public keys: it lacks addKey, revokeKey, recordKeyUse or consumeAssertionId (see docs/writing-a-store.md)',
    );
  }
  return store;
}

/**
 * Builds {@link KeyOperations} over the admin API's context and helpers.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 *
 * declare const context: AdminContext // the admin API's settings and hooks
 * declare const helpers: KeyOperationHelpers // its `call` (readiness, timeout) and `requireAccount`
 * declare const pem: string // '-----BEGIN PUBLIC KEY-----...'
 * const keys = buildKeyOperations(context, helpers)
 * const { id, thumbprint } = await keys.addKey(clientId, pem)
 * ```
 */
export function buildKeyOperations(context: AdminContext, { call, requireAccount }: KeyOperationHelpers): KeyOperations {
  const { config, audit, changed } = context;
  const limit = config.maxSecretsPerAccount;
  return {
    async addKey(clientId, publicKey) {
      const parsed = await parsePublicKey(publicKey);
      if ('refused' in parsed) throw new AdminError('invalid_input', `publicKey: ${parsed.refused}`);
      const account = await requireAccount(clientId);
      const store = requireKeyStore(context);
      // Checked here first for the clearer message; the store checks both again atomically.
      const twin = keysOf(account).find((key) => key.revokedAt === null && key.thumbprint === parsed.thumbprint);
      if (twin) throw keyAlreadyRegistered(clientId, twin.id);
      const live = liveCredentials(account);
      if (liveTotal(live) >= limit) throw credentialLimitReached('credential_limit_reached', clientId, limit, live);
      const record = { id: generateKeyId(), thumbprint: parsed.thumbprint, publicKey: parsed.publicKey, createdAt: config.now() };
      const stored = await call('addKey', () => store.addKey(clientId, record, { maxLiveCredentials: limit }));
      if (stored === undefined) throw accountNotFound(clientId);
      // Another call (here, the CLI, another instance) took the last free place, or added the same key, meanwhile.
      if (stored === 'limit_reached') throw credentialLimitReached('credential_limit_reached', clientId, limit);
      if (stored === 'duplicate') throw keyAlreadyRegistered(clientId);
      changed(clientId);
      audit({ type: 'key.created', clientId, name: account.name, keyId: record.id, thumbprint: record.thumbprint });
      return { id: record.id, thumbprint: record.thumbprint, createdAt: record.createdAt };
    },

    async revokeKey(clientId, keyId) {
      const account = await requireAccount(clientId);
      const key = typeof keyId === 'string' && isKeyId(keyId) ? keysOf(account).find((k) => k.id === keyId) : undefined;
      if (!key) throw keyNotFound(clientId, keyId);
      const store = requireKeyStore(context);
      const revoked = await call('revokeKey', () => store.revokeKey(clientId, keyId, config.now()));
      changed(clientId);
      if (!revoked?.revokedAt) throw keyNotFound(clientId, keyId);
      audit({ type: 'key.revoked', clientId, name: account.name, keyId, thumbprint: key.thumbprint });
      return { clientId, keyId, revokedAt: revoked.revokedAt };
    },
  };
}
