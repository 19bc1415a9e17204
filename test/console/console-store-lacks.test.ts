/**
 * docs/writing-a-store.md, "Credential expiry": without `keepsCredentialExpiry`, the admin API refuses
 * to create a credential with an expiry; the self-service page, which offers only what the store can
 * hold, then offers no expiry. In a real browser, against a host's app over such a store.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { MemoryAccountStore, type AdminPrincipal } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { accountCard, browserTestsRun, collectErrors, launchBrowser } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const principal: AdminPrincipal = { actor: { id: 'u_1', name: 'Grace Hopper' }, clientAccountId: 'acme' };

/** A store written before credentials could expire. */
class StoreWithoutExpiry extends MemoryAccountStore {
  override readonly keepsCredentialExpiry = false;
}

describe.skipIf(!browserTestsRun)('the console over a store that cannot keep an expiry', TIMEOUT, () => {
  let browser: Browser;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const { app, sa } = createTestApp({ store: new StoreWithoutExpiry() });
    app.use('/console', sa.consoleRouter({ authorize: () => principal }));
    await sa.admin.createAccount({ name: 'kasse', clientAccountId: 'acme' });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('offers no expiry when creating an account or adding a secret, and sends none', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${base}/console/`);
    const card = accountCard(page, 'kasse');
    await card.waitFor();
    expect(await page.getByLabel('Its secret expires').count()).toBe(0);

    await card.getByRole('button', { name: 'Add a secret' }).click();
    const ask = page.getByRole('dialog', { name: 'Add a secret to kasse' });
    expect(await ask.getByLabel('Expires').count()).toBe(0);
    // The request goes out without an expiry (answered here, so that no secret value is made).
    const sent: unknown[] = [];
    await page.route(/\/console\/api\/service-accounts\/[^/]+\/secrets$/, async (route) => {
      sent.push(route.request().postDataJSON());
      const problem = { type: 'https://example.test/docs/errors.md#admin-secret-limit-reached', title: 'Too many live credentials', status: 409, detail: 'full' };
      await route.fulfill({ status: 409, contentType: 'application/problem+json', body: JSON.stringify(problem) });
    });
    await ask.getByRole('button', { name: 'Add the secret' }).click();
    await expect.poll(() => ask.getByRole('alert').textContent()).toMatch(/full/);
    expect(sent).toEqual([{}]);

    expect(errors).toEqual([]);
    await context.close();
  });
});
