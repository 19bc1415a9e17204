/**
 * @module open-account-store
 * `openAccountStore(url)`: one string picks the SQL store, as the CLI's `--store` and the example's
 * `SERVICE_ACCOUNTS_STORE` do.
 */
import { checkSchemaName, createPostgresAccountStore } from './postgres-account-store.js';
import type { SqlAccountStore } from './sql-account-store.js';
import { createSqliteAccountStore } from './sqlite-account-store.js';

/**
 * Where a store URL points.
 *
 * @example
 * ```ts
 * const location: AccountStoreLocation = parseAccountStoreUrl('sqlite:./.data/service-accounts.db')
 * ```
 */
export type AccountStoreLocation =
  | { readonly kind: 'sqlite'; readonly filename: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema?: string };

/**
 * Options of {@link openAccountStore} that a URL does not carry.
 *
 * @example
 * ```ts
 * openAccountStore(url, { pollIntervalMs: 500, onWatchError: (error) => console.warn('account watch failed', error) })
 * ```
 */
export interface OpenAccountStoreOptions {
  /**
   * How often `watch()` polls the change feed, in milliseconds.
   * @default 200
   */
  readonly pollIntervalMs?: number;
  /** Told about background failures of `watch()`. @default ignore */
  readonly onWatchError?: (error: unknown) => void;
}

/**
 * Parses a store URL:
 * - `sqlite:PATH` (also `sqlite://PATH`), PATH relative to the working directory or absolute;
 * - `postgres://...` or `postgresql://...`, with an optional `schema` query parameter (default `public`)
 *   that is removed before the URL reaches `pg`.
 *
 * @throws TypeError for anything else, and for a postgres URL `pg` could not read. The message names only the scheme, never a password.
 * @example
 * ```ts
 * parseAccountStoreUrl('sqlite:./.data/service-accounts.db') // { kind: 'sqlite', filename: './.data/service-accounts.db' }
 * parseAccountStoreUrl('postgres://app@db/prod?schema=sa')  // { kind: 'postgres', connectionString: 'postgres://app@db/prod', schema: 'sa' }
 * ```
 */
export function parseAccountStoreUrl(url: string): AccountStoreLocation {
  if (url.startsWith('sqlite:')) {
    let filename = url.slice('sqlite:'.length);
    if (filename.startsWith('//')) filename = filename.slice(2); // sqlite:///abs/file.db, sqlite://./file.db
    if (filename === '') throw new TypeError('Store URL "sqlite:" needs a file path, as in sqlite:./.data/service-accounts.db');
    return { kind: 'sqlite', filename };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const parsed = parsePostgresUrl(url);
    const schema = parsed.searchParams.get('schema');
    if (schema === null) return { kind: 'postgres', connectionString: url };
    return { kind: 'postgres', connectionString: withoutSchemaParameter(url), schema: checkSchemaName(schema, 'Store URL schema parameter') };
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0];
  throw new TypeError(
    `Unsupported store URL${scheme ? ` scheme "${scheme}"` : ''}: expected sqlite:PATH, postgres://... or postgresql://...`,
  );
}

/**
 * A postgres URL read as `pg` reads it: spaces and stray `%` encoded, and an empty host (a socket
 * folder given as `?host=`) allowed. What `pg` could not read is refused here, before any connection.
 *
 * @throws TypeError naming no part of the URL, which may hold a password.
 */
function parsePostgresUrl(url: string): URL {
  const text = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(url) ? encodeURI(url).replace(/%25(\d\d)/g, '%$1') : url;
  for (const candidate of [text, text.replace('@/', '@___DUMMY___/')]) {
    try {
      return new URL(candidate);
    } catch {
      // `pg` tries the URL with a dummy host next, then gives up.
    }
  }
  throw new TypeError('Store URL is not a valid postgres:// URL');
}

/** The URL without its `schema` query parameter(s), everything else exactly as written. */
function withoutSchemaParameter(url: string): string {
  const query = url.indexOf('?');
  const end = url.indexOf('#', query);
  const tail = end === -1 ? '' : url.slice(end);
  const kept = url
    .slice(query + 1, end === -1 ? undefined : end)
    .split('&')
    .filter((pair) => new URLSearchParams(pair).keys().next().value !== 'schema');
  return `${url.slice(0, query)}${kept.length > 0 && kept.join('&') !== '' ? `?${kept.join('&')}` : ''}${tail}`;
}

/**
 * Creates the SQL store a URL names (see {@link parseAccountStoreUrl}). Nothing connects until first use.
 *
 * @throws TypeError when the URL is not a supported store URL.
 * @example
 * ```ts
 * const store = openAccountStore(process.env.SERVICE_ACCOUNTS_STORE ?? 'sqlite:./.data/service-accounts.db')
 * await store.init()
 * ```
 */
export function openAccountStore(url: string, options: OpenAccountStoreOptions = {}): SqlAccountStore {
  const location = parseAccountStoreUrl(url);
  if (location.kind === 'sqlite') return createSqliteAccountStore({ filename: location.filename, ...options });
  return createPostgresAccountStore({ connectionString: location.connectionString, schema: location.schema, ...options });
}
