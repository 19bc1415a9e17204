/**
 * An account's token policy on the self-service page, in a real browser against the example server:
 * the page shows the account's APIs (resources), token lifetime and DPoP requirement; its token
 * settings dialog changes the lifetime and the DPoP requirement through the admin router, sending only
 * what changed, and the token endpoint follows at once. See docs/console.md.
 */
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApi, MemoryAccountStore } from '../../src/index.js';
import { requestToken } from '../examples/example-server.js';
import { createTestApp, watchAdmin } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { accountCard, axeViolations, browserTestsRun, collectErrors, createAccount, focusedText, launchBrowser, signedInPage, tabTo, useConsoleScene, type Browser, type Page } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const ADMIN_TOKEN = 'operator-token-of-the-console-token-settings-test';
// The example's tokens live 1 hour by default, and an account may be given at most 8 hours.
const scene = useConsoleScene('sa-console-policy-', { MAX_TOKEN_TTL_SECONDS: '28800', ADMIN_TOKEN });

/** POST /oauth/token with HTTP Basic at `base`: the status, the error and expires_in. */
async function tokenFor(clientId: string, secret: string, base = scene.server.url): Promise<{ status: number; error?: string; expiresIn?: number }> {
  const res = await requestToken(base, { clientId, secret }, 'basic');
  const body = (await res.json()) as { error?: string; expires_in?: number };
  return { status: res.status, ...(body.error !== undefined && { error: body.error }), ...(body.expires_in !== undefined && { expiresIn: body.expires_in }) };
}

interface Policy {
  resources: string[];
  accessTokenLifetime: number | null;
  dpopBoundAccessTokens: boolean;
}
/** The account's policy as the admin router (the page's own API, with the page's session) answers it. */
async function policyOf(page: Page, clientId: string): Promise<Policy> {
  const res = await page.request.get(`${scene.server.url}/console/api/service-accounts/${clientId}`);
  expect(res.status()).toBe(200);
  const { resources, accessTokenLifetime, dpopBoundAccessTokens } = (await res.json()) as Policy;
  return { resources, accessTokenLifetime, dpopBoundAccessTokens };
}

/** What the account's card says under a heading of its facts. */
const fact = (page: Page, account: string, heading: string) => accountCard(page, account).locator('dt', { hasText: heading }).locator('xpath=following-sibling::dd[1]');

/** Saves the open token settings dialog and resolves with the JSON the page sent, if it sent any. */
async function save(page: Page, dialog: ReturnType<Page['getByRole']>): Promise<unknown> {
  const sent: unknown[] = [];
  const listener = (request: { url(): string; method(): string; postDataJSON(): unknown }) => {
    if (request.method() === 'POST' && request.url().endsWith('/policy')) sent.push(request.postDataJSON());
  };
  page.on('request', listener);
  await dialog.getByRole('button', { name: 'Save the settings' }).click();
  await dialog.waitFor({ state: 'detached' });
  page.off('request', listener);
  expect(sent.length).toBeLessThanOrEqual(1);
  return sent[0];
}

