/**
 * Federated credentials end to end, as an outside suite checks them: real local OpenID Connect
 * issuers on loopback (test/helpers/local-oidc-issuer.ts), the example server run as child processes
 * on one SQLite store, and the built `service-accounts` CLI registering and revoking the credentials.
 *
 * One deployment of three instances shares the store and the issuer identifier:
 * - A (FEDERATION_ALLOW_HTTP_LOOPBACK=1) is used throughout, so its cached issuer keys carry over
 *   from check to check;
 * - B (same flag) is asked for the first time while the issuers are down or hang;
 * - C runs without the flag.
 * The checks run in order and build on each other (the credentials registered first are used by all).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import { runCliJson } from '../helpers/run-cli.js';
import { freePort } from '../helpers/free-port.js';
import { bearer, killAllServers, startServer, type ExampleServer } from './example-server.js';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const K8S_SUBJECT = 'system:serviceaccount:payments:exporter';
const GITHUB_SUBJECT = 'repo:acme/billing:ref:refs/heads/main';
/** The example's refresh interval: an unknown `kid` refetches an issuer's keys at most once per 30 s. */
const REFRESH_INTERVAL_MS = 30_000;

let dir: string;
let store: string;
let port: number;
/** The deployment's issuer identifier: the example's default for PORT, http://localhost:PORT. */
let issuer: string;
let a: ExampleServer;
let b: ExampleServer;
let c: ExampleServer;
let kubernetes: LocalIssuer;
let github: LocalIssuer;
const strangers: LocalIssuer[] = [];

/** What the CLI prints for `federated add --json` and, with the use dates, for `list`. */
interface FederatedJson {
  id: string;
  issuer: string;
  subject: string;
  audience: string | null;
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}
let exporter: { clientId: string };
let deployer: { clientId: string };
let k8sCredential: FederatedJson;
let githubCredential: FederatedJson;
let k8sAccessToken: string;
/** The Kubernetes issuer's signing key: the old one stays in use after the new one is published. */
let k8sKid: string;
/** When instance B may fetch the Kubernetes issuer's keys again, by the Retry-After of its 503 (epoch ms). */
let bRetryAt: number;

/** The CLI on the deployment's store with the server's PORT (and no TOKEN_ISSUER), as an operator would run it beside the server. */
// The CLI is told the server's issuer as the walkthrough tells it (docs/federated-credentials.md#try-it-on-one-machine).
const cli = <T>(args: readonly string[]): Promise<T> => runCliJson<T>([...args, '--store', store], { env: { PORT: String(port), TOKEN_ISSUER: issuer } });

const k8sToken = (audience = issuer): Promise<string> => kubernetes.kubernetesToken({ audience, subject: K8S_SUBJECT, kid: k8sKid });
const githubToken = (): Promise<string> => github.githubActionsToken({ audience: issuer });

/** POST /oauth/token with an outside token as client_assertion (RFC 7523 §2.2), optionally naming the client. */
function exchange(server: ExampleServer, assertion: string, clientId?: string): Promise<Response> {
  const fields: Record<string, string> = { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER, client_assertion: assertion };
  if (clientId !== undefined) fields.client_id = clientId;
  return fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** CONTRACT §2: a 200 `{access_token, token_type: "Bearer", expires_in}` with `Cache-Control: no-store`; resolves with the token. */
async function expectIssued(res: Response): Promise<string> {
  const body = (await res.json()) as Record<string, unknown>;
  expect({ status: res.status, body }).toMatchObject({ status: 200, body: { access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 } });
  expect(res.headers.get('cache-control')).toBe('no-store');
  return body.access_token as string;
}

/** CONTRACT §2: "Every error body is application/json with exactly the string fields error and error_description". */
async function expectError(res: Response, status: number, error: string): Promise<void> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect({ status: res.status, body }).toEqual({ status, body: { error, error_description: expect.any(String) } });
}

