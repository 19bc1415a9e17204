/**
 * The example's stand-in sign-in form (`GET /login`, examples/server/human-login.ts) in a real browser
 * (Debian's chromium), reached by a host name over plain HTTP, as on a LAN or in a container: the form's
 * own POST must not look like another site's.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsRun, launchBrowserWith } from './browser.js';
import { startExampleApp } from '../helpers/example-app.js';

describe.skipIf(!browserTestsRun)('the stand-in sign-in form over plain HTTP', { timeout: 90_000 }, () => {
  // Fetch Standard, "append a request `Origin` header": for a POST that is not a CORS request, a
  // referrer policy of "no-referrer" sets the Origin to `null`; and a browser sends Sec-Fetch-Site only
  // to a potentially trustworthy URL (HTTPS or loopback). Served as `http://hirers.test`, the form's own
  // POST then carries `Origin: null` and nothing else, which /login refuses as another site's.
  it('signs in from the form at a non-loopback host name and lands on the console', async () => {
    const running = await startExampleApp();
    // The name resolves to 127.0.0.1 inside the browser only: nothing leaves this machine.
    const browser = await launchBrowserWith(['--host-resolver-rules=MAP hirers.test 127.0.0.1']);
    try {
      const base = `http://hirers.test:${new URL(running.issuer).port}`;
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${base}/login`);
      await page.getByLabel('Your name').fill('Ada Lovelace');
      const [answer] = await Promise.all([page.waitForResponse((res) => res.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()]);
      expect(answer.status()).toBe(303);
      await page.waitForURL(`${base}/console/`);
      await page.getByRole('heading', { name: 'Your service accounts' }).waitFor();
    } finally {
      await browser.close();
      await running.close();
    }
  });
});
