/**
 * Every ```ts sample in README.md and docs/*.md type-checks against the sources, so the docs cannot
 * drift from the API. Each sample is its own ES module (top-level await allowed) that imports the
 * package by its public names: `express-service-accounts`, `/sql` and `/testing` are mapped to
 * src/index.ts, src/sql/index.ts and src/testing/index.ts. The samples live in memory only.
 * A sample must therefore be complete: its own imports and declarations, no `...` placeholders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

interface Sample {
  readonly doc: string;
  /** 1-based line of the sample's first code line in the Markdown file. */
  readonly line: number;
  readonly code: string;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...docs];
}

/** Fenced blocks whose info string is `ts` or `typescript`. */
function extractSamples(doc: string, text: string): Sample[] {
  const samples: Sample[] = [];
  const lines = text.split('\n');
  let open: { line: number; code: string[] } | undefined;
  lines.forEach((line, index) => {
    if (open === undefined) {
      if (/^```(ts|typescript)\s*$/.test(line)) open = { line: index + 2, code: [] };
    } else if (/^```\s*$/.test(line)) {
      samples.push({ doc, line: open.line, code: open.code.join('\n') + '\n' });
      open = undefined;
    } else {
      open.code.push(line);
    }
  });
  return samples;
}

function typeCheck(samples: readonly Sample[]): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error('tsconfig.json could not be read');
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    paths: {
      'express-service-accounts': [join(root, 'src/index.ts')],
      'express-service-accounts/sql': [join(root, 'src/sql/index.ts')],
      'express-service-accounts/testing': [join(root, 'src/testing/index.ts')],
    },
  };
  // Virtual files beside the repository, so `express`, `@types/node`... resolve from its node_modules.
  const virtual = new Map<string, Sample>();
  samples.forEach((sample, index) => {
    const name = relative(root, sample.doc).replace(/[^A-Za-z0-9]+/g, '-');
    virtual.set(join(root, '.code-samples', `${name}-${index}.mts`), sample);
  });
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
  host.readFile = (file) => virtual.get(file)?.code ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const sample = virtual.get(file);
    if (sample) return ts.createSourceFile(file, sample.code, language, true);
    return getSourceFile.call(host, file, language, ...rest);
  };
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
  // Only the samples' own diagnostics: the sources are type-checked by `npm run typecheck`.
  const diagnostics = [...virtual.keys()].flatMap((file) => {
    const source = program.getSourceFile(file)!;
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  });
  return diagnostics.map((diagnostic) => {
    const sample = virtual.get(diagnostic.file!.fileName)!;
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const where = `${relative(root, sample.doc)}:${sample.line + line}`;
    return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

describe('code samples in README.md and docs/*.md', () => {
  const samples = markdownFiles().flatMap((file) => extractSamples(file, readFileSync(file, 'utf8')));

  it('finds the samples', () => {
    expect(samples.length).toBeGreaterThan(10);
  });

  it('type-check against the sources', () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 120_000);
});
