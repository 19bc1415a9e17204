/**
 * The example server's jobs and activity history (examples/server/activity-store.ts) on a real SQLite
 * file and a real PostgreSQL schema (POSTGRES_URL; skipped with a note without it unless CI=true):
 * instances starting at once on an empty database all create the tables, each sees the others' entries
 * newest first, and a reopened store keeps them; activity older than the retention is pruned, in
 * batches, and jobs are kept.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openActivityStore, type ActivityStore, type Job } from '../../examples/server/activity-store.js';
import { activityEntry } from '../../examples/server/app.js';
import type { AccountStoreLocation } from '../../src/sql/index.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const actor = { type: 'service_account', clientId: 'sa_test', name: 'billing-sync' } as const;

function job(title: string, createdAt = new Date()): Job {
  return { id: randomUUID(), title, createdAt: createdAt.toISOString(), createdBy: actor };
}

const HOUR = 3_600_000;

function describeActivityStore(label: string, location: () => AccountStoreLocation): void {
  describe(`example activity store on ${label}`, () => {
    // "every instance on the same store lists the same history" (examples/README.md)
    it('four instances first used at once all work, and each lists the jobs and entries the others added, newest first', async () => {
      const stores: ActivityStore[] = [0, 1, 2, 3].map(() => openActivityStore(location()));
      try {
        const first = await Promise.allSettled(stores.map((store) => store.list()));
        expect(first.filter((result) => result.status === 'rejected')).toEqual([]);
        const jobs = [job('first'), job('second')];
        await stores[0]!.addJob(jobs[0]!);
        await stores[1]!.addJob(jobs[1]!);
        await stores[2]!.record(activityEntry('job.created', actor, { type: 'job', id: jobs[1]!.id }));
        expect((await stores[3]!.listJobs()).map((j) => j.title)).toEqual(['second', 'first']);
        expect((await stores[0]!.list()).map((e) => e.target?.id)).toEqual([jobs[1]!.id]);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });

    // examples/README.md, ACTIVITY_RETENTION_SECONDS: "the activity history keeps an entry for this long;
    // older entries are deleted in the background", a batch at a time; jobs are kept.
    it('prunes activity older than the retention, past one batch, and keeps newer activity and every job', async () => {
      const store = openActivityStore(location(), { retentionSeconds: 3600, pruneEveryMs: 0, pruneBatch: 10 });
      try {
        const now = Date.now() + 1000 * HOUR; // far ahead: entries other tests wrote now are old too
        const old = { ...activityEntry('token.issued', actor), at: new Date(now - 2 * HOUR).toISOString() };
        for (let i = 0; i < 25; i++) await store.record({ ...old, id: randomUUID() });
        const recent = { ...activityEntry('token.issued', actor), at: new Date(now - HOUR / 2).toISOString() };
        await store.record(recent);
        const oldJob = job('old job', new Date(now - 2 * HOUR));
        await store.addJob(oldJob);
        expect(await store.prune(now)).toBeGreaterThanOrEqual(25);
        expect((await store.list()).map((e) => e.id)).toEqual([recent.id]);
        expect((await store.listJobs()).map((j) => j.id)).toContain(oldJob.id);
        expect(await store.prune(now)).toBe(0);
      } finally {
        await store.close();
      }
    });

    // "a restart keeps it" (examples/README.md)
    it('a store opened again keeps what was added before', async () => {
      const before = openActivityStore(location());
      const kept = job('kept across restart');
      await before.addJob(kept);
      await before.close();
      const after = openActivityStore(location());
      try {
        expect((await after.listJobs()).map((j) => j.id)).toContain(kept.id);
      } finally {
        await after.close();
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'sa-activity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sqliteFile = join(dir, 'example.db');
describeActivityStore('SQLite', () => ({ kind: 'sqlite', filename: sqliteFile }));

// A database written before activity was pruned: its rows gain their time from their JSON, and are pruned.
it('prunes the activity a database held before retention existed', async () => {
  const filename = join(dir, 'before-retention.db');
  const db = new Database(filename);
  for (const table of ['example_jobs', 'example_activity']) db.exec(`create table ${table} (seq integer primary key autoincrement, body text not null)`);
  const old = { ...activityEntry('token.issued', actor), at: '2025-01-01T00:00:00.000Z' };
  const recent = activityEntry('token.issued', actor);
  for (const entry of [old, recent]) db.prepare('insert into example_activity (body) values (?)').run(JSON.stringify(entry));
  db.close();
  const store = openActivityStore({ kind: 'sqlite', filename }, { retentionSeconds: 86_400, pruneEveryMs: 0 });
  try {
    expect(await store.prune()).toBe(1);
    expect((await store.list()).map((e) => e.id)).toEqual([recent.id]);
  } finally {
    await store.close();
  }
});

withPostgres('example activity store on PostgreSQL', (postgresUrl) => {
  const schemas = usePostgresSchemas(postgresUrl);
  const schema = schemas.name('sa_activity_');
  // The account store's migrations create the schema before the example uses it; here the test does.
  beforeAll(() => schemas.create(schema));
  describeActivityStore('PostgreSQL', () => ({ kind: 'postgres', connectionString: postgresUrl, schema }));

  // A database written before activity was pruned: its rows gain their time from their JSON, and are pruned.
  it('prunes the activity a PostgreSQL schema held before retention existed', async () => {
    const legacy = schemas.name('sa_activity_legacy_');
    await schemas.create(legacy);
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    const old = { ...activityEntry('token.issued', actor), at: '2025-01-01T00:00:00.000Z' };
    const recent = activityEntry('token.issued', actor);
    try {
      for (const table of ['example_jobs', 'example_activity']) await client.query(`create table "${legacy}".${table} (seq bigserial primary key, body text not null)`);
      for (const entry of [old, recent]) await client.query(`insert into "${legacy}".example_activity (body) values ($1)`, [JSON.stringify(entry)]);
    } finally {
      await client.end();
    }
    const store = openActivityStore({ kind: 'postgres', connectionString: postgresUrl, schema: legacy }, { retentionSeconds: 86_400, pruneEveryMs: 0 });
    try {
      expect(await store.prune()).toBe(1);
      expect((await store.list()).map((e) => e.id)).toEqual([recent.id]);
    } finally {
      await store.close();
    }
  });
});
