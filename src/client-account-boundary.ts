/**
 * @module client-account-boundary
 * The tenant boundary, written once for every surface that shows one caller something about a service
 * account: the admin router (what an administrator of a client account may see and change) and the
 * introspection endpoint (which tokens an introspecting account may learn of). Someone who acts for a
 * client account sees exactly that client account's service accounts; only someone who acts for none
 * (an all-tenants operator, or a service account an operator provisioned without a client account)
 * sees across client accounts.
 */

/**
 * Whether a caller acting for the client account `viewer` (`null`: for none, an operator) may learn of
 * `account`. An unknown account (`undefined`) is never within anyone's boundary. The tenant-scoped
 * admin router cannot create an account without a client account, so only an operator (the CLI,
 * `serviceAccounts.admin`, an all-tenants operator of the admin router) can make a caller of the second kind.
 *
 * @example
 * ```ts
 * withinClientAccount('acme', { clientAccountId: 'acme' })   // true
 * withinClientAccount('acme', { clientAccountId: 'globex' }) // false
 * withinClientAccount('acme', { clientAccountId: null })     // false: an operator's own account
 * withinClientAccount(null, { clientAccountId: 'globex' })   // true: an operator sees every client account
 * ```
 */
export function withinClientAccount<A extends { readonly clientAccountId: string | null }>(viewer: string | null, account: A | undefined): account is A {
  return account !== undefined && (viewer === null || account.clientAccountId === viewer);
}
