/**
 * What a new user stumbled on, following the pages literally, each pinned so it does not come back:
 * the quickstart's signing key, the data folder kept out of git, one name for the token variable, the
 * metrics sample that runs as pasted, one rule for where the token router goes, which account
 * getting-started's step 5 uses, the store template reachable from the package, and an install that
 * runs no build script. (The openid-client recipe is run in test/interop/client-recipes.test.ts, the
 * example server's printed commands in test/examples/example-server.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

const ROOT = resolve(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const pages = ['README.md', 'examples/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The fenced blocks of a page, in order, with their language. */
function blocks(text: string): { lang: string; code: string }[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

describe('the newcomer path', () => {
  it('README: the quickstart says how to make TOKEN_SIGNING_KEY before the code that needs it, and the command makes a long enough key', () => {
    const quickstart = read('README.md').split('## Quickstart')[1]!;
    const found = blocks(quickstart);
    const keyBlock = found.findIndex((b) => b.lang === 'sh' && /export TOKEN_SIGNING_KEY=/.test(b.code));
    const firstCode = found.findIndex((b) => b.lang === 'ts');
    expect(keyBlock).toBeGreaterThanOrEqual(0);
    expect(keyBlock).toBeLessThan(firstCode);
    const key = execFileSync('bash', ['-c', `${found[keyBlock]!.code}\nprintf %s "$TOKEN_SIGNING_KEY"`], { encoding: 'utf8' });
    // The HS256 key must be at least 32 bytes (docs/configuration.md).
    expect(Buffer.byteLength(key, 'utf8')).toBeGreaterThanOrEqual(32);
  });

  it('README and getting-started tell users to keep .data/ out of git', () => {
    for (const page of ['README.md', 'docs/getting-started.md']) expect(read(page), page).toMatch(/\.data\/[^\n]*\.gitignore|\.gitignore[^\n]*\.data\//);
  });

  it('one name for the access token everywhere: ACCESS_TOKEN, never $TOKEN', () => {
    for (const file of [...pages, 'examples/server.ts']) expect(read(file), file).not.toMatch(/\$TOKEN\b|\bTOKEN=\$\(/);
  });

  it('docs/observability.md: the metrics sample has its install line and listens, in TypeScript and CommonJS', () => {
    const metrics = read('docs/observability.md').split('## Metrics')[1]!.split('\n## ')[0]!;
    const found = blocks(metrics);
    expect(found.some((b) => b.lang === 'sh' && /npm install @opentelemetry\/sdk-metrics @opentelemetry\/exporter-prometheus/.test(b.code))).toBe(true);
    for (const lang of ['ts', 'js']) expect(found.find((b) => b.lang === lang)?.code, lang).toMatch(/app\.listen\(/);
  });

  it('every page mounts the token router before the host’s body parsers (none says "before or after")', () => {
    for (const page of pages) expect(read(page), page).not.toMatch(/before or after (your|the host's) own body parsers/);
  });

  it('getting-started step 5 says which of step 4’s accounts it uses', () => {
    const step5 = read('docs/getting-started.md').split('## 5.')[1]!.split('export CLIENT_ID')[0]!;
    expect(step5).toMatch(/procurement-portal/);
    expect(step5).toMatch(/billing-sync/);
  });

  it('the Redis store template the docs call complete ships in the package, where writing-a-store.md says', () => {
    const manifest = JSON.parse(read('package.json')) as { files: string[]; scripts: Record<string, string> };
    expect(manifest.files).toContain('examples/custom-store/redis-account-store.ts');
    expect(read('docs/writing-a-store.md')).toContain('node_modules/express-service-accounts/examples/custom-store/redis-account-store.ts');
  });

  // npm 11.16+ lists every dependency whose install script allowScripts does not cover; the page
  // promises its allowScripts lines silence that list, so they cover what its install lines bring.
  it('getting-started allows the install script of every package its install lines bring that has one', () => {
    const page = read('docs/getting-started.md');
    const installs = blocks(page).filter((b) => b.lang === 'sh').map((b) => b.code).join('\n');
    const allowed = [...page.matchAll(/allowScripts\.([\w@/.-]+)=true/g)].map((m) => m[1]);
    // The lockfile's packages with an install script, reached through the page's installs.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const scripted = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([path]) => path.replace(/^.*node_modules\//, ''));
    // Which of them the installs reach: bcrypt (through the package), better-sqlite3, esbuild (through tsx).
    const reached = new Map([['bcrypt', /express-service-accounts/], ['better-sqlite3', /better-sqlite3/], ['esbuild', /\btsx\b/]]);
    for (const [name, by] of reached) {
      expect(scripted, name).toContain(name);
      if (by.test(installs)) expect(allowed, name).toContain(name);
    }
  });

  it('docs/errors.md names the exported class of every error it lists, so `instanceof` can be written from the page', () => {
    const page = read('docs/errors.md');
    const classes = Object.entries(api).filter(([, value]) => typeof value === 'function' && value.prototype instanceof api.OAuthError).map(([name]) => name);
    expect(classes.length).toBeGreaterThan(10);
    for (const name of classes) expect(page, name).toContain(`\`${name}\``);
  });

  it('the Redis store template type-checks when copied into an ES module project, as getting-started sets one up', () => {
    // A virtual copy of the template, as an ES module (getting-started's `type: module` and `nodenext`),
    // beside the repository so that ioredis and the package resolve from its node_modules.
    const copy = join(ROOT, '.tmp', 'redis-template-esm', 'redis-account-store.mts');
    const code = read('examples/custom-store/redis-account-store.ts');
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      paths: { 'express-service-accounts': [join(ROOT, 'src/index.ts')] },
    };
    const host = ts.createCompilerHost(options, true);
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (file) => file === copy || fileExists.call(host, file);
    host.readFile = (file) => (file === copy ? code : readFile.call(host, file));
    host.getSourceFile = (file, language, ...rest) =>
      file === copy ? ts.createSourceFile(file, code, language, true) : getSourceFile.call(host, file, language, ...rest);
    const program = ts.createProgram({ rootNames: [copy], options, host });
    const errors = ts.getPreEmitDiagnostics(program, program.getSourceFile(copy)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
    expect(errors).toEqual([]);
  });

  // npm runs `prepare` on every install of a published package and npm 11 lists it as an install
  // script; `prepack` runs only when the package is packed (npm pack, npm publish, a git dependency).
  it('the manifest builds on prepack, not prepare; npm test still builds first', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(scripts.prepare).toBeUndefined();
    expect(scripts.prepack).toBe('npm run build');
    expect(scripts.pretest).toBe('npm run build');
  });
});
