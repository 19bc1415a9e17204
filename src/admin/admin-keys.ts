/**
 * @module admin-keys
 * The admin API's key-pair credentials: register a client's public key (checked, never a private key)
 * and revoke it. Each key counts against the same cap as secrets, and every change is reported to
 * {@link AdminContext.changed} at once and announced to the audit hook.
 */
import { parsePublicKey } from '../keys/parse-public-key.js';
import { generateKeyId } from '../credentials/generate-credentials.js';
import { keysOf } from '../store/credential-kinds.js';
import type { AdminContext } from './admin-context.js';
import { resolveExpiry, type CredentialExpiryInput } from './credential-expiry.js';
import { addCredential, revokeCredential, type CredentialOperationHelpers } from './admin-credential-life.js';
import { AdminError, keyAlreadyRegistered, keyNotFound } from './admin-errors.js';
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
   * (secrets, keys and federated credentials together); with `not_supported` when the store cannot
   * hold keys. `expiry` says when the key stops working on its own, as for {@link AdminApi.addSecret}.
   */
  addKey(clientId: string, publicKey: PublicKeyInput, expiry?: CredentialExpiryInput): Promise<CreatedKey>;
  /**
   * Revokes a key: assertions it signs are refused, and so is every token issued against it, on every
   * instance within 1 s.
   */
  revokeKey(clientId: string, keyId: string): Promise<RevokedKey>;
}

/** The admin API's own helpers the key methods share. */
export type KeyOperationHelpers = CredentialOperationHelpers;

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
export function buildKeyOperations(context: AdminContext, helpers: KeyOperationHelpers): KeyOperations {
  const { config, audit } = context;
  return {
    async addKey(clientId, publicKey, expiry) {
      const parsed = await parsePublicKey(publicKey);
      if ('refused' in parsed) throw new AdminError('invalid_input', `publicKey: ${parsed.refused}`);
      const expiresAt = resolveExpiry(expiry, config, 'expiresIn');
      const { account, record } = await addCredential(context, helpers, clientId, {
        kind: 'key',
        twin: (account) => keysOf(account).find((key) => key.revokedAt === null && key.thumbprint === parsed.thumbprint),
        alreadyRegistered: keyAlreadyRegistered,
        record: () => ({ id: generateKeyId(), thumbprint: parsed.thumbprint, publicKey: parsed.publicKey, createdAt: config.now(), expiresAt }),
      });
      audit({ type: 'key.created', clientId, name: account.name, keyId: record.id, thumbprint: record.thumbprint, ...(expiresAt && { expiresAt }) });
      return { id: record.id, thumbprint: record.thumbprint, createdAt: record.createdAt, expiresAt };
    },

    async revokeKey(clientId, keyId) {
      const { account, credential, revokedAt } = await revokeCredential(context, helpers, clientId, keyId, 'key', keyNotFound);
      audit({ type: 'key.revoked', clientId, name: account.name, keyId, thumbprint: credential.thumbprint });
      return { clientId, keyId, revokedAt };
    },
  };
}