/** GET /api/whoami with an access token: the principal on 200. */
async function whoami(server: ExampleServer, accessToken: string): Promise<{ status: number; body: any; challenge: string | null }> {
  const res = await fetch(`${server.url}/api/whoami`, { headers: bearer(accessToken) });
  return { status: res.status, body: await res.json(), challenge: res.headers.get('www-authenticate') };
}

/** Resolves once `ms` milliseconds passed since `since` (epoch ms); at once when they have. */
const waitUntil = (since: number, ms: number): Promise<void> => new Promise((done) => setTimeout(done, Math.max(since + ms - Date.now(), 0)));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sa-example-federated-'));
  store = `sqlite:${join(dir, 'federated.db')}`;
  port = await freePort();
  issuer = `http://localhost:${port}`;
  [kubernetes, github] = await Promise.all([startLocalIssuer(), startLocalIssuer({ alg: 'ES256' })]);
  k8sKid = kubernetes.currentKid;
  // A first, alone: it creates the store, the signing key beside it and the demo account.
  a = await startServer({ PORT: String(port), SERVICE_ACCOUNTS_STORE: store, FEDERATION_ALLOW_HTTP_LOOPBACK: '1' });
  // CONTRACT §5: "instances of one deployment are given the same value" of TOKEN_ISSUER.
  [b, c] = await Promise.all([
    startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: issuer, FEDERATION_ALLOW_HTTP_LOOPBACK: '1' }),
    startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: issuer }),
  ]);
}, 90_000);