describe.skipIf(!browserTestsRun)('the console, an account’s token settings', TIMEOUT, () => {
  it('shows the server’s defaults, then a shorter lifetime and DPoP chosen in the dialog: the token endpoint follows at once', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Ada Lovelace', 'policy-acme');
    const { clientId, secret } = await createAccount(page, 'ledger-export');
    expect(await fact(page, 'ledger-export', 'APIs').textContent()).toBe('this server’s own (its default audience)');
    expect(await fact(page, 'ledger-export', 'Token lifetime').textContent()).toBe('the server’s default');
    expect(await fact(page, 'ledger-export', 'Proof of possession').textContent()).toBe('not required');
    expect(await tokenFor(clientId, secret)).toEqual({ status: 200, expiresIn: 3600 });

    // Offered: the server's default, the presets below the server's bound, and that bound.
    await accountCard(page, 'ledger-export').getByRole('button', { name: 'Token settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Token settings of ledger-export' });
    const lifetime = dialog.getByLabel('Its access tokens last');
    expect(await lifetime.locator('option').allTextContents()).toEqual(['The server’s default', '5 minutes', '15 minutes', '1 hour', '8 hours (the longest allowed)']);
    expect(await lifetime.inputValue()).toBe('');
    await lifetime.selectOption({ label: '15 minutes' });
    await dialog.getByLabel('Require DPoP-bound tokens').check();
    expect(await save(page, dialog)).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    await page.getByText('Saved the token settings of ledger-export.').waitFor();
    expect(await policyOf(page, clientId)).toEqual({ resources: [], accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    expect(await fact(page, 'ledger-export', 'Token lifetime').textContent()).toBe('15 minutes');
    expect(await fact(page, 'ledger-export', 'Proof of possession').textContent()).toBe('DPoP required');
    // RFC 9449 §5.2: a client that must use DPoP-bound tokens is refused a token without a proof.
    expect(await tokenFor(clientId, secret)).toEqual({ status: 400, error: 'invalid_dpop_proof' });

    // The dialog opens on the current settings; only what changes is sent.
    await accountCard(page, 'ledger-export').getByRole('button', { name: 'Token settings' }).click();
    expect(await lifetime.inputValue()).toBe('900');
    expect(await dialog.getByLabel('Require DPoP-bound tokens').isChecked()).toBe(true);
    await dialog.getByLabel('Require DPoP-bound tokens').uncheck();
    expect(await save(page, dialog)).toEqual({ dpopBoundAccessTokens: false });
    expect(await tokenFor(clientId, secret)).toEqual({ status: 200, expiresIn: 900 });
    await expect.poll(() => fact(page, 'ledger-export', 'Proof of possession').textContent()).toBe('not required');

    // Back to the server's lifetime.
    await accountCard(page, 'ledger-export').getByRole('button', { name: 'Token settings' }).click();
    await lifetime.selectOption({ label: 'The server’s default' });
    expect(await save(page, dialog)).toEqual({ accessTokenLifetime: null });
    expect(await policyOf(page, clientId)).toEqual({ resources: [], accessTokenLifetime: null, dpopBoundAccessTokens: false });
    expect(await tokenFor(clientId, secret)).toEqual({ status: 200, expiresIn: 3600 });
    await expect.poll(() => fact(page, 'ledger-export', 'Token lifetime').textContent()).toBe('the server’s default');

    // Saved unchanged: nothing is sent, and focus goes back to the button that opened the dialog.
    await accountCard(page, 'ledger-export').getByRole('button', { name: 'Token settings' }).click();
    expect(await lifetime.inputValue()).toBe('');
    expect(await save(page, dialog)).toBeUndefined();
    await expect.poll(() => focusedText(page)).toBe('Token settings');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows the APIs an operator gave the account, and a hirer cannot change them from the page', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Grace Hopper', 'policy-initech');
    const { clientId } = await createAccount(page, 'payroll-feed');
    // An operator of every client account gives it two APIs (RFC 8707 resources) through the admin router.
    const res = await fetch(`${scene.server.url}/admin/service-accounts/${clientId}/resources`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ resources: ['https://payroll.example.com', 'https://ledger.example.com'] }),
    });
    expect(res.status).toBe(200);
    await page.reload();
    await expect.poll(() => fact(page, 'payroll-feed', 'APIs').textContent()).toBe('https://payroll.example.com https://ledger.example.com');
    expect(await accountCard(page, 'payroll-feed').getByRole('button', { name: /resources|APIs/i }).count()).toBe(0);
    // The page's own API refuses a hirer's change of resources, as the admin router does.
    const refused = await page.request.post(`${scene.server.url}/console/api/service-accounts/${clientId}/resources`, {
      headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'express-service-accounts-console' },
      data: { resources: [] },
    });
    expect(refused.status()).toBe(403);
    expect((await policyOf(page, clientId)).resources).toEqual(['https://payroll.example.com', 'https://ledger.example.com']);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('is reached and used with the keyboard alone, and has no axe-core violation', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Katherine Johnson', 'policy-nasa');
    const { clientId } = await createAccount(page, 'trajectory-sync');
    expect(await axeViolations(page)).toEqual([]); // the list, with the account's token facts

    await page.getByRole('heading', { name: 'trajectory-sync' }).focus();
    await tabTo(page, /^Token settings$/);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Token settings of trajectory-sync' });
    await dialog.waitFor();
    expect(await page.evaluate<string>(`document.activeElement.getAttribute('name')`)).toBe('accessTokenLifetime');
    await page.keyboard.press('ArrowDown'); // 5 minutes
    expect(await dialog.getByLabel('Its access tokens last').inputValue()).toBe('300');
    await tabTo(page, /Require DPoP-bound tokens/, 3);
    await page.keyboard.press('Space');
    expect(await axeViolations(page)).toEqual([]); // the dialog
    await tabTo(page, /Save the settings/, 3);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => focusedText(page)).toBe('trajectory-sync');
    expect(await policyOf(page, clientId)).toEqual({ resources: [], accessTokenLifetime: 300, dpopBoundAccessTokens: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** Serves `app` on a loopback port for the tests of one describe block, with a browser of its own. */
function servedInProcess(app: Express): { base: string; browser: Browser } {
  const local = { base: '', browser: undefined as unknown as Browser };
  let server: Server | undefined;
  beforeAll(async () => {
    const listening = app.listen(0, '127.0.0.1');
    server = listening;
    await new Promise((done) => listening.once('listening', done));
    local.base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    local.browser = await launchBrowser();
  });
  afterAll(async () => {
    await local.browser?.close();
    await new Promise((done) => (server ? server.close(done) : done(undefined)));
  });
  return local;
}

/**
 * A server with DPoP turned off whose tokens may live 2 hours at most, sharing its store with an admin
 * API that allowed more: accounts made there keep what they were given.
 */
describe.skipIf(!browserTestsRun)('the console on a server without DPoP, with accounts made under looser bounds', TIMEOUT, () => {
  const store = new MemoryAccountStore();
  const { app, sa } = createTestApp({ store, dpop: false, tokenLifetime: 3600, maxAccessTokenLifetime: 7200 });
  app.use('/console', sa.consoleRouter({ authorize: () => ({ actor: { id: 'u-ada', name: 'Ada Lovelace' }, clientAccountId: 'acme' }) }));
  // An admin API that does not know the server turned DPoP off, and allows 1-day tokens.
  const looser = createAdminApi({ store, secretHashRounds: 4, tokenLifetime: 86_400, maxAccessTokenLifetime: 86_400 });
  watchAdmin(looser, 'in-its-response');
  const local = servedInProcess(app);

  it('says a lifetime above the maximum gives the maximum, and offers only to clear a DPoP requirement the server cannot meet', async () => {
    expect(sa.admin.dpopAvailable).toBe(false);
    const stuck = await looser.createAccount({ name: 'archive-sync', clientAccountId: 'acme', accessTokenLifetime: 43_200, dpopBoundAccessTokens: true });
    const plain = await looser.createAccount({ name: 'report-mailer', clientAccountId: 'acme' });
    // RFC 9449 §5.2: an account that requires DPoP-bound tokens gets none from a server that issues none.
    expect(await tokenFor(stuck.clientId, stuck.secret.value, local.base)).toEqual({ status: 400, error: 'invalid_dpop_proof' });

    const context = await local.browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${local.base}/console/`);
    expect(await fact(page, 'archive-sync', 'Token lifetime').textContent()).toBe('12 hours, more than this server now allows: its tokens get 2 hours');
    expect(await fact(page, 'archive-sync', 'Proof of possession').textContent()).toBe('DPoP required');

    await accountCard(page, 'archive-sync').getByRole('button', { name: 'Token settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Token settings of archive-sync' });
    const lifetime = dialog.getByLabel('Its access tokens last');
    expect(await lifetime.locator('option').allTextContents()).toEqual([
      'The server’s default',
      '5 minutes',
      '15 minutes',
      '1 hour',
      '2 hours (the longest allowed)',
      '12 hours, more than this server now allows: its tokens get 2 hours',
    ]);
    expect(await lifetime.inputValue()).toBe('43200');
    const dpop = dialog.getByLabel('Require DPoP-bound tokens');
    expect(await dpop.isChecked()).toBe(true);
    await dialog.getByText(/^This server issues no DPoP-bound tokens/).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await dpop.uncheck();
    expect(await save(page, dialog)).toEqual({ dpopBoundAccessTokens: false }); // the lifetime is kept as it is
    await expect.poll(() => fact(page, 'archive-sync', 'Proof of possession').textContent()).toBe('not required');
    // The account gets tokens again, of the server's longest lifetime.
    expect(await tokenFor(stuck.clientId, stuck.secret.value, local.base)).toEqual({ status: 200, expiresIn: 7200 });

    // Once cleared, or never set, DPoP is not offered on this server.
    for (const name of ['archive-sync', 'report-mailer']) {
      await accountCard(page, name).getByRole('button', { name: 'Token settings' }).click();
      const settings = page.getByRole('dialog', { name: `Token settings of ${name}` });
      await settings.getByLabel('Its access tokens last').waitFor();
      expect(await settings.getByRole('checkbox').count()).toBe(0);
      await settings.getByRole('button', { name: 'Cancel' }).click();
      await settings.waitFor({ state: 'detached' });
    }
    expect(await tokenFor(plain.clientId, plain.secret.value, local.base)).toEqual({ status: 200, expiresIn: 3600 });
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** A host's own store written with the required methods only: no keys, federated credentials or policies. */
describe.skipIf(!browserTestsRun)('the console over a store that holds secrets only', TIMEOUT, () => {
  const { app, sa } = createTestApp({ store: new ForwardingStore(new MemoryAccountStore()) });
  app.use('/console', sa.consoleRouter({ authorize: () => ({ actor: { id: 'u-ada', name: 'Ada Lovelace' }, clientAccountId: 'acme' }) }));
  const local = servedInProcess(app);

  it('offers only what the store can hold: secrets and enabling, no keys, federated credentials or token settings', async () => {
    await sa.admin.createAccount({ name: 'payroll-export', clientAccountId: 'acme' });
    const context = await local.browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${local.base}/console/`);
    const buttons = accountCard(page, 'payroll-export').locator('.esa-buttons button');
    await buttons.first().waitFor();
    expect(await buttons.allTextContents()).toEqual(['Add a secret', 'Disable']);
    expect(await fact(page, 'payroll-export', 'Token lifetime').textContent()).toBe('the server’s default');
    expect(errors).toEqual([]);
    await context.close();
  });
});
