/**
 * @module admin-secrets
 * The admin API's secrets: a new secret made and hashed (its value returned once, never stored or
 * shown again), added for rotation under the shared live-credential cap, and revoked. Every change is
 * reported to {@link AdminContext.changed} at once and announced to the audit hook.
 */
import { generateSecret } from '../credentials/generate-credentials.js';
import { SecretHasher } from '../secrets/secret-verifier.js';
import type { NewSecretRecord } from '../store/account-store.js';
import type { AdminContext } from './admin-context.js';
import { liveCredentials, liveTotal, revokeCredential, type CredentialOperationHelpers } from './admin-credential-life.js';
import { accountNotFound, credentialLimitReached, secretNotFound } from './admin-errors.js';
import type { CreatedSecret, RevokedSecret } from './admin-summaries.js';
import { resolveExpiry, type CredentialExpiryInput } from './credential-expiry.js';

/**
 * The secret methods of {@link AdminApi}.
 *
 * @example
 * ```ts
 * const previous = (await sa.admin.getAccount(clientId))?.secrets[0]
 * const next = await sa.admin.addSecret(clientId, { expiresIn: '90d' })
 * console.log(next.value) // shown once: hand it to the client now
 * if (previous) await sa.admin.revokeSecret(clientId, previous.id)
 * ```
 */
export interface SecretOperations {
  /**
   * Adds a secret for rotation, expiring as `expiry` says (docs/rotation.md; never, when left out and
   * the server has no `maxCredentialLifetime`); fails with `secret_limit_reached` when the account
   * already has `maxSecretsPerAccount` live credentials (secrets, keys and federated credentials
   * together), and with `invalid_input` for an expiry that is malformed, past, or beyond the server's
   * `maxCredentialLifetime` (or missing while that requires one), and with `not_supported` for an
   * expiry the store cannot keep (it does not say `keepsCredentialExpiry`).
   */
  addSecret(clientId: string, expiry?: CredentialExpiryInput): Promise<CreatedSecret>;
  /** Revokes a secret and, with it, every token issued against it, on every instance within 1 s. */
  revokeSecret(clientId: string, secretId: string): Promise<RevokedSecret>;
}

/** A new secret as it is shown once, and as it is stored (hashed). */
export interface NewSecret {
  readonly created: CreatedSecret;
  readonly record: NewSecretRecord & { readonly expiresAt: Date | null };
}

/**
 * Makes new secrets for the admin API: {@link SecretMaker.make} for an account's first secret, and
 * the {@link SecretOperations}.
 *
 * @example
 * ```ts
 * import type { AdminContext } from './admin-context.js'
 * import type { CredentialOperationHelpers } from './admin-credential-life.js'
 *
 * declare const context: AdminContext // the admin API's settings and hooks
 * declare const helpers: CredentialOperationHelpers // its `call` (readiness, timeout) and `requireAccount`
 * const secrets = new SecretMaker(context, helpers)
 * const { created, record } = await secrets.make(null, 'acme') // record.hash is what the store keeps
 * ```
 */
export class SecretMaker {
  /** One per instance, shared by every `withActor` view: new secrets are hashed one at a time. */
  readonly hasher: SecretHasher;

  constructor(
    private readonly context: AdminContext,
    private readonly helpers: CredentialOperationHelpers,
  ) {
    this.hasher = context.hasher ?? new SecretHasher(context.config.secretHashRounds);
  }

  /** A new secret and its hash; hashes wait their turn by client account (`owner`), round-robin. */
  async make(expiresAt: Date | null, owner: string | null | undefined): Promise<NewSecret> {
    const generated = generateSecret();
    const hash = await this.hasher.hash(generated.value, owner ?? '');
    return { created: { ...generated, expiresAt }, record: { id: generated.id, hash, createdAt: this.context.config.now(), expiresAt } };
  }

  /** The {@link SecretOperations} over this maker. */
  operations(): SecretOperations {
    const { context, helpers } = this;
    const { config, audit, changed } = context;
    const limit = config.maxSecretsPerAccount;
    return {
      addSecret: async (clientId, expiry) => {
        const expiresAt = resolveExpiry(expiry, config, 'expiresIn');
        const account = await helpers.requireAccount(clientId);
        // Checked here first only to spare a bcrypt hash; the store enforces the cap atomically.
        const live = liveCredentials(account);
        if (liveTotal(live) >= limit) throw credentialLimitReached('secret_limit_reached', clientId, limit, live);
        const { created, record } = await this.make(expiresAt, account.clientAccountId);
        const cap = { maxLiveCredentials: limit, maxLiveSecrets: limit };
        const stored = await helpers.call('addSecret', () => config.store.addSecret(clientId, record, cap));
        if (stored === undefined) throw accountNotFound(clientId);
        // Another call (here, the CLI, another instance) took the last free place meanwhile.
        if (stored === 'limit_reached') throw credentialLimitReached('secret_limit_reached', clientId, limit);
        changed(clientId);
        audit({ type: 'secret.created', clientId, name: account.name, secretId: created.id, ...(expiresAt && { expiresAt }) });
        return created;
      },

      revokeSecret: async (clientId, secretId) => {
        const { account, revokedAt } = await revokeCredential(context, helpers, clientId, secretId, 'secret', secretNotFound);
        audit({ type: 'secret.revoked', clientId, name: account.name, secretId });
        return { clientId, secretId, revokedAt };
      },
    };
  }
}
