/**
 * docs/writing-a-store.md promises that its template, as written, passes the contract suite of
 * `express-service-accounts/testing`, and that the interface has twenty-three methods. The block after the
 * `<!-- store-template -->` marker is written to a temporary module, imported and run through
 * `describeAccountStore`, every test of the suite included (none skipped: the template has `watch` and the key methods);
 * so is its CommonJS twin (after `<!-- store-template-cjs -->`), require()d.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../../src/index.js';
import { describeAccountStore } from '../../src/testing/index.js';

const DOC = resolve(__dirname, '..', '..', 'docs', 'writing-a-store.md');
const text = readFileSync(DOC, 'utf8');

function templateBlock(marker = 'store-template', lang = 'ts'): string {
  const found = new RegExp(`^<!-- ${marker} -->\\n\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(text);
  if (!found) throw new Error(`docs/writing-a-store.md: no \`\`\`${lang} block after <!-- ${marker} -->`);
  return found[1]!;
}

// The template imports types only, so it runs as it is written.
const file = join(mkdtempSync(join(tmpdir(), 'esa-store-template-')), 'my-account-store.ts');
writeFileSync(file, templateBlock());
let loaded: Promise<new () => AccountStore> | undefined;
const MyAccountStore = (): Promise<new () => AccountStore> =>
  (loaded ??= import(pathToFileURL(file).href).then((module: { MyAccountStore: new () => AccountStore }) => module.MyAccountStore));

describe('docs/writing-a-store.md', () => {
  it('counts the methods of AccountStore right', () => {
    const source = readFileSync(resolve(__dirname, '..', '..', 'src', 'store', 'account-store.ts'), 'utf8');
    const body = /export interface AccountStore \{([\s\S]*?)\n\}/.exec(source)![1]!;
    const methods = body.match(/^ {2}\w+\??\(/gm)!;
    expect(methods).toHaveLength(23);
    expect(text).toContain('twenty-three small async methods (sixteen of them\noptional)');
    expect(text).toContain('The interface has twenty-three methods: seven required');
    expect(text).not.toMatch(/(nine|ten|twelve|fourteen|sixteen|twenty-one|twenty-two) small async methods/);
  });

  it('says to delete watch rather than keep a stub', () => {
    expect(text).toMatch(/delete the `watch` method/);
  });
});

const suite = { describe, it, expect, beforeEach, afterEach };
describeAccountStore('the template of docs/writing-a-store.md', async () => ({ store: new (await MyAccountStore())(), cleanup: async () => {} }), suite);

// Its CommonJS twin, require()d as a CommonJS project would.
const cjsFile = join(dirname(file), 'my-account-store.cjs');
writeFileSync(cjsFile, templateBlock('store-template-cjs', 'js'));
const { MyAccountStore: CjsStore } = createRequire(__filename)(cjsFile) as { MyAccountStore: new () => AccountStore };
describeAccountStore('the CommonJS template of docs/writing-a-store.md', async () => ({ store: new CjsStore(), cleanup: async () => {} }), suite);
