/**
 * Every ```ts sample in README.md and docs/*.md type-checks against the sources, so the docs cannot
 * drift from the API. Each sample is its own ES module (top-level await allowed) that imports the
 * package by its public names: `express-service-accounts`, `/sql` and `/testing` are mapped to
 * src/index.ts, src/sql/index.ts and src/testing/index.ts. The samples live in memory only.
 * A sample must therefore be complete: its own imports and declarations, no `...` placeholders.
 *
 * Every TSDoc `@example` in src/ type-checks too: those of the exports, which typedoc renders into
 * docs/api/*.md (the API reference `npm run docs:api` generates and `.ci/run` keeps current), and
 * those of internal names, which contributors read. They are fragments in the voice of the API
 * reference: they may use the package's exports, the exports of their own module, and a few values
 * of a host app (`sa`, `app`, `db`...) or of the library's insides (`config`, `runtime`...) without
 * declaring them. See {@link apiPreamble}. And every export of the three entry points has an
 * `@example` (STYLE §7).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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
  /** For a TSDoc example: the source file whose exports it may use. */
  readonly module?: string;
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

/**
 * What the TSDoc examples of internal names may use besides {@link API_FIXTURES}: the values a
 * contributor reading the library's insides assumes (its resolved `config`, the `runtime`, a Kysely
 * `db` on the SQL schema, an Express `req`). Same rule: never to hide an error.
 */
const INTERNAL_FIXTURES: Readonly<Record<string, string>> = {
  options: `declare const options: import('express-service-accounts').ServiceAccountsOptions`,
  config: `declare const config: import(${JSON.stringify(join(root, 'src/config.js'))}).ResolvedConfig`,
  runtime: `declare const runtime: import(${JSON.stringify(join(root, 'src/create-runtime.js'))}).Runtime`,
  db: `declare const db: import('kysely').Kysely<import(${JSON.stringify(join(root, 'src/sql/schema.js'))}).Database>`,
  trx: `declare const trx: import('kysely').Transaction<import(${JSON.stringify(join(root, 'src/sql/schema.js'))}).Database>`,
  req: `declare const req: import('express').Request`,
  res: `declare const res: import('express').Response`,
  account: `declare const account: import('express-service-accounts').AccountRecord`,
  value: `declare const value: string`,
  hash: `declare const hash: string`,
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

/** Every name a source module exports itself (declarations with `export`, `export { ... }` lists). */
function moduleExports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement)) {
      return statement.exportClause && ts.isNamedExports(statement.exportClause) ? statement.exportClause.elements.map((e) => e.name.text) : [];
    }
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return [];
    if (ts.isVariableStatement(statement)) {
      return statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
    }
    const name = (statement as ts.DeclarationStatement).name;
    return name && ts.isIdentifier(name) ? [name.text] : [];
  });
}

/**
 * Appended (not prepended, so line numbers stay right; imports are hoisted) to each TSDoc example:
 * imports of every export of the three entry points, then of the example's own module (an internal
 * example may use its neighbours), and the {@link API_FIXTURES}, less the names the example declares
 * or imports itself.
 */
function apiPreamble(code: string, module?: string, internal = false): string {
  const taken = declaredNames(code);
  const lines = Object.entries(ENTRY_POINTS).map(([specifier, file]) => {
    const names = exportedNames(file).filter((name) => !taken.has(name));
    names.forEach((name) => taken.add(name));
    return names.length > 0 ? `import { ${names.join(', ')} } from '${specifier}'` : '';
  });
  if (module !== undefined && internal) {
    const names = [...new Set(moduleExports(module))].filter((name) => !taken.has(name));
    names.forEach((name) => taken.add(name));
    if (names.length > 0) lines.push(`import { ${names.join(', ')} } from ${JSON.stringify(module.replace(/\.ts$/, '.js'))}`);
  }
  const fixtures = internal ? { ...API_FIXTURES, ...INTERNAL_FIXTURES } : API_FIXTURES;
  for (const [name, declaration] of Object.entries(fixtures)) if (!taken.has(name)) lines.push(declaration);
  return `\n// ---- preamble (test/docs/code-samples.test.ts)\n${lines.filter(Boolean).join('\n')}\n`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The ```ts blocks of every `@example` of every TSDoc comment in src/, on exported names or not:
 * the `*` margin removed, each with the line of its first code line in its source file.
 */
function sourceExamples(): Sample[] {
  const published = new Set(Object.values(ENTRY_POINTS).flatMap(exportedNames));
  return sourceFiles(join(root, 'src')).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
    /** Whether the comment at `at` documents a published name (or a member of one): its example is in docs/api. */
    const isPublished = (at: number): boolean => {
      const statement = source.statements.find((s) => s.pos <= at && at < s.end);
      if (statement === undefined) return false;
      const names = ts.isVariableStatement(statement)
        ? statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []))
        : [(statement as ts.DeclarationStatement).name].flatMap((name) => (name && ts.isIdentifier(name) ? [name.text] : []));
      return names.some((name) => published.has(name));
    };
    const samples: Sample[] = [];
    for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const startLine = text.slice(0, comment.index).split('\n').length;
      const internal = !isPublished(comment.index);
      const lines = comment[0].split('\n').map((line) => line.replace(/^\s*\*(?: |$)/, '').replace(/^\/\*\*\s?/, ''));
      let inExample = false;
      let open: { line: number; code: string[] } | undefined;
      lines.forEach((line, index) => {
        if (open === undefined) {
          if (/^@\w+/.test(line)) inExample = line.startsWith('@example');
          if (inExample && /^```(ts|typescript)\s*$/.test(line)) open = { line: startLine + index + 1, code: [] };
        } else if (/^```\s*$/.test(line)) {
          // An internal example may import its neighbours as its module does: `./x.js` from its own folder.
          const written = `${open.code.join('\n')}\n`;
          const code = internal ? written.replace(/(from |import\()'(\.\.?\/[^']+)'/g, (_m, lead: string, path: string) => `${lead}${JSON.stringify(join(dirname(file), path))}`) : written;
          samples.push({ doc: file, line: open.line, code: code + apiPreamble(code, file, internal), ...(internal && { module: file }) });
          open = undefined;
        } else {
          open.code.push(line);
        }
      });
    }
    return samples;
  });
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
  const examples = sourceExamples();
  const rendered = markdownFiles('docs/api').flatMap((file) => extractSamples(file, readFileSync(file, 'utf8'), true));
  let compiled: ReturnType<typeof createProgram> | undefined;
  const program = () => (compiled ??= createProgram([...samples, ...examples]));

  it('finds the samples', () => {
    expect(samples.length).toBeGreaterThan(10);
  });

  it('finds the TSDoc examples in src/, on exported and internal names', () => {
    expect(examples.length).toBeGreaterThan(150);
    const internal = examples.filter((example) => example.module !== undefined);
    expect(internal.length).toBeGreaterThan(60);
    expect(examples.length - internal.length).toBeGreaterThan(60);
  });

  it('finds the TSDoc examples in docs/api (run `npm run docs:api` after changing the TSDoc)', () => {
    const docs = new Set(rendered.map((example) => relative(root, example.doc)));
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
