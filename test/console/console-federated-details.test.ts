/**
 * What the self-service page shows of a federated credential, in a real browser: beside its issuer
 * and subject, the audience its tokens must carry and its claim conditions, so that two credentials
 * of one issuer and subject (told apart by their audience, or narrowed by conditions) are not shown
 * alike, and the person revoking one can tell which. Every value is text, never markup. See
 * docs/console.md.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore } from '../../src/index.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';
import { browserTestsRun, collectErrors, launchBrowser } from './browser.js';

const ISSUER = 'https://token.actions.githubusercontent.com';
const SUBJECT = 'repo:acme/billing:environment:production';

describe.skipIf(!browserTestsRun)('a federated credential on the page', { timeout: 90_000 }, () => {
  it('shows its audience and its claim conditions, as text', async () => {
    const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: 'https://api.example.com', signingKeys: { alg: 'HS256', key: TEST_HS256_KEY }, secretHashRounds: 4 });
    const { clientId } = await sa.admin.createAccount({ name: 'billing-deploy', scopes: ['deploy'], clientAccountId: 'acme' });
    const plain = await sa.admin.addFederatedCredential(clientId, { issuer: ISSUER, subject: SUBJECT });
    const narrowed = await sa.admin.addFederatedCredential(clientId, {
      issuer: ISSUER,
      subject: SUBJECT,
      audience: 'https://api.example.com/<b>deploy</b>',
      claims: { repository_owner: 'acme', job_workflow_ref: 'acme/billing/.github/workflows/deploy.yml@refs/heads/main' },
    });
    const app = express();
    app.use('/console', sa.consoleRouter({ authorize: () => ({ actor: { id: 'u-ada', name: 'Ada' }, clientAccountId: 'acme' }) }));
    const server = app.listen(0, '127.0.0.1');
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors = collectErrors(page);
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`);
      const row = (id: string) => page.locator('tr', { has: page.locator('code', { hasText: id }) });
      await row(narrowed.id).waitFor();
      // Registered without an audience: its tokens must carry this server's issuer identifier; no condition.
      expect(await row(plain.id).locator('td').nth(1).innerText()).toBe(`${plain.id}\n${ISSUER} · ${SUBJECT}\naudience https://api.example.com`);
      expect(await row(narrowed.id).locator('td').nth(1).innerText()).toBe(
        `${narrowed.id}\n${ISSUER} · ${SUBJECT}\n` +
          'audience https://api.example.com/<b>deploy</b>\n' +
          'only when repository_owner = acme, job_workflow_ref = acme/billing/.github/workflows/deploy.yml@refs/heads/main',
      );
      expect(await page.locator('.esa-console b').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      server.close();
    }
  });
});
