/**
 * docs/hirers-and-service-accounts.md's example app, run as written in TypeScript (tsx) and CommonJS
 * (node) with the environment its install block sets (SESSION_SECRET) and a PORT: it prints the demo
 * account it makes and "listening", then a token of that account passes `requireActor()` and the
 * app's own `requireRole('hirer')`, and a request with neither a token nor a session gets 401.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { scratchFolder } from '../helpers/doc-scratch.js';

const ROOT = resolve(__dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'hirers-and-service-accounts.md'), 'utf8');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** The page's first fenced block of `lang` under "## Example: passport session login beside tokens". */
function example(lang: string): string {
  const section = GUIDE.split('## Example: passport session login beside tokens')[1]!.split('\n## ')[0]!;
  const found = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(section);
  if (!found) throw new Error(`no ${lang} block in the example section`);
  return found[1]!;
}

const { dir, children } = scratchFolder('hirers-guide-');

describe('docs/hirers-and-service-accounts.md: the example app', { timeout: 60_000 }, () => {
  it.each([
    ['TypeScript', 'ts', 'hirers.mts', TSX],
    ['CommonJS', 'js', 'hirers.cjs', process.execPath],
  ])('%s: starts on PORT with SESSION_SECRET, and its demo account reaches the protected routes', async (_name, lang, fileName, bin) => {
    // The install block's SESSION_SECRET line, as a user runs it.
    expect(GUIDE, 'the install block sets SESSION_SECRET').toMatch(/^export SESSION_SECRET=/m);
    const file = join(dir, fileName);
    writeFileSync(file, example(lang));
    const port = await freePort();
    const child = spawn(bin, [file], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), SESSION_SECRET: 'a session secret of this test run, 32+ chars' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const printed: string[] = [];
    // In CommonJS the account is made while the app starts listening: either line may come first.
    while (!printed.some((line) => line.startsWith('listening on ')) || !printed.some((line) => line.startsWith('client secret: '))) {
      const next = await lines.next();
      if (next.done) throw new Error(`the app exited before listening: ${printed.join('\n')}`);
      printed.push(next.value as string);
    }
    expect(printed).toContain(`listening on http://localhost:${port}`);
    const clientId = printed.find((l) => l.startsWith('client ID: '))?.slice('client ID: '.length);
    const clientSecret = printed.find((l) => l.startsWith('client secret: '))?.slice('client secret: '.length);
    expect(clientId).toMatch(/^esa_/);
    const base = `http://127.0.0.1:${port}`;
    const tokenResponse = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    expect(tokenResponse.status).toBe(200);
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const created = await fetch(`${base}/api/jobs`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ createdBy: { type: 'service_account', id: clientId, name: 'billing-sync' } });
    // Neither a token nor a session: the session middleware runs (SESSION_SECRET is set) and finds nobody.
    expect((await fetch(`${base}/api/jobs`)).status).toBe(401);
    child.kill();
  });
});
