/**
 * @module admin-context
 * What the admin API runs on: its resolved settings and the hooks of the instance it belongs to.
 * Its own module, so the admin API and its parts (such as the key operations) share it without
 * importing each other.
 */
import type { AuditEventInput } from '../audit/audit-events.js';
import type { ResolvedAdminConfig } from '../admin-options.js';
import type { SecretHasher } from '../secrets/secret-verifier.js';

/** What the admin API runs on: its settings, and the hooks of the instance it belongs to (if any). */
export interface AdminContext {
  readonly config: ResolvedAdminConfig;
  /** Resolves once the store is initialised; awaited before every store call. */
  ready(): Promise<void>;
  /** Emits an audit event (never throws). */
  audit(event: AuditEventInput): void;
  /** Called at once after every change to an account, so a cache can drop its status. */
  changed(clientId: string): void;
  /**
   * True when the server this admin API belongs to has DPoP turned off (`dpop: false`): an account
   * that requires DPoP-bound tokens could then get no token at all, so the admin API refuses to make one.
   */
  readonly dpopDisabled?: boolean;
  /**
   * Hashes new secrets one at a time for the whole instance, however many actors' views of the admin
   * API (`withActor`) ask at once. Made by the admin API when absent.
   */
  readonly hasher?: SecretHasher;
}