afterAll(async () => {
  await killAllServers();
  await Promise.all([kubernetes, github, ...strangers].filter(Boolean).map((idp) => idp.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('federated credentials through the example server and the CLI', { timeout: 60_000 }, () => {
  // CONTRACT §8: "CLI `federated add CLIENT_ID --issuer URL --subject SUB [--audience AUD] [--jwks-uri URL]`
  // prints with --json {"id", "issuer", "subject", "audience", "createdAt"}"; the audience defaults to
  // the server's issuer identifier, which the CLI shows when given it as TOKEN_ISSUER.
  it('registers a Kubernetes and a GitHub Actions credential with the CLI; the audience shown is the server’s issuer', async () => {
    exporter = await cli<{ clientId: string }>(['create', '--name', 'payments-exporter']);
    deployer = await cli<{ clientId: string }>(['create', '--name', 'billing-deploy']);
    k8sCredential = await cli<FederatedJson>(['federated', 'add', exporter.clientId, '--issuer', kubernetes.issuer, '--subject', K8S_SUBJECT]);
    githubCredential = await cli<FederatedJson>(['federated', 'add', deployer.clientId, '--issuer', github.issuer, '--subject', GITHUB_SUBJECT]);

    const metadata = (await (await fetch(`${a.url}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    expect(metadata.issuer).toBe(issuer);
    for (const [credential, idp, subject] of [
      [k8sCredential, kubernetes, K8S_SUBJECT],
      [githubCredential, github, GITHUB_SUBJECT],
    ] as const) {
      expect(Object.keys(credential)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'expiresAt']);
      expect(credential).toEqual({ id: expect.stringMatching(/^esaf_[0-9A-Za-z]{16}$/), issuer: idp.issuer, subject, audience: metadata.issuer, createdAt: expect.any(String), expiresAt: null });
      expect(new Date(credential.createdAt).toISOString()).toBe(credential.createdAt);
    }
    // Registering is no request to the issuer.
    expect(kubernetes.requests).toHaveLength(0);
    expect(github.requests).toHaveLength(0);
  });

  // Issue: "a workload obtains our access token with the token its platform already mounted";
  // CONTRACT §8: "The token endpoint accepts the outside issuer's JWT as client_assertion"
  // (client_id optional, §8 private_key_jwt: "and optionally client_id").
  it('exchanges a Kubernetes-shaped and a GitHub-Actions-shaped token for access tokens that the protected routes accept', async () => {
    k8sAccessToken = await expectIssued(await exchange(a, await k8sToken()));
    const githubAccessToken = await expectIssued(await exchange(a, await githubToken(), deployer.clientId));

    // CONTRACT §1: req.serviceAccount is {type, clientId, name, clientAccountId, scopes, secretId, tokenId};
    // the token names the credential it was issued through.
    for (const [accessToken, account, credential, name] of [
      [k8sAccessToken, exporter, k8sCredential, 'payments-exporter'],
      [githubAccessToken, deployer, githubCredential, 'billing-deploy'],
    ] as const) {
      const me = await whoami(a, accessToken);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ type: 'service_account', clientId: account.clientId, name, secretId: credential.id });
      // Instances of one deployment accept each other's tokens (CONTRACT §5).
      expect((await whoami(b, accessToken)).status).toBe(200);
    }
    // Keys were fetched once per issuer, through discovery.
    expect(kubernetes.fetches('discovery')).toBe(1);
    expect(kubernetes.fetches('jwks')).toBe(1);
    expect(github.fetches('jwks')).toBe(1);
  });

  // The audience the CLI showed is the one the server requires: a token for another audience is refused.
  it('refuses a token of the trusted issuer and subject issued for another audience', async () => {
    await expectError(await exchange(a, await k8sToken('https://elsewhere.example.com')), 401, 'invalid_client');
  });

  // CONTRACT §8: "`list` shows "federated": [{"id", "issuer", "subject", "audience", "createdAt", "lastUsedAt", "revokedAt"}]"
  it('lists each account’s federated credentials with their last use', async () => {
    const accounts = await vi.waitFor(
      async () => {
        const listed = await cli<{ clientId: string; federated: FederatedJson[] }[]>(['list']);
        // The last use is recorded off the request path.
        for (const account of listed) for (const credential of account.federated) expect(credential.lastUsedAt).not.toBeNull();
        return listed;
      },
      { timeout: 5000, interval: 200 },
    );
    for (const [account, credential] of [
      [exporter, k8sCredential],
      [deployer, githubCredential],
    ] as const) {
      const { federated } = accounts.find((listed) => listed.clientId === account.clientId)!;
      expect(federated).toHaveLength(1);
      expect(Object.keys(federated[0]!)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt']);
      expect(federated[0]).toEqual({ ...credential, lastUsedAt: expect.any(String), revokedAt: null });
    }
    // The demo account has none.
    expect(accounts.find((listed) => listed.clientId === a.demo!.clientId)?.federated).toEqual([]);
  });

  // Issue: "tests cover issuer key rotation", first half. Kubernetes (a new public key in
  // --service-account-key-file before the signing key changes) and GitHub (several keys in its JWK Set)
  // publish a new key before they sign with it. While they still sign with the old key, nothing changes.
  it('key rotation, 1: the issuer publishes a new key and still signs with the old one: tokens keep working from the cache', async () => {
    const before = kubernetes.requests.length;
    await kubernetes.rotateKeys({ keepOld: true });
    expect(kubernetes.currentKid).not.toBe(k8sKid);
    await expectIssued(await exchange(a, await k8sToken()));
    expect(kubernetes.requests).toHaveLength(before);
  });

  // Issue: "An issuer that cannot be reached while its cached keys still verify the token is no
  // outage; an issuer that cannot be reached when keys are needed is a 503 temporarily_unavailable
  // with Retry-After ... never a pass and never a crash."
  it('issuer down: the instance with cached keys still issues tokens; a fresh instance answers 503 with Retry-After', async () => {
    await kubernetes.setMode('down');
    try {
      await expectIssued(await exchange(a, await k8sToken()));
      const res = await exchange(b, await k8sToken());
      const retryAfter = res.headers.get('retry-after');
      bRetryAt = Date.now() + Number(retryAfter) * 1000;
      await expectError(res, 503, 'temporarily_unavailable');
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(REFRESH_INTERVAL_MS / 1000);
    } finally {
      await kubernetes.setMode('normal');
    }
    // B is still up and serving.
    expect((await fetch(`${b.url}/healthz`)).status).toBe(200);
  });

  // Issue: "tests cover ... an issuer that hangs": the fetch gives up after its timeout (5 s by default).
  // The hanging issuer never answers, so B's 503 is B giving up; its log says it gave up at the fetch
  // timeout. (That the timeout cuts the fetch at its value is timed with small values in
  // test/federation/issuer-key-sets.test.ts and issuer-key-sets-cache.test.ts.)
  it('issuer hanging: the instance with cached keys still issues tokens; a fresh instance answers 503 at the fetch timeout', async () => {
    await github.setMode('hang');
    try {
      await expectIssued(await exchange(a, await githubToken()));
      const before = github.requests.length;
      const res = await exchange(b, await githubToken());
      const retryAfter = res.headers.get('retry-after');
      await expectError(res, 503, 'temporarily_unavailable');
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      // What B's operator sees: the issuer did not answer within the 5 s fetch timeout.
      const unavailable = await vi.waitFor(
        () => {
          const line = b.output.split('\n').find((text) => text.includes('"federation.issuer_unavailable"') && text.includes(JSON.stringify(github.issuer)));
          if (line === undefined) throw new Error(`no federation.issuer_unavailable line for ${github.issuer} in B's log`);
          return JSON.parse(line) as { event: { issuer: string; error: string } };
        },
        { timeout: 10_000, interval: 25 },
      );
      expect(unavailable.event.error).toMatch(/did not answer within 5000 ms$/);
      // One request, given up on; not retried within the request.
      expect(github.requests).toHaveLength(before + 1);
    } finally {
      await github.setMode('normal');
    }
  });

  // Issue: "Keys are fetched only from issuers that some live federated credential names (an
  // attacker-chosen iss never causes a request)"; "a token whose iss names an issuer that no
  // credential trusts (no request made: assert it)".
  it('refuses a token of an issuer no credential trusts, without a single request to it', async () => {
    const stranger = await startLocalIssuer();
    strangers.push(stranger);
    for (const clientId of [undefined, exporter.clientId]) {
      const token = await stranger.kubernetesToken({ audience: issuer, subject: K8S_SUBJECT });
      await expectError(await exchange(a, token, clientId), 401, 'invalid_client');
    }
    expect(stranger.requests).toHaveLength(0);
  });

  // Issue: "over https (plain http only for loopback issuers when explicitly allowed)"; CONTRACT §8:
  // "The example server reads env FEDERATION_ALLOW_HTTP_LOOPBACK=1 to trust issuers on 127.0.0.1 over plain http (off by default)."
  it('without FEDERATION_ALLOW_HTTP_LOOPBACK, the loopback issuer is never fetched and its tokens are refused', async () => {
    const before = kubernetes.requests.length;
    await expectError(await exchange(c, await k8sToken()), 401, 'invalid_client');
    await expectError(await exchange(c, await k8sToken(), exporter.clientId), 401, 'invalid_client');
    expect(kubernetes.requests).toHaveLength(before);
  });

  // Issue: "refreshed on an unknown kid at most once per interval per issuer"; second half of the
  // rotation. The issuer switches to the new key once a refresh interval has passed since the
  // instance's last fetch (a real issuer publishes ahead by far longer): the unknown kid causes one
  // refetch and the new key's tokens are accepted. The fresh instance B, whose fetch failed while the
  // issuer was down, fetches again once its Retry-After has passed.
  it('key rotation, 2: the issuer signs with the new key: one refetch, then tokens keep working; the fresh instance recovers', async () => {
    const lastFetch = Math.max(...kubernetes.requests.map((request) => request.at.getTime()));
    await waitUntil(lastFetch, REFRESH_INTERVAL_MS + 1000);
    k8sKid = kubernetes.currentKid;
    const discoveries = kubernetes.fetches('discovery');
    const sets = kubernetes.fetches('jwks');
    k8sAccessToken = await expectIssued(await exchange(a, await k8sToken()));
    expect(kubernetes.fetches('discovery')).toBe(discoveries + 1);
    expect(kubernetes.fetches('jwks')).toBe(sets + 1);
    // No more fetches for the next tokens.
    await expectIssued(await exchange(a, await k8sToken()));
    expect(kubernetes.fetches('jwks')).toBe(sets + 1);
    // B retries when its 503 said it may.
    await waitUntil(bRetryAt, 500);
    await expectIssued(await exchange(b, await k8sToken()));
    expect((await whoami(a, k8sAccessToken)).status).toBe(200);
  });

  // CONTRACT §8: "`federated revoke CLIENT_ID CREDENTIAL_ID` prints {"clientId", "credentialId", "revokedAt"}";
  // issue: "Revoking a federated credential ... refuses every token issued through it on every instance within 1 second."
  it('revokes the credential with the CLI: its access tokens are refused on every instance, and so is the outside token', async () => {
    for (const server of [a, b]) expect((await whoami(server, k8sAccessToken)).status).toBe(200);
    // Both instances are polled while the CLI runs: the time it takes to close its store and exit is not
    // theirs (before the revocation they answer 200, which is polled again).
    // A failed CLI call ends the polling too: the servers serve the tests after this one.
    let cliFailed = false;
    const [revoked, refusedAt] = await Promise.all([
      cli<Record<string, string>>(['federated', 'revoke', exporter.clientId, k8sCredential.id]).catch((error: unknown) => {
        cliFailed = true;
        throw error;
      }),
      Promise.all(
        [a, b].map((server) =>
          vi.waitFor(
            async () => {
              if (cliFailed) return 0;
              const me = await whoami(server, k8sAccessToken);
              if (me.status === 200) throw new Error(`${server.url} still accepts the access token`);
              // CONTRACT §3: "token revoked (its secret revoked) ... 401 Bearer ..., error="invalid_token""
              expect(me.status).toBe(401);
              expect(me.challenge).toMatch(/^Bearer .*error="invalid_token"/);
              return Date.now();
            },
            { timeout: 20_000, interval: 50 },
          ),
        ),
      ),
    ]);
    expect(Object.keys(revoked)).toEqual(['clientId', 'credentialId', 'revokedAt']);
    expect(revoked).toEqual({ clientId: exporter.clientId, credentialId: k8sCredential.id, revokedAt: expect.any(String) });
    const revokedAt = Date.parse(revoked.revokedAt!);

    // Refused on both instances (each polled up to 20 s above: child processes on a loaded machine);
    // the 1-second bound itself is proved in test/http/federated-credentials-instances.test.ts.
    console.log(`federated credential revocation: refused ${refusedAt.map((t) => t - revokedAt).join(' and ')} ms after revokedAt (polling every 50 ms)`);

    for (const server of [a, b]) {
      await expectError(await exchange(server, await k8sToken()), 401, 'invalid_client');
      await expectError(await exchange(server, await k8sToken(), exporter.clientId), 401, 'invalid_client');
    }
    // The other credential is untouched.
    await expectIssued(await exchange(a, await githubToken()));
    const [listed] = (await cli<{ clientId: string; federated: FederatedJson[] }[]>(['list'])).filter((account) => account.clientId === exporter.clientId);
    expect(listed?.federated[0]?.revokedAt).toBe(revoked.revokedAt);
  });

  // CONTRACT §5: TOKEN_ISSUER is "the iss of its tokens"; the server trims it. Without it the CLI
  // cannot know the server's issuer (any app may set any `issuer`): it shows null, never a guess.
  it('shows TOKEN_ISSUER as the audience, as the server uses it, and null without it', async () => {
    const { clientId } = await cli<{ clientId: string }>(['create', '--name', 'audience-probe']);
    const add = async (env: Record<string, string | undefined>, subject: string) =>
      (await runCliJson<FederatedJson>(['federated', 'add', clientId, '--issuer', 'https://issuer.example.test', '--subject', subject, '--store', store], { env })).audience;
    expect(await add({ PORT: undefined, TOKEN_ISSUER: '  https://api.example.test  ' }, 'padded-issuer')).toBe('https://api.example.test');
    expect(await add({ PORT: ' 8080 ', TOKEN_ISSUER: undefined }, 'padded-port')).toBeNull();
    expect(await add({ PORT: undefined, TOKEN_ISSUER: undefined }, 'default-port')).toBeNull();
    expect(await add({ PORT: '0', TOKEN_ISSUER: undefined }, 'picked-port')).toBeNull();
  });
});
