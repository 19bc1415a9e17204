/**
 * The self-service page is usable with a keyboard alone, passes axe-core (WCAG 2.2 AA and best
 * practices) on every view, and is readable on a phone-sized window, in a real browser against the
 * example server. See docs/console.md.
 */
import { exportSPKI, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { accountCard, axeViolations, browserTestsRun, collectErrors, createAccount, focusedText, signIn, tabTo, useConsoleScene } from './browser.js';

const TIMEOUT = { timeout: 90_000 };
const scene = useConsoleScene('sa-console-access-');

describe.skipIf(!browserTestsRun)('the console, with a keyboard alone and for assistive technology', TIMEOUT, () => {
  it('signs in, creates an account, copies and closes its secret, revokes a secret and disables the account with the keyboard only', async () => {
    const context = await scene.browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${scene.server.url}/login`);
    await tabTo(page, /Your name/);
    await page.keyboard.type('Katherine Johnson');
    await tabTo(page, /Client account/);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('nasa');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${scene.server.url}/console/`);
    await page.getByRole('heading', { name: 'Your service accounts' }).waitFor();

    await tabTo(page, /^\s*Name/);
    await page.keyboard.type('orbit-sync');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Copy the new secret of orbit-sync now' });
    await dialog.waitFor();
    // Focus is inside the dialog, and Tab stays there (a modal dialog).
    expect(await page.evaluate<boolean>(`document.activeElement.closest('dialog') !== null`)).toBe(true);
    await tabTo(page, /I have copied it, close/, 6);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    // Focus lands on the new account, so the next Tab goes on from there.
    await expect.poll(() => focusedText(page)).toBe('orbit-sync');

    await tabTo(page, /Add a secret/);
    await page.keyboard.press('Enter');
    // It asks when the secret expires (never, unless chosen), then adds it.
    await page.getByRole('dialog', { name: 'Add a secret to orbit-sync' }).waitFor();
    await tabTo(page, /Add the secret/, 6);
    await page.keyboard.press('Enter');
    const second = page.getByRole('dialog', { name: 'Copy the new secret of orbit-sync now' });
    await second.waitFor();
    await page.keyboard.press('Escape');
    await second.waitFor({ state: 'detached' });

    await page.keyboard.press('Shift+Tab');
    await tabTo(page, /Revoke secret/);
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    await confirm.waitFor();
    // The safe choice has the focus: Enter alone never revokes.
    await expect.poll(() => focusedText(page)).toBe('Cancel');
    await page.keyboard.press('Tab');
    expect(await focusedText(page)).toBe('Revoke');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText(/^Revoked secret .* of orbit-sync\.$/).waitFor();

    await tabTo(page, /^\s*Disable\s*$/);
    await page.keyboard.press('Enter');
    await confirm.waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await accountCard(page, 'orbit-sync').getByText('Disabled', { exact: true }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('has no axe-core violation on the sign-in notice, the list, each dialog, and at phone width', async () => {
    const context = await scene.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${scene.server.url}/console/`);
    expect(await axeViolations(page)).toEqual([]);
    await page.goto(`${scene.server.url}/login`);
    expect(await axeViolations(page)).toEqual([]);

    await signIn(page, scene.server.url, 'Mary Jackson', 'langley');
    expect(await axeViolations(page)).toEqual([]); // the empty list
    await createAccount(page, 'wind-tunnel', 'data:read');
    const card = accountCard(page, 'wind-tunnel');
    await card.getByRole('button', { name: 'Add a public key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Add a public key to wind-tunnel' });
    await keyDialog.getByLabel('Public key (PEM or JWK)').fill(await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey));
    expect(await axeViolations(page)).toEqual([]); // the key dialog
    await keyDialog.getByRole('button', { name: 'Add the key' }).click();
    await keyDialog.waitFor({ state: 'detached' });
    expect(await axeViolations(page)).toEqual([]); // an account with a secret and a key

    await card.getByRole('button', { name: 'Add a secret' }).click();
    const addSecret = page.getByRole('dialog', { name: 'Add a secret to wind-tunnel' });
    await addSecret.getByLabel('Expires').selectOption({ label: 'In 90 days' });
    expect(await axeViolations(page)).toEqual([]); // the dialog asking when the secret expires
    await addSecret.getByRole('button', { name: 'Add the secret' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Copy the new secret of wind-tunnel now' });
    await secretDialog.waitFor();
    expect(await axeViolations(page)).toEqual([]); // the secret dialog
    await secretDialog.getByRole('button', { name: 'I have copied it, close' }).click();
    await secretDialog.waitFor({ state: 'detached' });

    await card.getByRole('button', { name: 'Add a federated credential' }).click();
    const federated = page.getByRole('dialog', { name: 'Add a federated credential to wind-tunnel' });
    await federated.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await federated.getByRole('button', { name: 'Cancel' }).click();
    await card.getByRole('button', { name: 'Disable' }).click();
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    await confirm.waitFor();
    expect(await axeViolations(page)).toEqual([]); // the confirmation
    await confirm.getByRole('button', { name: 'Cancel' }).click();

    // A phone: nothing wider than the screen, still no violation.
    await page.setViewportSize({ width: 360, height: 740 });
    await card.waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });
});
