/**
 * Every ```ts sample in README.md and docs/*.md type-checks against the sources, so the docs cannot
 * drift from the API. Each sample is its own ES module (top-level await allowed) that imports the
 * package by its public names: `express-service-accounts`, `/sql` and `/testing` are mapped to
 * src/index.ts, src/sql/index.ts and src/testing/index.ts. The samples live in memory only.
 * A sample must therefore be complete: its own imports and declarations, no `...` placeholders.
 *
 * The TSDoc `@example`s type-check too, as typedoc renders them into docs/api/*.md (the API
 * reference `npm run docs:api` generates and `.ci/run` keeps current). They are fragments in the
 * voice of the API reference: they may use the package's exports and a few values of a host app
 * (`sa`, `app`, `db`...) without declaring them. See {@link apiPreamble}. And every export of the
 * three entry points has an `@example` (STYLE §7).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/** The public entry points, by the name a user imports them with. */
const ENTRY_POINTS: Readonly<Record<string, string>> = {
  'express-service-accounts': join(root, 'src/index.ts'),
  'express-service-accounts/sql': join(root, 'src/sql/index.ts'),
  'express-service-accounts/testing': join(root, 'src/testing/index.ts'),
};

interface Sample {
  readonly doc: string;
  /** 1-based line of the sample's first code line in the Markdown file. */
  readonly line: number;
  readonly code: string;
  /** The file it is in a project, when the page says so (`<!-- newcomer: file=app.ts -->` before it). */
  readonly file?: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(join(root, dir))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, dir, name));
}

/**
 * Fenced blocks whose info string is `ts` or `typescript`; with `examplesOnly`, just those in a
 * section headed "Example" or "Examples" (typedoc's rendering of `@example`). The other ```ts blocks
 * of docs/api are the signatures typedoc prints from the sources themselves, which cannot drift.
 */
