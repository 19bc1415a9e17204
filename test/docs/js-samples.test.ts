/**
 * The JavaScript samples of README.md and docs/*.md, for readers who use CommonJS without
 * TypeScript: every ```js block is headed "CommonJS", is valid CommonJS for `node --check` (so no
 * type annotations, no non-null `!`, no `import`, no top-level `await`) and follows the ```ts block
 * it translates. Every ```ts block of every page has its CommonJS twin.
 * (The ```ts blocks are type-checked by code-samples.test.ts; getting-started's pairs are also run,
 * in fresh projects, by `npm run test:newcomer`.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');

interface Block {
  readonly page: string;
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** The last line of prose before the block (comments and blank lines skipped). */
  readonly heading: string;
}

function blocks(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const found: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) {
      if (lines[i]!.trim() !== '' && !lines[i]!.startsWith('<!--')) heading = lines[i]!;
      continue;
    }
    const start = i + 2;
    const code: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) code.push(lines[i]!);
    found.push({ page, line: start, lang: open[1]!, code: `${code.join('\n')}\n`, heading });
    heading = '';
  }
  return found;
}

const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const all = pages.flatMap(blocks);
const js = all.filter((b) => b.lang === 'js');
const dir = mkdtempSync(join(tmpdir(), 'esa-js-samples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function nodeCheck(code: string, name: string): Promise<string> {
  const file = join(dir, `${name.replace(/[^\w]+/g, '-')}.cjs`);
  writeFileSync(file, code);
  return new Promise((done) => execFile(process.execPath, ['--check', file], (error, _stdout, stderr) => done(error ? stderr : '')));
}

describe('CommonJS samples in README.md and docs/*.md', () => {
  it('finds them', () => {
    expect(js.length).toBeGreaterThanOrEqual(6);
  });

  it.each(js.map((b) => [`${b.page}:${b.line}`, b] as const))('%s is CommonJS that node --check accepts', async (where, block) => {
    expect(block.heading, `${where}: head it "CommonJS"`).toMatch(/CommonJS/);
    expect(block.code, `${where}: require(), not import`).not.toMatch(/^import\s/m);
    expect(await nodeCheck(block.code, where)).toBe('');
  });

  const withTs = pages.filter((page) => all.some((b) => b.page === page && b.lang === 'ts'));
  it.each(withTs)('%s: every ```ts block is followed by its CommonJS ```js block', (page) => {
    const code = all.filter((b) => b.page === page && (b.lang === 'ts' || b.lang === 'js'));
    expect(code.length).toBeGreaterThan(0);
    const unpaired = code.flatMap((b, i) => (b.lang === 'ts' && code[i + 1]?.lang !== 'js' ? [`${page}:${b.line}`] : []));
    expect(unpaired).toEqual([]);
  });
});
