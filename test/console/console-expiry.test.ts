/**
 * Choosing when a credential expires on the self-service page, in a real browser against the example
 * server: the expiry chosen reaches the admin router as `expiresIn`, and the new secret's dialog and
 * the credential table show the date it gives; a server that bounds a credential's lifetime is offered
 * only the expiries it accepts. See docs/console.md.
 */
import { join } from 'node:path';
import { exportSPKI, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { startServer } from '../examples/example-server.js';
import { accountCard, axeViolations, browserTestsRun, createAccount, focusedText, signedInPage, tabTo, useConsoleScene, type Page } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const DAY = 86_400_000;
const scene = useConsoleScene('sa-console-expiry-');

interface Credential {
  id: string;
  expiresAt: string | null;
}
/** The account's credentials as the admin router (the page's own API, with the page's session) answers them. */
async function credentialsOf(page: Page, clientId: string, base = scene.server.url): Promise<{ secrets: Credential[]; keys: Credential[]; federated: Credential[] }> {
  const res = await page.request.get(`${base}/console/api/service-accounts/${clientId}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as { secrets: Credential[]; keys: Credential[]; federated: Credential[] };
}

/** Runs `act`, then checks that `expiresAt()` lies `days` after it, within the time it took (and a second). */
async function expectExpiryIn(days: number, act: () => Promise<unknown>, expiresAt: () => Promise<string | null | undefined>): Promise<string> {
  const before = Date.now();
  await act();
  const after = Date.now();
  const iso = await expiresAt();
  expect(iso).toEqual(expect.any(String));
  const at = Date.parse(iso!);
  expect(at).toBeGreaterThanOrEqual(before + days * DAY - 1000);
  expect(at).toBeLessThanOrEqual(after + days * DAY + 1000);
  return iso!;
}

/** A date as the page writes it (English, medium date, short time). */
const asShown = (page: Page, iso: string) => page.evaluate<string>(`new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(${JSON.stringify(iso)}))`);
/** The Expires cell of a credential's row in the account's table. */
const expiresCell = (page: Page, account: string, id: string) => accountCard(page, account).getByRole('row', { name: new RegExp(id) }).locator('td[data-label="Expires"]');

describe.skipIf(!browserTestsRun)('the console, choosing when a credential expires', TIMEOUT, () => {
  it('creates an account whose first secret expires in 90 days: in the secret dialog, the table and the admin router', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Ada Lovelace', 'expiry-acme');
    const expiry = page.getByLabel('Its secret expires');
    expect(await expiry.inputValue()).toBe(''); // never, unless chosen
    await page.getByLabel('Name', { exact: true }).fill('quarterly-export');
    await expiry.selectOption({ label: 'In 90 days' });

    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of quarterly-export now' });
    let clientId = '';
    const iso = await expectExpiryIn(
      90,
      async () => {
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        clientId = await dialog.getByLabel('Client ID').inputValue();
      },
      async () => (await credentialsOf(page, clientId)).secrets[0]?.expiresAt,
    );
    const shown = await asShown(page, iso);
    await dialog.getByText(`It expires ${shown}.`, { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await dialog.waitFor({ state: 'detached' });
    const [secret] = (await credentialsOf(page, clientId)).secrets;
    expect(await expiresCell(page, 'quarterly-export', secret!.id).textContent()).toBe(shown);
    // The form is back to its defaults for the next account.
    expect(await expiry.inputValue()).toBe('');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('adds a secret expiring in 30 days, a public key in 1 year and a federated credential in 180 days; "Never" sends no expiry', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Grace Hopper', 'expiry-initech');
    const { clientId } = await createAccount(page, 'nightly-sync'); // "Never", the default
    const card = accountCard(page, 'nightly-sync');
    const [first] = (await credentialsOf(page, clientId)).secrets;
    expect(first!.expiresAt).toBeNull();
    expect(await expiresCell(page, 'nightly-sync', first!.id).textContent()).toBe('no expiry');

    // A secret: the dialog asks when it expires, then shows it with that date.
    await card.getByRole('button', { name: 'Add a secret' }).click();
    const ask = page.getByRole('dialog', { name: 'Add a secret to nightly-sync' });
    await ask.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    const secretDialog = page.getByRole('dialog', { name: 'Copy the new secret of nightly-sync now' });
    const secretIso = await expectExpiryIn(
      30,
      async () => {
        await ask.getByRole('button', { name: 'Add the secret' }).click();
        await secretDialog.waitFor();
      },
      async () => (await credentialsOf(page, clientId)).secrets[1]?.expiresAt,
    );
    const secretShown = await asShown(page, secretIso);
    await secretDialog.getByText(`It expires ${secretShown}.`, { exact: true }).waitFor();
    await secretDialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await secretDialog.waitFor({ state: 'detached' });
    const second = (await credentialsOf(page, clientId)).secrets[1]!;
    expect(await expiresCell(page, 'nightly-sync', second.id).textContent()).toBe(secretShown);

    // A public key expiring in a year.
    await card.getByRole('button', { name: 'Add a public key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Add a public key to nightly-sync' });
    await keyDialog.getByLabel('Public key (PEM or JWK)').fill(await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey));
    await keyDialog.getByLabel('Expires').selectOption({ label: 'In 1 year' });
    const keyIso = await expectExpiryIn(
      365,
      async () => {
        await keyDialog.getByRole('button', { name: 'Add the key' }).click();
        await keyDialog.waitFor({ state: 'detached' });
      },
      async () => (await credentialsOf(page, clientId)).keys[0]?.expiresAt,
    );
    const key = (await credentialsOf(page, clientId)).keys[0]!;
    expect(await expiresCell(page, 'nightly-sync', key.id).textContent()).toBe(await asShown(page, keyIso));

    // A federated credential expiring in 180 days.
    await card.getByRole('button', { name: 'Add a federated credential' }).click();
    const federatedDialog = page.getByRole('dialog', { name: 'Add a federated credential to nightly-sync' });
    await federatedDialog.getByLabel('Issuer').fill('https://token.actions.githubusercontent.com');
    await federatedDialog.getByLabel('Subject').fill('repo:initech/sync:ref:refs/heads/main');
    await federatedDialog.getByLabel('Expires').selectOption({ label: 'In 180 days' });
    const federatedIso = await expectExpiryIn(
      180,
      async () => {
        await federatedDialog.getByRole('button', { name: 'Add the credential' }).click();
        await federatedDialog.waitFor({ state: 'detached' });
      },
      async () => (await credentialsOf(page, clientId)).federated[0]?.expiresAt,
    );
    const federated = (await credentialsOf(page, clientId)).federated[0]!;
    expect(await expiresCell(page, 'nightly-sync', federated.id).textContent()).toBe(await asShown(page, federatedIso));

    // A secret left at "Never": no expiry, and the dialog says so.
    await card.getByRole('button', { name: 'Add a secret' }).click();
    await page.getByRole('dialog', { name: 'Add a secret to nightly-sync' }).getByRole('button', { name: 'Add the secret' }).click();
    await secretDialog.getByText('It does not expire.', { exact: true }).waitFor();
    await secretDialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await secretDialog.waitFor({ state: 'detached' });
    expect((await credentialsOf(page, clientId)).secrets[2]!.expiresAt).toBeNull();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('is reached and chosen with the keyboard alone, and has no axe-core violation where it appears', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Katherine Johnson', 'expiry-nasa');
    expect(await axeViolations(page)).toEqual([]); // the create form, with its expiry

    await tabTo(page, /^\s*Name/);
    await page.keyboard.type('orbit-export');
    await tabTo(page, /Its secret expires/, 3);
    await page.keyboard.press('ArrowDown'); // In 30 days
    await page.keyboard.press('ArrowDown'); // In 90 days
    expect(await page.getByLabel('Its secret expires').inputValue()).toBe('90d');
    await tabTo(page, /^Create$/, 3);
    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of orbit-export now' });
    let clientId = '';
    await expectExpiryIn(
      90,
      async () => {
        await page.keyboard.press('Enter');
        clientId = await dialog.getByLabel('Client ID').inputValue();
      },
      async () => (await credentialsOf(page, clientId)).secrets[0]?.expiresAt,
    );
    await dialog.getByText(/^It expires /).waitFor();
    expect(await axeViolations(page)).toEqual([]); // the secret dialog, with its expiry
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => focusedText(page)).toBe('orbit-export');

    // Adding a secret: the dialog opens with the expiry focused; one arrow chooses 30 days.
    await tabTo(page, /Add a secret/);
    await page.keyboard.press('Enter');
    const ask = page.getByRole('dialog', { name: 'Add a secret to orbit-export' });
    await ask.waitFor();
    expect(await page.evaluate<string>(`document.activeElement.getAttribute('name')`)).toBe('expiresIn');
    await page.keyboard.press('ArrowDown');
    expect(await ask.getByLabel('Expires').inputValue()).toBe('30d');
    expect(await axeViolations(page)).toEqual([]); // the dialog asking when the secret expires
    await tabTo(page, /Add the secret/, 3);
    await expectExpiryIn(
      30,
      async () => {
        await page.keyboard.press('Enter');
        await dialog.waitFor();
      },
      async () => (await credentialsOf(page, clientId)).secrets[1]?.expiresAt,
    );
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => focusedText(page)).toBe('orbit-export');
    expect(await axeViolations(page)).toEqual([]); // the list, with expiring credentials
    expect(errors).toEqual([]);
    await context.close();
  });

  it('on a server whose maxCredentialLifetime is 45 days, offers only the expiries it accepts (the longest chosen), and shows a refusal readably', async () => {
    // A second server on the same store (which already holds the demo account, so it provisions none).
    const capped = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(scene.dir, 'console.db')}`, MAX_CREDENTIAL_LIFETIME: '45d' });
    const { context, page, errors } = await signedInPage(scene.browser, capped.url, 'Mary Jackson', 'expiry-langley');
    const choices = ['In 30 days', 'In 45 days (the longest allowed)'];
    const expiry = page.getByLabel('Its secret expires');
    expect(await expiry.locator('option').allTextContents()).toEqual(choices); // no "Never", nothing past the bound
    expect(await expiry.inputValue()).toBe(String(45 * 86_400) + 's');
    await page.getByText('This server lets a credential live 45 days at most.', { exact: false }).first().waitFor();
    await page.getByLabel('Name', { exact: true }).fill('wind-tunnel');
    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of wind-tunnel now' });
    let clientId = '';
    await expectExpiryIn(
      45,
      async () => {
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        clientId = await dialog.getByLabel('Client ID').inputValue();
      },
      async () => (await credentialsOf(page, clientId, capped.url)).secrets[0]?.expiresAt,
    );
    await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await dialog.waitFor({ state: 'detached' });

    // Adding a secret: the same choices; 30 days chosen.
    const card = accountCard(page, 'wind-tunnel');
    await card.getByRole('button', { name: 'Add a secret' }).click();
    const ask = page.getByRole('dialog', { name: 'Add a secret to wind-tunnel' });
    expect(await ask.getByLabel('Expires').locator('option').allTextContents()).toEqual(choices);
    await ask.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    await expectExpiryIn(
      30,
      async () => {
        await ask.getByRole('button', { name: 'Add the secret' }).click();
        await dialog.waitFor();
      },
      async () => (await credentialsOf(page, clientId, capped.url)).secrets[1]?.expiresAt,
    );
    await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await dialog.waitFor({ state: 'detached' });

    // The bound lowered while the page was open (here: a longer expiry than the page offers): the
    // server's refusal is shown in the dialog, which stays open for another choice.
    await card.getByRole('button', { name: 'Add a secret' }).click();
    await ask.waitFor();
    await page.evaluate(`document.querySelector('dialog select[name=expiresIn] option:checked').value = '365d'`);
    await ask.getByRole('button', { name: 'Add the secret' }).click();
    await expect.poll(() => ask.getByRole('alert').textContent()).toMatch(/^Not done: .*beyond this server's maxCredentialLifetime.*45d/);
    await ask.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    await ask.getByRole('button', { name: 'Add the secret' }).click();
    await dialog.getByText(/^It expires /).waitFor();
    expect((await credentialsOf(page, clientId, capped.url)).secrets).toHaveLength(3);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
    await capped.stop();
  });
  it('shows a new secret even when the list cannot be reloaded after it was made, and says the reload failed', async () => {
    const { context, page, errors } = await signedInPage(scene.browser, scene.server.url, 'Dorothy Vaughan', 'expiry-reload');
    // From now on, reading the list fails (as if the server were restarting); writes still go through.
    await page.route(/\/console\/api\/service-accounts\?limit=/, (route) => route.fulfill({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The store is unavailable' }) }));
    await page.getByLabel('Name', { exact: true }).fill('reload-check');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of reload-check now' });
    expect(await dialog.getByLabel('Client secret').inputValue()).toMatch(/^esas_/);
    await expect.poll(async () => (await page.getByRole('alert').allTextContents()).join(' ')).toMatch(/Not done/);
    await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(errors.filter((e) => !e.includes('503'))).toEqual([]);
    await context.close();
  });
});