function extractSamples(doc: string, text: string, examplesOnly = false): Sample[] {
  const samples: Sample[] = [];
  const lines = text.split('\n');
  let open: { line: number; code: string[]; file?: string } | undefined;
  let inExample = false;
  lines.forEach((line, index) => {
    if (open === undefined) {
      if (/^#{1,6}\s/.test(line)) inExample = /^#{1,6}\s+Examples?\s*$/.test(line);
      if (/^```(ts|typescript)\s*$/.test(line) && (inExample || !examplesOnly)) {
        const file = /^<!-- newcomer: file=(\S+\.ts) -->$/.exec(lines[index - 1] ?? '')?.[1];
        open = { line: index + 2, code: [], ...(file !== undefined && { file }) };
      }
    } else if (/^```\s*$/.test(line)) {
      samples.push({ doc, line: open.line, code: open.code.join('\n') + '\n', ...(open.file !== undefined && { file: open.file }) });
      open = undefined;
    } else {
      open.code.push(line);
    }
  });
  return samples;
}

/** The names an entry point exports (its `export { ... } from` lists: src/*index.ts are barrels). */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const names = source.statements.flatMap((statement) => {
    if (!ts.isExportDeclaration(statement)) return [];
    if (!statement.exportClause || !ts.isNamedExports(statement.exportClause)) {
      throw new Error(`${relative(root, file)}: only \`export { ... } from\` is supported here`);
    }
    return statement.exportClause.elements.map((element) => element.name.text);
  });
  if (names.length === 0) throw new Error(`${relative(root, file)} exports nothing`);
  return names;
}

/**
 * What the TSDoc examples may use without declaring it: one line each, all typed by the real
 * packages, so an example that misuses them still fails. Add a name here only when it is what a
 * reader of the reference would assume (an app's `sa`, `app` or `db`), not to hide an error.
 */
const API_FIXTURES: Readonly<Record<string, string>> = {
  // An app using the package (README quickstart).
  sa: `declare const sa: import('express-service-accounts').ServiceAccounts`,
  app: `declare const app: import('express').Express`,
  store: `declare const store: import('express-service-accounts').AccountStore`,
  issuer: `declare const issuer: string`,
  signingKeys: `declare const signingKeys: import('express-service-accounts').SigningKeyOptions[]`,
  key: `declare const key: string`,
  clientId: `declare const clientId: string`,
  clientSecret: `declare const clientSecret: string`,
  secretId: `declare const secretId: string`,
  token: `declare const token: string`,
  err: `declare const err: unknown`,
  // The SQL stores (express-service-accounts/sql).
  url: `declare const url: string`,
  // A host's own store and its test helper, for the contract suite (express-service-accounts/testing).
  MyStore: `declare const MyStore: new () => import('express-service-accounts').AccountStore`,
  RedisAccountStore: `declare const RedisAccountStore: new (options: { url?: string; prefix?: string }) => import('express-service-accounts').AccountStore`,
  flushPrefix: `declare const flushPrefix: (store: import('express-service-accounts').AccountStore) => Promise<void>`,
};

/** Top-level names a sample declares or imports itself: those shadow the preamble's. */
function declaredNames(code: string): Set<string> {
  const source = ts.createSourceFile('sample.mts', code, ts.ScriptTarget.Latest);
  const names = new Set<string>();
  const addBinding = (name: ts.BindingName): void => {
    if (ts.isIdentifier(name)) names.add(name.text);
    else name.elements.forEach((element) => ts.isBindingElement(element) && addBinding(element.name));
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause) {
      const { name, namedBindings } = statement.importClause;
      if (name) names.add(name.text);
      if (namedBindings && ts.isNamespaceImport(namedBindings)) names.add(namedBindings.name.text);
      if (namedBindings && ts.isNamedImports(namedBindings)) namedBindings.elements.forEach((e) => names.add(e.name.text));
    } else if (ts.isVariableStatement(statement)) {
      statement.declarationList.declarations.forEach((declaration) => addBinding(declaration.name));
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement) || ts.isImportEqualsDeclaration(statement)) &&
      statement.name
    ) {
      names.add(statement.name.text);
    }
  }
  return names;
}

/**
 * Appended (not prepended, so line numbers stay right; imports are hoisted) to each TSDoc example:
 * imports of every export of the three entry points and the {@link API_FIXTURES}, less the names
 * the example declares or imports itself.
 */
function apiPreamble(code: string): string {
  const own = declaredNames(code);
  const lines = Object.entries(ENTRY_POINTS).map(([specifier, file]) => {
    const names = exportedNames(file).filter((name) => !own.has(name));
    return names.length > 0 ? `import { ${names.join(', ')} } from '${specifier}'` : '';
  });
  for (const [name, declaration] of Object.entries(API_FIXTURES)) if (!own.has(name)) lines.push(declaration);
  return `\n// ---- preamble (test/docs/code-samples.test.ts)\n${lines.filter(Boolean).join('\n')}\n`;
}

function apiExamples(): Sample[] {
  return markdownFiles('docs/api').flatMap((file) =>
    extractSamples(file, readFileSync(file, 'utf8'), true).map((sample) => ({ ...sample, code: sample.code + apiPreamble(sample.code) })),
  );
}

