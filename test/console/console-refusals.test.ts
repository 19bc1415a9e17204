/**
 * docs/console.md, "Translation": "When the server refuses a change, the page shows the server's own
 * words by default ... Give the refusal texts, one per kind of refusal, and the page shows yours for
 * that kind instead", and "Their English defaults are shown only when an answer carries no words of
 * its own, such as a proxy's error page." In a real browser, against a host's app of the test's own
 * with a partly translated page.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { AdminPrincipal } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { accountCard, browserTestsRun, collectErrors, launchBrowser } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const principal: AdminPrincipal = { actor: { id: 'u_1', name: 'Grace Hopper' }, clientAccountId: 'acme' };
const LIMIT_DE = 'Dieses Konto hat schon so viele gültige Zugangsdaten, wie der Server erlaubt. Widerrufen Sie zuerst eines.';

describe.skipIf(!browserTestsRun)('the console, refusals on a translated page', TIMEOUT, () => {
  let browser: Browser;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const { app, sa } = createTestApp({ maxSecretsPerAccount: 1 });
    app.use('/console', sa.consoleRouter({ authorize: () => principal, lang: 'de', strings: { errorPrefix: 'Nicht erledigt:', refusedLimit: LIMIT_DE } }));
    await sa.admin.createAccount({ name: 'kasse', clientAccountId: 'acme' }); // its first secret reaches the limit of 1
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('shows the host’s text for a kind it translated, the server’s words for one it did not, and the default text for a proxy’s error page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${base}/console/`);
    const card = accountCard(page, 'kasse');
    await card.waitFor();

    // A translated kind: the host's words, not the server's English ones.
    await card.getByRole('button', { name: 'Add a secret' }).click();
    const ask = page.getByRole('dialog', { name: 'Add a secret to kasse' });
    await ask.getByRole('button', { name: 'Add the secret' }).click();
    await expect.poll(() => ask.getByRole('alert').textContent()).toBe(`Nicht erledigt: ${LIMIT_DE}`);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });

    // Disables the account with its answer replaced by `answer`; the page then shows `shown`.
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    const expectRefusal = async (answer: { status: number; contentType: string; body: string }, shown: string): Promise<void> => {
      await page.unrouteAll();
      await page.route(/\/console\/api\/service-accounts\/[^/]+\/disable$/, (route) => route.fulfill(answer));
      await card.getByRole('button', { name: 'Disable' }).click();
      await confirm.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(() => page.getByRole('alert').allTextContents()).toContain(`Nicht erledigt: ${shown}`);
      await confirm.waitFor({ state: 'detached' });
    };

    // A kind the host did not translate: the server's own words, which name what is wrong.
    const problem = { type: 'https://example.test/docs/errors.md#admin-not-found', title: 'Not found', status: 404, detail: 'No service account has this client ID' };
    await expectRefusal({ status: 404, contentType: 'application/problem+json', body: JSON.stringify(problem) }, 'No service account has this client ID');
    // A proxy's error page, with no words of the server's: the default text of its kind.
    await expectRefusal({ status: 502, contentType: 'text/html', body: '<h1>502 Bad Gateway</h1>' }, 'The service is unavailable for a moment. Try again shortly.');
    // Any other answer without words of its own: the default text for anything else.
    await expectRefusal({ status: 418, contentType: 'text/plain', body: 'teapot' }, 'Something went wrong on the server. Try again; if it keeps failing, tell your administrator.');
    expect(errors).toEqual([]);
    await context.close();
  });
});
