/**
 * curl as a client (issue 6 point 7: "Tested so that curl, Node's fetch and server-side OAuth clients
 * (openid-client, simple-oauth2) are unaffected"). The real /usr/bin/curl is spawned against a test
 * app listening on 127.0.0.1:0, exactly as the README tells an integrator to try it:
 * `curl -u ID:SECRET -d grant_type=client_credentials URL/oauth/token`.
 *
 * Without curl the tests are skipped with a visible note, except under CI=true, where a missing curl
 * fails the run (the same rule as PostgreSQL and Redis).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { listenRecordingHeaders, type LiveServer, type RecordingApp } from './helpers.js';

const CURL = '/usr/bin/curl';

interface CurlResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Runs curl (ignoring any ~/.curlrc and proxy settings) and splits its `-i` output into status, headers and body. */
function curl(args: readonly string[]): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    execFile(CURL, ['-q', '--silent', '--show-error', '--include', '--noproxy', '*', '--max-time', '15', ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`curl failed: ${error.message}\n${stderr}`));
        return;
      }
      const split = stdout.indexOf('\r\n\r\n');
      const head = stdout.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head[0] ?? '')?.[1]);
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers, body: stdout.slice(split + 4) });
    });
  });
}

const noCors = (headers: Record<string, string>): string[] => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

if (!existsSync(CURL) && process.env.CI !== 'true') {
  console.warn(`${CURL} not found: the curl client tests are skipped (under CI=true they fail instead)`);
  describe.skip('curl as a client (curl not installed)', () => {
    it('needs curl', () => {});
  });
} else {
  describe('curl as a client', () => {
    let server: LiveServer;
    let close: () => Promise<void>;
    let clientId: string;
    let secret: string;
    /** The request headers curl actually sent, as the server saw them. */
    let seen: RecordingApp['seen'];

    beforeAll(async () => {
      // Under CI=true a missing curl is a failure, not a skip.
      expect(existsSync(CURL), `${CURL} is required when CI=true`).toBe(true);
      // The default configuration: the not-for-browsers guard is on.
      const { sa } = createTestApp();
      expect(sa.config.allowBrowserRequests).toBe(false);
      const account = await sa.admin.createAccount({ name: 'curl' });
      clientId = account.clientId;
      secret = account.secret.value;
      ({ server, seen, close } = await listenRecordingHeaders(sa));
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });
    afterAll(async () => close?.());

    // CONTRACT §2 row 1: "valid credentials, grant_type=client_credentials → 200 {access_token,
    // token_type: "Bearer", expires_in: 3600}"; RFC 6749 §2.3.1 client_secret_basic, as curl's -u sends it.
    it('`curl -u id:secret -d grant_type=client_credentials` gets 200 with a Bearer token, and the token opens a protected route', async () => {
      const res = await curl(['-u', `${clientId}:${secret}`, '-d', 'grant_type=client_credentials', `${server.url}/oauth/token`]);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = JSON.parse(res.body) as { access_token: string; token_type: string; expires_in: number };
      expect(body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
      expect(body.access_token.split('.')).toHaveLength(3);

      // What curl sent: Basic credentials and a form body, POST.
      const sent = seen.at(-1)!;
      expect(sent.authorization).toMatch(/^Basic /);
      expect(sent['content-type']).toBe('application/x-www-form-urlencoded');

      const api = await curl(['-H', `Authorization: Bearer ${body.access_token}`, `${server.url}/api/whoami`]);
      expect(api.status).toBe(200);
      expect(JSON.parse(api.body)).toMatchObject({ type: 'service_account', clientId, name: 'curl' });
    });

    // CONTRACT §2: "a request a browser marks (an Origin or Sec-Fetch-Site header) → 400 invalid_request
    // ... no CORS headers are ever sent"; issue 6 point 7: curl must be unaffected by that guard.
    it('is not refused by the not-for-browsers guard: curl sends no Origin or Sec-Fetch-* header, and gets no CORS header', async () => {
      const res = await curl(['-u', `${clientId}:${secret}`, '-d', 'grant_type=client_credentials', `${server.url}/oauth/token`]);
      expect(res.status).toBe(200);
      const sent = seen.at(-1)!;
      expect(Object.keys(sent).filter((h) => h === 'origin' || h.startsWith('sec-fetch-'))).toEqual([]);
      expect(sent['user-agent']).toMatch(/^curl\//);
      expect(noCors(res.headers)).toEqual([]);

      // Control: the guard is on. The same curl command with a browser's Origin header is refused.
      const marked = await curl(['-u', `${clientId}:${secret}`, '-d', 'grant_type=client_credentials', '-H', 'Origin: https://app.example', `${server.url}/oauth/token`]);
      expect(marked.status).toBe(400);
      expect(JSON.parse(marked.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect(noCors(marked.headers)).toEqual([]);
    });

    // CONTRACT §2: "credentials sent by Basic and failing → 401 invalid_client plus WWW-Authenticate: Basic realm".
    it('a wrong secret through curl -u gets 401 invalid_client with a Basic challenge', async () => {
      const res = await curl(['-u', `${clientId}:wrong`, '-d', 'grant_type=client_credentials', `${server.url}/oauth/token`]);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="/);
    });
  });
}
