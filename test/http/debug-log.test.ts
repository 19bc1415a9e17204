/**
 * The `debug` option (docs/errors.md#debugging-401s): one line per refused token request or bearer
 * token, naming the client ID, the reason and what to do, while the client still gets only
 * `invalid_client` / `invalid_token`. On by default when NODE_ENV is unset or `development`, off
 * under `production` and `test`; an explicit option wins. Never a secret, an assertion or a token.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { MemoryAccountStore, type ServiceAccountsOptions } from '../../src/index.js';
import { assertionFields, newKeyPair, signAssertion } from '../helpers/client-assertions.js';
import { createTestApp, TEST_HS256_KEY, TEST_ISSUER } from '../helpers/create-app.js';

const options = (extra: Partial<ServiceAccountsOptions> = {}): ServiceAccountsOptions => ({
  store: new MemoryAccountStore(),
  issuer: TEST_ISSUER,
  signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
  ...extra,
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('the default of debug', () => {
  it.each([
    ['unset', undefined, true],
    ['development', 'development', true],
    ['production', 'production', false],
    ['test', 'test', false],
    ['staging', 'staging', false],
  ])('NODE_ENV %s: debug lines on = %s', (_label, nodeEnv, on) => {
    const config = resolveConfig(options(), { NODE_ENV: nodeEnv });
    expect(config.debug !== undefined).toBe(on);
  });

  it('an explicit option wins over NODE_ENV', () => {
    expect(resolveConfig(options({ debug: false }), { NODE_ENV: 'development' }).debug).toBeUndefined();
    expect(resolveConfig(options({ debug: true }), { NODE_ENV: 'production' }).debug).toBeTypeOf('function');
    const sink = (): void => {};
    expect(resolveConfig(options({ debug: sink }), { NODE_ENV: 'production' }).debug).toBe(sink);
  });

  it('refuses a debug option that is neither a boolean nor a function', () => {
    expect(() => resolveConfig(options({ debug: 'yes' as unknown as boolean }))).toThrow(/debug.*boolean or a function/);
  });
});

describe('createServiceAccounts() reads NODE_ENV once', () => {
  it('under NODE_ENV=development a failed token request is explained on console.warn', async () => {
    vi.stubEnv('NODE_ENV', 'development');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { app, sa } = createTestApp();
    const account = await sa.admin.createAccount({ name: 'reports' });
    await request(app).post('/oauth/token').auth(account.clientId, 'esas_not-the-secret').type('form').send({ grant_type: 'client_credentials' }).expect(401);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(new RegExp(`^service-accounts: token request refused \\(invalid_client\\): (wrong_secret|malformed_credentials) for `));
  });

  it('under NODE_ENV=production (and test) nothing is written', async () => {
    for (const env of ['production', 'test']) {
      vi.stubEnv('NODE_ENV', env);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const { app, sa } = createTestApp();
      const account = await sa.admin.createAccount({ name: 'reports' });
      await request(app).post('/oauth/token').auth(account.clientId, account.secret.value + 'x').type('form').send({ grant_type: 'client_credentials' }).expect(401);
      await request(app).get('/api/whoami').set('Authorization', 'Bearer not.a.token').expect(401);
      expect(warn).not.toHaveBeenCalled();
    }
  });
});

describe('the debug lines', () => {
  function debugApp() {
    const lines: string[] = [];
    const test = createTestApp({ debug: (line) => lines.push(line) });
    return { ...test, lines };
  }

  it('writes at most 20 lines per 10 s, and says how many it left out when the next window opens', async () => {
    const lines: string[] = [];
    const { app, clock } = createTestApp({ debug: (line) => lines.push(line), failureLimit: false });
    const refused = () => request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials' }).expect(401);
    for (let i = 0; i < 25; i++) await refused();
    expect(lines).toHaveLength(20);
    clock.advance(10);
    await refused();
    expect(lines.slice(20)).toEqual([
      'service-accounts: 5 more refused requests were not shown (at most 20 debug lines per 10 s)',
      expect.stringMatching(/^service-accounts: token request refused \(invalid_client\): missing_credentials for no client ID/),
    ]);
  });

  it('one line per failure, with the client ID, the reason and the fix, and never the secret presented', async () => {
    const { app, sa, lines } = debugApp();
    const account = await sa.admin.createAccount({ name: 'reports' });
    const wrong = (await sa.admin.createAccount({ name: 'other' })).secret.value; // well-formed, of another account
    const res = await request(app).post('/oauth/token').auth(account.clientId, wrong).type('form').send({ grant_type: 'client_credentials' }).expect(401);
    // The wire answer is unchanged: the reason stays on the server.
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    await sa.admin.disableAccount(account.clientId);
    await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(401);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `service-accounts: token request refused (invalid_client): wrong_secret for client ${account.clientId} via client secret — ` +
        "the secret is not one of the account's secrets; copy the secret printed when it was created (it is shown once), or add a new one " +
        '(docs/errors.md#debugging-401s)',
    );
    expect(lines[1]).toMatch(new RegExp(`^service-accounts: token request refused \\(invalid_client\\): disabled_account for client ${account.clientId} — the account is disabled`));
    for (const line of lines) {
      expect(line).not.toContain(wrong);
      expect(line).not.toContain(account.secret.value);
      expect(line.split('\n')).toHaveLength(1);
    }
  });

  it('a replayed assertion is named, with neither the assertion nor any of its parts in the line', async () => {
    const { app, sa, clock, lines } = debugApp();
    const pair = await newKeyPair('ES256');
    const account = await sa.admin.createAccount({ name: 'signer' });
    await sa.admin.addKey(account.clientId, pair.publicPem);
    const assertion = await signAssertion(pair, account.clientId, { now: Math.floor(clock.now().getTime() / 1000) });
    await request(app).post('/oauth/token').type('form').send(assertionFields(assertion)).expect(200);
    await request(app).post('/oauth/token').type('form').send(assertionFields(assertion)).expect(401);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^service-accounts: token request refused \\(invalid_client\\): replayed_assertion for client ${account.clientId} via private_key_jwt or federated token — this assertion's jti was already used; sign a fresh assertion`))]);
    for (const part of assertion.split('.')) expect(lines[0]).not.toContain(part);
  });

  it('an assertion made out to another audience is told the audience this server requires', async () => {
    const { app, sa, clock, lines } = debugApp();
    const pair = await newKeyPair('ES256');
    const account = await sa.admin.createAccount({ name: 'signer' });
    await sa.admin.addKey(account.clientId, pair.publicPem);
    const assertion = await signAssertion(pair, account.clientId, { now: Math.floor(clock.now().getTime() / 1000), claims: { aud: 'http://localhost:3000' } });
    await request(app).post('/oauth/token').type('form').send(assertionFields(assertion)).expect(401);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`wrong_audience for client ${account.clientId} via private_key_jwt or federated token`);
    expect(lines[0]).toContain(`a key-pair assertion must name exactly "${TEST_ISSUER}"`);
  });

  it('a refused bearer token is explained, without the token', async () => {
    const { app, sa, clock, lines } = debugApp();
    const account = await sa.admin.createAccount({ name: 'reports' });
    const issued = await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const token = issued.body.access_token as string;
    clock.advance(3600 + 60);
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(401);
    await request(app).get('/api/whoami').set('Authorization', 'Bearer not.a.token').expect(401);
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^service-accounts: bearer token refused \\(invalid_token\\): expired for client ${account.clientId} — the access token expired`)),
      expect.stringMatching(/^service-accounts: bearer token refused \(invalid_token\): invalid for an unverified token — /),
    ]);
    for (const line of lines) for (const part of token.split('.')) expect(line).not.toContain(part);
  });

  it('a successful request writes nothing', async () => {
    const { app, sa, lines } = debugApp();
    const account = await sa.admin.createAccount({ name: 'reports' });
    const issued = await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${issued.body.access_token}`).expect(200);
    expect(lines).toEqual([]);
  });
});

describe('docs/errors.md#debugging-401s', () => {
  const ROOT = resolve(__dirname, '..', '..');
  /** The string members of an exported union type of src/errors.ts. */
  const members = (name: string): string[] => {
    // Comments removed first: a member's TSDoc may hold a `;`.
    const source = readFileSync(join(ROOT, 'src', 'errors.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const body = new RegExp(`export type ${name} =([\\s\\S]*?);`).exec(source)?.[1] ?? '';
    return [...body.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
  };

  it('lists every reason a debug line can name, with its cause and fix', () => {
    const section = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8').split('\n## Debugging 401s\n')[1]!.split('\n## ')[0]!;
    // Each table lists its own reasons: `wrong_audience` names a refused assertion at the token endpoint and a
    // token made for another API at requireBearer(), so one row cannot stand for both.
    const [tokenEndpoint, bearer] = section.split('\n`requireBearer()`:\n') as [string, string];
    const tables: [string, string[]][] = [
      [tokenEndpoint, [...members('ClientAuthenticationFailure'), ...members('AssertionRefusal'), 'rate_limited']],
      [bearer, [...members('InvalidTokenReason'), 'insufficient_scope']],
    ];
    expect(tables.flatMap(([, reasons]) => reasons).length).toBeGreaterThan(15);
    // One table row per reason: | `reason` ... | cause | fix |
    for (const [table, reasons] of tables) {
      for (const reason of reasons) expect(table, reason).toMatch(new RegExp(`^\\| \`${reason}\` [^\\n]*\\|[^\\n]+\\|[^\\n]+\\|$`, 'm'));
    }
  });
});
