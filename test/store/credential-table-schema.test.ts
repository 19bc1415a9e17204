/**
 * @module credential-table-schema.test
 * The credential tables' `create table` is written once (src/sql/credential-table-schema.ts) for the
 * released migrations that added them, which must still run the very text they ran when released:
 * SQLite keeps that text, so the databases they create stay the same. Pinned here as released.
 */
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateTo, type Database } from '../../src/sql/schema.js';

/** The `create table` of each credential table as its migration was released (before credential expiry, version 8, added a column). */
const RELEASED = {
  secrets: `CREATE TABLE "secrets" (
        id text primary key,
        client_id text not null references "accounts" (client_id) on delete cascade,
        hash text not null,
        created_at bigint not null,
        last_used_at bigint,
        revoked_at bigint)`,
  client_keys: `CREATE TABLE "client_keys" (
      id text primary key,
      client_id text not null references "accounts" (client_id) on delete cascade,
      thumbprint text not null,
      public_jwk text not null,
      created_at bigint not null,
      last_used_at bigint,
      revoked_at bigint)`,
  federated_credentials: `CREATE TABLE "federated_credentials" (
      id text primary key,
      client_id text not null references "accounts" (client_id) on delete cascade,
      issuer text not null,
      subject text not null,
      audience text,
      jwks_uri text,
      created_at bigint not null,
      last_used_at bigint,
      revoked_at bigint)`,
};

describe('credential tables, as the released migrations created them (SQLite)', () => {
  let db: Kysely<Database> | undefined;
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
  });

  it('run the same create table and index, byte for byte, at schema version 4', async () => {
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
    await migrateTo(db, { dialect: 'sqlite', schema: 'public' }, 4);
    const master = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where name in (
      'secrets', 'client_keys', 'federated_credentials',
      'secrets_client_id_idx', 'client_keys_client_id_idx', 'federated_credentials_client_id_idx') order by name`.execute(db);
    const text = Object.fromEntries(master.rows.map((row) => [row.name, row.sql]));
    // SQLite stores the statement as it ran, with only its first words in capitals.
    expect(text).toEqual({
      ...RELEASED,
      secrets_client_id_idx: 'CREATE INDEX secrets_client_id_idx on "secrets" (client_id, created_at)',
      client_keys_client_id_idx: 'CREATE INDEX client_keys_client_id_idx on "client_keys" (client_id, created_at)',
      federated_credentials_client_id_idx: 'CREATE INDEX federated_credentials_client_id_idx on "federated_credentials" (client_id, created_at)',
    });
  });
});
