/**
 * @module revoked-token-change
 * How a token revocation travels on a store's change feed: as a change key in place of a client ID
 * (`revoked-token:<expiresAt ms>:<tokenId>`), so every instance learns the token ID and how long to
 * keep it from the announcement alone, without reading the store.
 */
import type { RevokedTokenRecord } from './account-store.js';

const PREFIX = 'revoked-token:';

/**
 * How long past its `expiresAt` a deny-list entry is kept before a store deletes it: five minutes,
 * the largest clock tolerance. Whether an entry has expired is judged on the clock of the instance
 * that revokes the next token (its `revokedAt`); an instance whose clock runs behind it still checks
 * the token until its own clock reaches `expiresAt`, and one that starts meanwhile must still find
 * the entry.
 */
export const EXPIRED_ENTRY_RETENTION_MS = 300_000;

/**
 * The change key a store announces a token revocation under (see `AccountStore.revokeToken`). It
 * never collides with a client ID, which this library issues as `esa_` and letters or digits.
 *
 * @example
 * ```ts
 * import { revokedTokenChangeKey, type RevokedTokenRecord } from 'express-service-accounts'
 *
 * // In your store's revokeToken, once the entry is committed:
 * declare const record: RevokedTokenRecord
 * declare const listeners: Set<(key: string) => void>
 * for (const listener of listeners) listener(revokedTokenChangeKey(record))
 * ```
 */
export function revokedTokenChangeKey(record: Pick<RevokedTokenRecord, 'tokenId' | 'expiresAt'>): string {
  return `${PREFIX}${record.expiresAt.getTime()}:${record.tokenId}`;
}

/**
 * The token ID and expiry a change key announces, or `undefined` when the key is a client ID (or `'*'`).
 *
 * @example
 * ```ts
 * parseRevokedTokenChangeKey('revoked-token:1767225600000:0f6a1c2e') // { tokenId: '0f6a1c2e', expiresAt: 1767225600000 }
 * parseRevokedTokenChangeKey('esa_4fT0qLx2mZb8Rk1sVw7yNc3d') // undefined
 * ```
 */
export function parseRevokedTokenChangeKey(key: string): { tokenId: string; expiresAt: number } | undefined {
  if (!key.startsWith(PREFIX)) return undefined;
  const separator = key.indexOf(':', PREFIX.length);
  const expiresAt = Number(key.slice(PREFIX.length, separator));
  const tokenId = key.slice(separator + 1);
  if (separator < 0 || !Number.isSafeInteger(expiresAt) || tokenId === '') return undefined;
  return { tokenId, expiresAt };
}
