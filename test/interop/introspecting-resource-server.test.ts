/**
 * A resource server in another process, written without this library (plain Node and fetch:
 * test/interop/fixtures/introspecting-resource-server.mjs), checks bearer tokens by introspection
 * (RFC 7662) against one example server instance, while the client revokes its token (RFC 7009) at a
 * second instance sharing the PostgreSQL store. The resource server then refuses the token
 * (docs/revocation-and-introspection.md says within 1 second; that bound is proved in
 * test/store/postgres-account-store.test.ts and test/faults/revocation-bound.test.ts, not through these
 * child processes). Needs POSTGRES_URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { bearer, getToken, killAllServers, startServer } from '../examples/example-server.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCliJson } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

withPostgres('a resource server that introspects', (connectionString) => {
  describe('a resource server in another language stack, checking tokens by introspection', { timeout: 90_000 }, () => {
    const schemas = usePostgresSchemas(connectionString);
    const children: ChildProcess[] = [];
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await killAllServers();
    });

    async function startResourceServer(env: Record<string, string>): Promise<string> {
      const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'introspecting-resource-server.mjs')], {
        env: { PATH: process.env.PATH, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      return vi.waitFor(
        () => {
          const url = /Listening on (http:\/\/\S+)/.exec(output)?.[1];
          if (!url) throw new Error(`resource server not listening yet: ${output}`);
          return url;
        },
        { timeout: 10_000, interval: 25 },
      );
    }

    it('sees a revocation made at another instance, or with the CLI', async () => {
      const schema = schemas.name('esa_rs_');
      const store = `${connectionString}${connectionString.includes('?') ? '&' : '?'}schema=${schema}`;
      const shared = { SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: 'http://api.introspection.test', TOKEN_SIGNING_KEY: randomBytes(32).toString('base64') };
      const first = await startServer({ PORT: '0', ...shared });
      const demo = first.demo!;
      expect(demo).toBeDefined();
      const second = await startServer({ PORT: '0', ...shared });
      // The resource server's own account, allowed to introspect.
      const gateway = await runCliJson<{ clientId: string; secret: { value: string } }>([
        'create', '--name', 'python-worker', '--scope', 'token:introspect', '--store', store,
      ]);
      const resource = await startResourceServer({
        INTROSPECTION_URL: `${first.url}/oauth/introspect`,
        CLIENT_ID: gateway.clientId,
        CLIENT_SECRET: gateway.secret.value,
      });
      const call = async (token: string) => {
        const res = await fetch(`${resource}/resource`, { headers: bearer(token) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };

      const token = await getToken(second.url, demo);
      expect(await call(token)).toEqual({ status: 200, body: { caller: 'demo-service-account', clientId: demo.clientId, scope: 'jobs:read jobs:write' } });

      const basic = Buffer.from(`${encodeURIComponent(demo.clientId)}:${encodeURIComponent(demo.secret)}`).toString('base64');
      const revoked = await fetch(`${second.url}/oauth/revoke`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      expect(revoked.status).toBe(200);
      const at = performance.now();
      // Up to 10 s: three processes and PostgreSQL on a loaded machine. The 1-second bound is proved in
      // test/store/postgres-account-store.test.ts and test/faults; here, that the refusal reaches a resource
      // server that introspects.
      await vi.waitFor(async () => expect((await call(token)).status).toBe(401), { timeout: 10_000, interval: 20 });
      console.log(`the resource server refused the token ${(performance.now() - at).toFixed(0)} ms after the revocation at the other instance`);

      // An operator revokes another token by its ID with the CLI (a third process on the same store).
      const other = await getToken(second.url, demo);
      expect((await call(other)).status).toBe(200);
      const jti = (JSON.parse(Buffer.from(other.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;
      expect(await runCliJson(['token', 'revoke', jti, '--store', store])).toEqual({ tokenId: jti, revokedAt: expect.any(String) });
      const byCli = performance.now();
      await vi.waitFor(async () => expect((await call(other)).status).toBe(401), { timeout: 10_000, interval: 20 });
      console.log(`the resource server refused the token ${(performance.now() - byCli).toFixed(0)} ms after token revoke on the command line`);
      expect(await first.stop()).toBe(0);
      expect(await second.stop()).toBe(0);
    });
  });
});