function createProgram(samples: readonly Sample[]): { program: ts.Program; virtual: Map<string, Sample> } {
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
      ...Object.fromEntries(Object.entries(ENTRY_POINTS).map(([specifier, file]) => [specifier, [file]])),
      // The sources compile as CommonJS and so see kysely's CommonJS types, while the samples are ES
      // modules: give both one copy, as a user's build does (the published .d.mts imports ESM kysely).
      kysely: [join(root, 'node_modules/kysely/dist/cjs/index.d.ts')],
    },
  };
  // Virtual files beside the repository, so `express`, `@types/node`... resolve from its node_modules.
  const virtual = new Map<string, Sample>();
  // The files of a page's project (getting-started's app.ts imports ./service-accounts.js) sit
  // together in a folder of their own, an ES module package as the page sets up.
  const projects = new Map<string, string>();
  samples.forEach((sample, index) => {
    const name = relative(root, sample.doc).replace(/[^A-Za-z0-9]+/g, '-');
    if (sample.file === undefined) virtual.set(join(root, '.code-samples', `${name}-${index}.mts`), sample);
    else {
      virtual.set(join(root, '.code-samples', name, sample.file), sample);
      projects.set(join(root, '.code-samples', name, 'package.json'), '{ "type": "module" }');
    }
  });
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  host.fileExists = (file) => virtual.has(file) || projects.has(file) || fileExists.call(host, file);
  host.readFile = (file) => virtual.get(file)?.code ?? projects.get(file) ?? readFile.call(host, file);
  host.directoryExists = (dir) =>
    [...projects.keys()].some((file) => file.startsWith(`${dir}/`)) || (directoryExists?.call(host, dir) ?? ts.sys.directoryExists(dir));
  host.getSourceFile = (file, language, ...rest) => {
    const sample = virtual.get(file);
    if (sample) return ts.createSourceFile(file, sample.code, language, true);
    return getSourceFile.call(host, file, language, ...rest);
  };
  // The entry points are roots too, so the export check below finds them in the same program.
  const rootNames = [...virtual.keys(), ...Object.values(ENTRY_POINTS)];
  return { program: ts.createProgram({ rootNames, options, host }), virtual };
}

function typeCheck({ program, virtual }: ReturnType<typeof createProgram>): string[] {
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

/**
 * Exports that may still lack an `@example`, each with why. Remove an entry once its example exists
 * (the test fails while a listed export has one, so the list cannot go stale).
 */
const EXAMPLE_PENDING: Readonly<Record<string, string>> = {};

/** `entry: Name` of every export of the entry points whose declaration has no `@example` tag. */
function exportsWithoutExample(program: ts.Program): string[] {
  const checker = program.getTypeChecker();
  return Object.entries(ENTRY_POINTS).flatMap(([specifier, file]) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    return checker.getExportsOfModule(module).flatMap((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const hasExample = (target.declarations ?? []).some((declaration) =>
        ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'example'),
      );
      return hasExample ? [] : [`${specifier}: ${symbol.name}`];
    });
  });
}

describe('code samples in README.md and docs/*.md', () => {
  const samples = [join(root, 'README.md'), ...markdownFiles('docs')].flatMap((file) =>
    extractSamples(file, readFileSync(file, 'utf8')),
  );
  const examples = apiExamples();
  let compiled: ReturnType<typeof createProgram> | undefined;
  const program = () => (compiled ??= createProgram([...samples, ...examples]));

  it('finds the samples', () => {
    expect(samples.length).toBeGreaterThan(10);
  });

  it('finds the TSDoc examples in docs/api (run `npm run docs:api` after changing the TSDoc)', () => {
    const docs = new Set(examples.map((example) => relative(root, example.doc)));
    expect([...docs].sort()).toEqual(['docs/api/index.md', 'docs/api/sql.md', 'docs/api/testing.md']);
  });

  it('type-check against the sources', () => {
    expect(typeCheck(program())).toEqual([]);
  }, 120_000);

  it('every export has TSDoc with an @example (STYLE §7)', () => {
    const missing = exportsWithoutExample(program().program);
    const pending = missing.filter((entry) => entry.split(': ')[1]! in EXAMPLE_PENDING);
    expect(missing.filter((entry) => !pending.includes(entry)), 'exports without an @example').toEqual([]);
    expect(pending.map((entry) => entry.split(': ')[1]), 'EXAMPLE_PENDING lists an export that has its example now: remove it').toEqual(
      Object.keys(EXAMPLE_PENDING),
    );
  }, 120_000);
});
