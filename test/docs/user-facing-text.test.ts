/**
 * What users read speaks to them only: the docs, the README, the examples' pages and the published
 * declarations (the TSDoc an editor shows) cite RFCs and our own docs, never the project's internal
 * documents ("SPEC §4.1", "CONTRACT §5", an issue number) or their vocabulary ("hiring platform",
 * "human hirer", "seed rule"): a user has none of those. docs/api is generated from the same TSDoc as
 * dist's declarations, which are checked here (`npm test` builds dist first).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');

/** Internal references and vocabulary, each with what to write instead. */
const INTERNAL: readonly { pattern: RegExp; instead: string }[] = [
  { pattern: /\bSPEC\b|\bSPEC\.md\b/, instead: 'cite an RFC or one of docs/*.md' },
  { pattern: /\bCONTRACT\b|\bCONTRACT\.md\b/, instead: 'cite an RFC or one of docs/*.md' },
  { pattern: /\bSTYLE(\.md| §)/, instead: 'say what the rule is' },
  { pattern: /\bissue \d+\b/i, instead: 'say what the change is' },
  { pattern: /hiring platform/i, instead: 'the client account: your customer or tenant the service account acts for' },
  { pattern: /human hirer/i, instead: 'explain it in the reader’s terms' },
  { pattern: /seed rule/i, instead: 'explain it in the reader’s terms' },
];

function files(dir: string, keep: (name: string) => boolean, recursive: boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return recursive ? files(path, keep, recursive) : [];
    return keep(entry.name) ? [path] : [];
  });
}

const isMarkdown = (name: string): boolean => name.endsWith('.md');
const isDeclaration = (name: string): boolean => /\.d\.m?ts$/.test(name);

/** `file:line: text (instead)` for every internal reference in `paths`. */
function findings(paths: readonly string[]): string[] {
  return paths.flatMap((path) =>
    readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((line, index) =>
        INTERNAL.filter(({ pattern }) => pattern.test(line)).map(
          ({ instead }) => `${relative(ROOT, path)}:${index + 1}: ${line.trim()}  (instead: ${instead})`,
        ),
      ),
  );
}

describe('user-facing text cites no internal document', () => {
  it('README.md, docs/*.md and the examples’ pages', () => {
    const pages = [join(ROOT, 'README.md'), ...files(join(ROOT, 'docs'), isMarkdown, false), ...files(join(ROOT, 'examples'), isMarkdown, true)];
    expect(pages.length).toBeGreaterThan(10);
    expect(findings(pages)).toEqual([]);
  });

  it('the published declarations in dist (their TSDoc)', () => {
    const declarations = files(join(ROOT, 'dist'), isDeclaration, true);
    expect(declarations.length, 'no declarations in dist/: run `npm run build` first').toBeGreaterThan(4);
    expect(findings(declarations)).toEqual([]);
  });

  it('recognises each internal reference (the patterns above are not dead)', () => {
    const samples = ['see SPEC §4.1', 'CONTRACT §5', 'STYLE §7', 'issue 5', "the hiring platform's client account", 'like a human hirer', 'the seed rule'];
    for (const sample of samples) expect(INTERNAL.some(({ pattern }) => pattern.test(sample)), sample).toBe(true);
  });
});
