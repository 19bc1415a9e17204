/**
 * The self-service page in a real browser (Debian's chromium), as a hirer uses it, against the example
 * server: every action is checked against what the admin router and the token endpoint then answer.
 * See docs/console.md.
 */
import { exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { accountCard, browserTestsRun, createAccount, signedInPage, signIn, useConsoleScene, type Page } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const scene = useConsoleScene('sa-console-', { TOKEN_FAILURE_LIMIT: '0' });

/** POST /oauth/token with HTTP Basic; resolves with the status and the access token, if any. */
async function tokenFor(clientId: string, secret: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${scene.server.url}/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token !== undefined && { token: body.access_token }) };
}
const whoami = async (token: string): Promise<number> => (await fetch(`${scene.server.url}/api/whoami`, { headers: { Authorization: `Bearer ${token}` } })).status;

interface Summary {
  clientId: string;
  enabled: boolean;
  scopes: string[];
  secrets: { id: string; revokedAt: string | null }[];
  keys: { id: string; thumbprint: string; revokedAt: string | null }[];
  federated: { id: string; issuer: string; revokedAt: string | null }[];
}
/** The account as the admin router (the page's own API, with the page's session) answers it. */
async function adminView(page: Page, clientId: string): Promise<Summary> {
  const res = await page.request.get(`${scene.server.url}/console/api/service-accounts/${clientId}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as Summary;
}

describe.skipIf(!browserTestsRun)('the console, as a hirer uses it', TIMEOUT, () => {
  it('creates an account whose secret is shown once and works at /oauth/token, rotates it, revokes the first secret', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Ada Lovelace', 'acme', { permissions: ['clipboard-read', 'clipboard-write'] });

    await page.getByLabel('Name', { exact: true }).fill('billing-sync');
    await page.getByLabel('Scopes (optional)').fill('jobs:read jobs:write');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of billing-sync now' });
    await expect.poll(() => dialog.getByText('This is the only time the secret is shown').isVisible()).toBe(true);
    const clientId = await dialog.getByLabel('Client ID').inputValue();
    const first = await dialog.getByLabel('Client secret').inputValue();
    expect(first).toMatch(/^esas_/);
    // The copy button puts the secret on the clipboard.
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(first);
    await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Gone from the page and never stored: not in the DOM, the URL or the browser's storage.
    expect(await page.content()).not.toContain(first);
    expect(page.url()).not.toContain(first);
    expect(await page.evaluate<number[]>('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
    await page.evaluate(`navigator.clipboard.writeText('')`);

    const card = accountCard(page, 'billing-sync');
    await expect.poll(() => card.getByText('jobs:read jobs:write').isVisible()).toBe(true);
    await expect.poll(() => card.getByText('Enabled', { exact: true }).isVisible()).toBe(true);
    const firstToken = await tokenFor(clientId, first);
    expect(firstToken.status).toBe(200);
    expect(await whoami(firstToken.token!)).toBe(200);

    // Rotation: a second secret, shown once too.
    await card.getByRole('button', { name: 'Add a secret' }).click();
    await page.getByRole('dialog', { name: 'Add a secret to billing-sync' }).getByRole('button', { name: 'Add the secret' }).click();
    const second = page.getByRole('dialog', { name: 'Copy the new secret of billing-sync now' });
    const secondSecret = await second.getByLabel('Client secret').inputValue();
    await second.getByRole('button', { name: 'I have copied it, close' }).click();
    await second.waitFor({ state: 'detached' });
    const secondToken = await tokenFor(clientId, secondSecret);
    expect(secondToken.status).toBe(200);

    // Revoking the first secret asks first, saying what it does; the page then shows it revoked.
    const [firstId, secondId] = (await adminView(page, clientId)).secrets.map((s) => s.id);
    await card.getByRole('button', { name: `Revoke secret ${firstId}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    await confirm.getByText('Revoking this secret revokes every token issued with it').waitFor();
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').getByText(`Revoked secret ${firstId} of billing-sync.`).waitFor();
    expect(await card.getByRole('button', { name: `Revoke secret ${firstId}` }).count()).toBe(0);
    const view = await adminView(page, clientId);
    expect(view.secrets.find((s) => s.id === firstId)!.revokedAt).not.toBeNull();
    expect(view.secrets.find((s) => s.id === secondId)!.revokedAt).toBeNull();
    // Its token is refused, and so is the secret; the second secret and its token keep working.
    expect(await whoami(firstToken.token!)).toBe(401);
    expect((await tokenFor(clientId, first)).status).toBe(401);
    expect(await whoami(secondToken.token!)).toBe(200);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('adds public keys (pasted PEM, JWK from a file), adds and revokes a federated credential, disables and enables the account', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Grace Hopper', 'initech');
    const { clientId, secret } = await createAccount(page, 'ci-deployer');
    const card = accountCard(page, 'ci-deployer');

    // A PEM pasted in.
    const pem = await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey);
    await card.getByRole('button', { name: 'Add a public key' }).click();
    let dialog = page.getByRole('dialog', { name: 'Add a public key to ci-deployer' });
    await dialog.getByLabel('Public key (PEM or JWK)').fill(pem);
    await dialog.getByRole('button', { name: 'Add the key' }).click();
    await dialog.waitFor({ state: 'detached' });
    let view = await adminView(page, clientId);
    expect(view.keys).toHaveLength(1);
    await card.getByText(view.keys[0]!.thumbprint).waitFor();

    // A JWK chosen from a file.
    const jwk = await exportJWK((await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 })).publicKey);
    await card.getByRole('button', { name: 'Add a public key' }).click();
    dialog = page.getByRole('dialog', { name: 'Add a public key to ci-deployer' });
    await dialog.getByLabel('Public key file').setInputFiles({ name: 'client.jwk', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(jwk)) });
    await expect.poll(() => dialog.getByLabel('Public key (PEM or JWK)').inputValue()).toContain('"kty":"RSA"');
    await dialog.getByRole('button', { name: 'Add the key' }).click();
    await dialog.waitFor({ state: 'detached' });
    view = await adminView(page, clientId);
    expect(view.keys).toHaveLength(2);

    // The same key again: the admin router's problem is shown as a readable message, in the dialog.
    await card.getByRole('button', { name: 'Add a public key' }).click();
    dialog = page.getByRole('dialog', { name: 'Add a public key to ci-deployer' });
    await dialog.getByLabel('Public key (PEM or JWK)').fill(pem);
    await dialog.getByRole('button', { name: 'Add the key' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/^Not done: .*already/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    // A federated credential, then revoked.
    await card.getByRole('button', { name: 'Add a federated credential' }).click();
    dialog = page.getByRole('dialog', { name: 'Add a federated credential to ci-deployer' });
    await dialog.getByLabel('Issuer').fill('https://token.actions.githubusercontent.com');
    await dialog.getByLabel('Subject').fill('repo:initech/app:ref:refs/heads/main');
    await dialog.getByRole('button', { name: 'Add the credential' }).click();
    await dialog.waitFor({ state: 'detached' });
    view = await adminView(page, clientId);
    expect(view.federated.map((f) => f.issuer)).toEqual(['https://token.actions.githubusercontent.com']);
    const federatedId = view.federated[0]!.id;
    await card.getByRole('button', { name: `Revoke federated ${federatedId}` }).click();
    const confirmFederated = page.getByRole('dialog', { name: 'Are you sure?' });
    await confirmFederated.getByText('every token issued with it is refused').waitFor();
    await confirmFederated.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').getByText(`Revoked federated credential ${federatedId} of ci-deployer.`).waitFor();
    expect((await adminView(page, clientId)).federated[0]!.revokedAt).not.toBeNull();

    // Disable: confirmed, said what it does; the token endpoint refuses the account until it is enabled.
    const token = await tokenFor(clientId, secret);
    expect(token.status).toBe(200);
    await card.getByRole('button', { name: 'Disable' }).click();
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    await confirm.getByText('Every token of the account is refused').waitFor();
    await confirm.getByRole('button', { name: 'Disable' }).click();
    await card.getByText('Disabled', { exact: true }).waitFor();
    expect((await adminView(page, clientId)).enabled).toBe(false);
    expect(await whoami(token.token!)).toBe(401);
    expect((await tokenFor(clientId, secret)).status).toBe(401);
    await card.getByRole('button', { name: 'Enable' }).click();
    await card.getByText('Enabled', { exact: true }).waitFor();
    expect((await tokenFor(clientId, secret)).status).toBe(200);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a hirer of another client account none of it, and refuses their changes to it', async () => {
    const ada = await scene.browser.newContext();
    const adaPage = await ada.newPage();
    await signIn(adaPage, scene.server.url, 'Ada Lovelace', 'umbrella');
    const { clientId } = await createAccount(adaPage, 'umbrella-reports');

    const bob = await scene.browser.newContext();
    const page = await bob.newPage();
    await signIn(page, scene.server.url, 'Bob', 'globex');
    await page.getByText('No service accounts yet.').waitFor();
    expect(await page.getByRole('article').count()).toBe(0);
    expect(await page.content()).not.toContain(clientId);
    // Through the page's own API, with Bob's session: not found, and nothing changes.
    expect((await page.request.get(`${scene.server.url}/console/api/service-accounts/${clientId}`)).status()).toBe(404);
    const disable = await page.request.post(`${scene.server.url}/console/api/service-accounts/${clientId}/disable`, {
      headers: { 'Content-Type': 'application/json' },
      data: {},
    });
    expect(disable.status()).toBe(404);
    expect(disable.headers()['content-type']).toMatch(/^application\/problem\+json/);
    expect((await adminView(adaPage, clientId)).enabled).toBe(true);
    await Promise.all([ada.close(), bob.close()]);
  });
});
