/**
 * The one token check (src/token-check/token-check.ts) that `requireBearer()` and the introspection
 * endpoint share. RFC 6750 §3.1: "invalid_token: The access token provided is expired, revoked,
 * malformed, or invalid for other reasons"; RFC 7662 §2.2: a token is active only when it "has not been
 * revoked by the resource owner, and is within its given time window of validity".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type AccountRecord } from '../../src/index.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { resolveConfig } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/create-runtime.js';
import { signAccessToken } from '../../src/access-tokens/access-token.js';
import { checkToken, type TokenCheckReceiver } from '../../src/token-check/token-check.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const START = new Date('2026-11-22T10:00:00Z');
const CLIENT_ID = 'esa_tokenchecktokencheck0001';
const SECRET_ID = 'S1';

type Outcome =
  | { kind: 'good'; clientId: string; credentialId: string; sync: boolean }
  | { kind: 'refused'; reason: string; hasClaims: boolean; hasAccount: boolean; sync: boolean }
  | { kind: 'failed'; error: unknown; sync: boolean };

type Settle = (outcome: Outcome) => void;
const recorder: TokenCheckReceiver<Settle, { sync: boolean }, undefined> = {
  good: (claims, account: AccountRecord, credential, settle, state) => settle({ kind: 'good', clientId: account.clientId, credentialId: credential.id, sync: state.sync }),
  refused: (error, claims, account, settle, state) =>
    settle({ kind: 'refused', reason: error.reason, hasClaims: claims !== undefined, hasAccount: account !== undefined, sync: state.sync }),
  failed: (error, _claims, settle, state) => settle({ kind: 'failed', error, sync: state.sync }),
};

/** The check's answer, and whether it came before `checkToken` returned. */
function check(runtime: Runtime, token: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const state = { sync: true };
    checkToken(runtime, token, recorder, resolve, state, undefined);
    state.sync = false;
  });
}

let clock = START;
let runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes) await runtime.close();
  runtimes = [];
  clock = START;
});

/** A memory store whose account reads fail while `down` is set, as an unreachable database's would. */
class FlakyStore extends MemoryAccountStore {
  down = false;
  override async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    if (this.down) throw new Error('store unreachable');
    return super.findAccount(clientId);
  }
}

async function setUp(): Promise<{ runtime: Runtime; store: FlakyStore; token: string }> {
  const store = new FlakyStore();
  const config = resolveConfig({
    store,
    issuer: 'https://api.test',
    audience: 'https://api.test/resources',
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY, kid: 'key-1' }],
    now: () => clock,
  });
  const runtime = createRuntime(config);
  runtimes.push(runtime);
  await store.createAccount({ clientId: CLIENT_ID, name: 'reporter', clientAccountId: null, scopes: [], createdAt: START, secret: { id: SECRET_ID, hash: '$2b$10$unused', createdAt: START } });
  const { token } = signAccessToken(config, { clientId: CLIENT_ID, secretId: SECRET_ID, scopes: undefined, now: START, lifetime: 60 });
  return { runtime, store, token };
}

describe('checkToken', () => {
  it('admits a good token, from the caches without waiting once they can answer', async () => {
    const { runtime, token } = await setUp();
    expect(await check(runtime, token)).toMatchObject({ kind: 'good', clientId: CLIENT_ID, credentialId: SECRET_ID });
    // The account's status and the deny-list are cached now: the same token is answered at once.
    expect(await check(runtime, token)).toEqual({ kind: 'good', clientId: CLIENT_ID, credentialId: SECRET_ID, sync: true });
  });

  it('refuses an expired token as expired, with its claims', async () => {
    const { runtime, token } = await setUp();
    clock = new Date(START.getTime() + 3_600_000); // well past `exp` plus the clock tolerance
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'expired', hasClaims: true, hasAccount: false });
  });

  it('refuses a token whose secret was revoked as revoked', async () => {
    const { runtime, store, token } = await setUp();
    await store.revokeSecret(CLIENT_ID, SECRET_ID, START);
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'revoked', hasClaims: true, hasAccount: true });
  });

  it('refuses a token of a disabled account as disabled', async () => {
    const { runtime, store, token } = await setUp();
    await store.setAccountEnabled(CLIENT_ID, false);
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'disabled', hasClaims: true, hasAccount: true });
  });

  it('refuses a token on the deny-list as revoked', async () => {
    const { runtime, store, token } = await setUp();
    const jti = runtime.verifiedTokens.verify(token, clock).jti;
    await store.revokeToken({ tokenId: jti, clientId: CLIENT_ID, revokedAt: START, expiresAt: new Date(START.getTime() + 60_000) });
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'revoked', hasClaims: true, hasAccount: true });
  });

  it('refuses a token of an unknown account as invalid', async () => {
    const { runtime } = await setUp();
    const { token } = signAccessToken(runtime.config, { clientId: 'esa_nosuchaccountnosuchacc01', secretId: SECRET_ID, scopes: undefined, now: START, lifetime: 60 });
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'invalid', hasClaims: true, hasAccount: false });
  });

  it('refuses a token with a bad signature as invalid, without claims and at once', async () => {
    const { runtime, token } = await setUp();
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
    expect(await check(runtime, forged)).toEqual({ kind: 'refused', reason: 'invalid', hasClaims: false, hasAccount: false, sync: true });
  });

  it('refuses a token naming a credential the account does not hold as invalid', async () => {
    const { runtime } = await setUp();
    const { token } = signAccessToken(runtime.config, { clientId: CLIENT_ID, secretId: 'S-unknown', scopes: undefined, now: START, lifetime: 60 });
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'invalid', hasClaims: true, hasAccount: true });
  });

  it('admits a token issued against a public key while the key is live, and refuses it as revoked once the key is', async () => {
    const { runtime, store } = await setUp();
    const publicKey = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' } as const;
    await store.addKey(CLIENT_ID, { id: 'K1', publicKey, thumbprint: 'thumbprint-k1', createdAt: START }, { maxLiveCredentials: 5 });
    const { token } = signAccessToken(runtime.config, { clientId: CLIENT_ID, secretId: 'K1', scopes: undefined, now: START, lifetime: 60 });
    expect(await check(runtime, token)).toMatchObject({ kind: 'good', clientId: CLIENT_ID, credentialId: 'K1' });
    await store.revokeKey(CLIENT_ID, 'K1', START);
    expect(await check(runtime, token)).toMatchObject({ kind: 'refused', reason: 'revoked', hasAccount: true });
  });

  // No answer is better than a wrong one: the caller answers 503.
  it('gives no answer (failed, with the claims) when the account cannot be read', async () => {
    const { runtime, store, token } = await setUp();
    await runtime.ready();
    store.down = true;
    const outcome = await check(runtime, token);
    expect(outcome).toMatchObject({ kind: 'failed', sync: false });
    expect((outcome as { error: unknown }).error).toBeInstanceOf(StoreUnavailableError);
  });
});
