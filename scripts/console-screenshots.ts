/**
 * The screenshots of docs/console.md: starts the example server on a scratch store, drives Debian's
 * chromium (playwright-core, nothing downloaded) through the self-service page as a hirer would, and
 * writes docs/images/console-*.png. Run it after changing the page:
 *
 *   npx tsx scripts/console-screenshots.ts
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exportSPKI, generateKeyPair } from 'jose';
import { chromium, type Page } from 'playwright-core';

const root = resolve(__dirname, '..');
const out = join(root, 'docs', 'images');
const scratch = mkdtempSync(join(tmpdir(), 'sa-console-shots-'));

/** The example server, on a free port; resolves with its URL and a stop function. */
function startExample(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(scratch, 'shots.db')}`, ADMIN_TOKEN: '', ADMIN_TENANT_TOKENS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((done, fail) => {
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const url = /Listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) done({ url, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => fail(new Error(`the example server exited (${code}) before listening`)));
  });
}

/** Creates an account through the page; resolves with its client ID and secret, read from the dialog. */
async function createAccount(page: Page, name: string, scopes: string): Promise<{ clientId: string; secret: string }> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Scopes (optional)').fill(scopes);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  const clientId = await page.getByLabel('Client ID').inputValue();
  const secret = await page.getByLabel('Client secret').inputValue();
  await page.getByRole('button', { name: 'I have copied it, close' }).click();
  return { clientId, secret };
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const server = await startExample();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 760 }, colorScheme: 'light' });
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Your name').fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/console/');

    const billingSync = await createAccount(page, 'billing-sync', 'jobs:read jobs:write');
    // Used once, so the page has a "last used" to show.
    const used = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: billingSync.clientId, client_secret: billingSync.secret }),
    });
    if (used.status !== 200) throw new Error(`the token endpoint answered ${used.status}`);
    const billing = page.getByRole('article', { name: 'billing-sync' });
    await billing.getByRole('button', { name: 'Add a public key' }).click();
    await page.getByLabel('Public key (PEM or JWK)').fill(await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey));
    await page.getByRole('button', { name: 'Add the key' }).click();
    await billing.getByRole('button', { name: 'Add a federated credential' }).click();
    await page.getByLabel('Issuer').fill('https://token.actions.githubusercontent.com');
    await page.getByLabel('Subject').fill('repo:acme/billing:ref:refs/heads/main');
    await page.getByRole('button', { name: 'Add the credential' }).click();
    await page.getByRole('status').getByText('Added federated credential').waitFor();
    await createAccount(page, 'nightly-report', 'jobs:read');
    await page.getByRole('article', { name: 'nightly-report' }).getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('article', { name: 'nightly-report' }).getByText('Disabled', { exact: true }).waitFor();
    await page.reload();
    await billing.waitFor();
    await page.screenshot({ path: join(out, 'console-list.png'), fullPage: true });

    await billing.getByRole('button', { name: 'Add a secret' }).click();
    await page.getByRole('button', { name: 'Add the secret' }).click();
    await page.getByRole('dialog', { name: /^Copy the new secret/ }).waitFor();
    await page.screenshot({ path: join(out, 'console-new-secret.png') });
    await page.getByRole('button', { name: 'I have copied it, close' }).click();

    await billing.getByRole('button', { name: /^Revoke secret/ }).first().click();
    await page.getByRole('dialog', { name: 'Are you sure?' }).waitFor();
    await page.screenshot({ path: join(out, 'console-revoke.png') });
    await page.getByRole('button', { name: 'Cancel' }).click();

    await billing.getByRole('button', { name: 'Token settings' }).click();
    const settings = page.getByRole('dialog', { name: 'Token settings of billing-sync' });
    await settings.getByLabel('Its access tokens last').selectOption({ label: '15 minutes' });
    await page.screenshot({ path: join(out, 'console-token-settings.png') });
    await settings.getByRole('button', { name: 'Cancel' }).click();

    await page.setViewportSize({ width: 390, height: 844 });
    await billing.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(out, 'console-phone.png') });
    console.log(`wrote ${out}/console-{list,new-secret,revoke,token-settings,phone}.png`);
  } finally {
    await browser.close();
    server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
