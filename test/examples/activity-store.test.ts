/**
 * The example server's jobs and activity history (examples/server/activity-store.ts) on a real SQLite
 * file and a real PostgreSQL schema (POSTGRES_URL; skipped with a note without it unless CI=true):
 * instances starting at once on an empty database all create the tables, each sees the others' entries
 * newest first, and a reopened store keeps them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openActivityStore, type ActivityStore, type Job } from '../../examples/server/activity-store.js';
import { activityEntry } from '../../examples/server/app.js';
import type { AccountStoreLocation } from '../../src/sql/index.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const actor = { type: 'service_account', clientId: 'sa_test', name: 'billing-sync' } as const;

function job(title: string): Job {
  return { id: randomUUID(), title, createdAt: new Date().toISOString(), createdBy: actor };
}

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

withPostgres('example activity store on PostgreSQL', (postgresUrl) => {
  const schemas = usePostgresSchemas(postgresUrl);
  const schema = schemas.name('sa_activity_');
  // The account store's migrations create the schema before the example uses it; here the test does.
  beforeAll(() => schemas.create(schema));
  describeActivityStore('PostgreSQL', () => ({ kind: 'postgres', connectionString: postgresUrl, schema }));
});
