/**
 * @module account-pages
 * Cursor pagination of account lists: accounts in creation order (ties by client ID), a page of at most
 * `limit`, and an opaque cursor naming the last account shown. A cursor stays valid while accounts are
 * created meanwhile: the next page starts after the account it names, wherever that now is.
 */
import type { AccountSummary } from '../admin/admin-summaries.js';
import { AdminProblem } from './admin-problem.js';

/**
 * One page, and the cursor of the next one when there is more.
 *
 * @example
 * ```ts
 * const { accounts, nextCursor } = pageAccounts(await sa.admin.listAccounts(), { limit: 100 })
 * ```
 */
export interface AccountPage {
  readonly accounts: AccountSummary[];
  readonly nextCursor: string | undefined;
}

interface Position {
  readonly at: number;
  readonly clientId: string;
}

const compare = (a: Position, b: Position): number => a.at - b.at || (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0);
const positionOf = (account: AccountSummary): Position => ({ at: account.createdAt.getTime(), clientId: account.clientId });

function encodeCursor(position: Position): string {
  return Buffer.from(`${position.at}:${position.clientId}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Position {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,15}):(.{1,200})$/s.exec(text);
  if (!match || encodeCursor({ at: Number(match[1]), clientId: match[2]! }) !== cursor) {
    throw new AdminProblem('invalid-request', 'The cursor is not one this API gave', {
      errors: [{ pointer: '/cursor', detail: 'Use the address of the previous page’s Link rel="next" header' }],
    });
  }
  return { at: Number(match[1]), clientId: match[2]! };
}

/**
 * Sorts `accounts` and returns the page after `cursor` (from the start without one).
 * Throws a 400 `invalid-request` problem for a cursor this function did not make.
 *
 * @example
 * ```ts
 * const all = await sa.admin.listAccounts()
 * const first = pageAccounts(all, { limit: 50 })
 * const next = pageAccounts(all, { limit: 50, cursor: first.nextCursor })
 * ```
 */
export function pageAccounts(accounts: readonly AccountSummary[], options: { limit: number; cursor?: string | undefined }): AccountPage {
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const sorted = [...accounts].sort((a, b) => compare(positionOf(a), positionOf(b)));
  const rest = after === undefined ? sorted : sorted.filter((account) => compare(positionOf(account), after) > 0);
  const page = rest.slice(0, options.limit);
  const last = page[page.length - 1];
  return { accounts: page, nextCursor: rest.length > page.length && last ? encodeCursor(positionOf(last)) : undefined };
}
