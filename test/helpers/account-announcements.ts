/**
 * Records the single accounts a store's change feed announces, for tests that count them exactly.
 * `'*'` ("anything may have changed") is left out: a feed may say it whenever a read comes late, as on
 * a loaded machine, and it is allowed at any time.
 */
import type { AccountStore } from '../../src/index.js';
import { ALL_ACCOUNTS } from '../../src/sql/change-feed.js';

export async function accountAnnouncements(store: Pick<AccountStore, 'watch'>): Promise<string[]> {
  const seen: string[] = [];
  await store.watch!((clientId) => void (clientId !== ALL_ACCOUNTS && seen.push(clientId)));
  return seen;
}
