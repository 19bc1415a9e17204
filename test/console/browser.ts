/**
 * The browser the console tests drive: Debian's chromium (`/usr/bin/chromium`, which .ci/run installs
 * when missing) through playwright-core, which downloads no browser of its own. Without it the tests
 * are skipped with a note, except under CI=true, where they fail.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { killAllServers, startServer, type ExampleServer } from '../examples/example-server.js';
import { ROOT } from '../helpers/run-cli.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
/** Whether the browser tests run: chromium is there, or CI requires them (and then a missing one fails). */
export const browserTestsRun = present || process.env.CI === 'true';
if (!browserTestsRun) {
  console.warn(`note: ${CHROMIUM} is missing, so the console's browser tests are skipped (apt-get install chromium; under CI=true they fail)`);
}

/** The example server (on a scratch SQLite store of the file's own) and the browser one test file drives. */
export interface ConsoleScene {
  readonly server: ExampleServer;
  readonly browser: Browser;
  /** The scratch folder, holding the store `console.db`. */
  readonly dir: string;
}

/**
 * Starts the example server (with `env` beside its port and store) and the browser before the file's
 * tests, and stops both after them; the scene's fields are set once they have started.
 */
export function useConsoleScene(prefix: string, env: Record<string, string> = {}): ConsoleScene {
  const scene = {} as { server: ExampleServer; browser: Browser; dir: string };
  beforeAll(async () => {
    if (!browserTestsRun) return;
    scene.dir = mkdtempSync(join(tmpdir(), prefix));
    [scene.server, scene.browser] = await Promise.all([startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(scene.dir, 'console.db')}`, ...env }), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await scene.browser?.close();
    await killAllServers();
    if (scene.dir) rmSync(scene.dir, { recursive: true, force: true });
  });
  return scene;
}

/** Launches the browser. */
export function launchBrowser(): Promise<Browser> {
  return launchBrowserWith([]);
}

/** Launches the browser with further command-line switches (such as `--host-resolver-rules`). */
export function launchBrowserWith(args: readonly string[]): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', ...args] });
}

/**
 * Errors of the page's own code (uncaught exceptions, console errors: a Content-Security-Policy or
 * Trusted Types violation among them), for asserting there were none. An HTTP error status the page
 * was answered (a 401 notice, a refused key) is the server's answer, not a fault of the page.
 */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of')) errors.push(message.text());
  });
  return errors;
}

/** Signs in at the example's stand-in login form, as a person would, and lands on the console. */
export async function signIn(page: Page, base: string, name: string, clientAccount: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await expect.poll(() => page.title()).toBe('Sign in to manage service accounts');
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Client account').fill(clientAccount);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/console/`);
  await page.getByRole('heading', { name: 'Your service accounts' }).waitFor();
}

/**
 * A new browser context (with `options`) and page, signed in at `base` as `name` of `clientAccount`
 * through the stand-in login, with the page's own errors collected.
 */
export async function signedInPage(
  browser: Browser,
  base: string,
  name: string,
  clientAccount: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors = collectErrors(page);
  await signIn(page, base, name, clientAccount);
  return { context, page, errors };
}

/** Creates an account through the page and returns its client ID and secret, read from the dialog. */
export async function createAccount(page: Page, name: string, scopes = ''): Promise<{ clientId: string; secret: string }> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Scopes (optional)').fill(scopes);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: `Copy the new secret of ${name} now` });
  const clientId = await dialog.getByLabel('Client ID').inputValue();
  const secret = await dialog.getByLabel('Client secret').inputValue();
  await dialog.getByRole('button', { name: 'I have copied it, close' }).click();
  await dialog.waitFor({ state: 'detached' });
  return { clientId, secret };
}

/** The account's card on the page. */
export const accountCard = (page: Page, name: string) => page.getByRole('article', { name });

/** Runs axe-core (WCAG 2.2 AA and best practices) on the page; resolves with its violations, summarised. */
export async function axeViolations(page: Page): Promise<string[]> {
  const source = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays in force for the page itself.
  await page.evaluate(source);
  const result = await page.evaluate<{ violations: { id: string; help: string; nodes: { target: unknown }[] }[] }>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } })`,
  );
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`);
}

/** Presses Tab until the focused element's accessible text matches, at most `limit` times. */
export async function tabTo(page: Page, text: RegExp, limit = 40): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    // The focused element's name as a person hears it: aria-label, text, or its label. (Evaluated in the page.)
    const focused = await page.evaluate<string>(`(() => {
      const el = document.activeElement;
      if (!el) return '';
      const label = el.id ? document.querySelector('label[for="' + el.id + '"]') : null;
      return [el.getAttribute('aria-label'), el.textContent, label && label.textContent].filter(Boolean).join(' ');
    })()`);
    if (text.test(focused)) return;
  }
  throw new Error(`nothing matching ${text} was reached with Tab`);
}
/** The focused element's text. */
export const focusedText = (page: Page) => page.evaluate<string>(`document.activeElement ? document.activeElement.textContent : ''`);

export type { Browser, BrowserContext, Page };
