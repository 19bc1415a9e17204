/**
 * @module actor
 * One shape for whoever made a request: a person signed in through the host's own authentication, or
 * a service account with a bearer token. Permission code and activity history read this one shape.
 */

/**
 * Who made a request that passed `requireActor()`: a person signed in through your app's own
 * authentication (`type: 'user'`), or a service account that presented a bearer token
 * (`type: 'service_account'`). Your permission checks and activity history read the same fields
 * for both. See docs/hirers-and-service-accounts.md.
 *
 * @example
 * ```ts
 * import type { Actor } from 'express-service-accounts'
 *
 * // One permission rule for people and service accounts: the app's roles decide, and a service
 * // account's token may narrow them further with scopes (a null `scopes` narrows nothing).
 * function mayPostJobs(actor: Actor): boolean {
 *   const byRole = actor.roles.includes('hirer')
 *   const byScope = actor.scopes === null || actor.scopes.includes('jobs:write')
 *   return byRole && byScope
 * }
 * // One line of activity history for both: the name is what people read.
 * const entry = (actor: Actor) => ({ actor: { type: actor.type, id: actor.id, name: actor.name }, at: new Date().toISOString() })
 * ```
 */
export interface Actor {
  /** `user`: signed in through the app's own authentication; `service_account`: a bearer token of a service account. */
  readonly type: 'user' | 'service_account';
  /** The person's ID in your app, or the service account's client ID. */
  readonly id: string;
  /** The display name: what activity history and audit logs show for every action. */
  readonly name: string;
  /** The client account (tenant) the actor acts for, or `null` for none. */
  readonly clientAccountId: string | null;
  /**
   * Your app's roles: for a person, those `user()` returned; for a service account, those
   * `serviceAccountRoles()` returned (none by default).
   */
  readonly roles: readonly string[];
  /**
   * The scopes a service account's token is restricted to. `null` when no scope restricts the actor:
   * a person, or a service account provisioned without scopes. `null` means "only the roles decide",
   * never "may do everything".
   */
  readonly scopes: readonly string[] | null;
}

/**
 * What your app's `user()` hook returns for a signed-in person: the fields of their {@link Actor}.
 *
 * @example
 * ```ts
 * import type { UserIdentity } from 'express-service-accounts'
 *
 * const ada: UserIdentity = { id: 'u_1842', name: 'Ada Lovelace', clientAccountId: 'acme', roles: ['hirer'] }
 * ```
 */
export interface UserIdentity {
  /** The person's ID in your app. */
  readonly id: string;
  /** Their display name. */
  readonly name: string;
  /** The client account (tenant) they act for. @default null */
  readonly clientAccountId?: string | null;
  /** Your app's roles for them. @default [] */
  readonly roles?: readonly string[];
}
