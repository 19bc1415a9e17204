/**
 * @module main
 * Entry point of the `service-accounts` bin: runs the command line and exits 0 on success, 1 on a
 * failure (one line on stderr, never a stack trace) and 2 on a usage error (docs/cli.md).
 */
import { CommanderError } from 'commander';
import { AdminError } from '../admin/admin-errors.js';
import { StoreUnavailableError } from '../errors.js';
import { redactSecrets } from '../credentials/redact-secrets.js';
import { buildProgram, type CliIo } from './program.js';
import { UsageError } from './usage-error.js';

/** Exit codes of the CLI. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * The option of each admin API field a refused value's message begins with (`secret.expiresIn` is
 * `create`'s first secret; `resources[1]` one item of `--resource`).
 */
const OPTION_OF_FIELD: Readonly<Record<string, string>> = {
  'secret.expiresIn': '--expires-in',
  name: '--name',
  clientAccountId: '--client-account',
  scopes: '--scope',
  resources: '--resource',
  expiresIn: '--expires-in',
  accessTokenLifetime: '--token-lifetime',
  expiringWithin: '--expiring-within',
  unusedFor: '--unused-for',
  issuer: '--issuer',
  subject: '--subject',
  audience: '--audience',
  jwksUri: '--jwks-uri',
  claims: '--claim',
  publicKey: '--public-key',
};

/**
 * A refusal of the admin API as the CLI user typed it: `expiresIn must ...` becomes `--expires-in must ...`,
 * `publicKey: that is ...` becomes `--public-key: that is ...`, and `resources[1] must ...` becomes
 * `--resource number 2 must ...`.
 */
function inCliTerms(message: string): string {
  const match = /^([A-Za-z]+(?:\.[A-Za-z]+)?)(?:\[(\d+)\])?(?=[ :])/.exec(message);
  const field = match?.[1];
  const option = field === undefined || !Object.hasOwn(OPTION_OF_FIELD, field) ? undefined : OPTION_OF_FIELD[field];
  if (option === undefined) return message;
  const item = match![2] === undefined ? '' : ` number ${Number(match![2]) + 1}`;
  const rest = message.slice(match![0].length);
  // The admin API's way back to the default is `null`; the CLI's is to leave the option out (or
  // `--default`), and the maximum is read from MAX_TOKEN_TTL_SECONDS here, as on the servers.
  const said = field === 'accessTokenLifetime' ? rest.replace(/, or null for the server's tokenLifetime$/, ', read from MAX_TOKEN_TTL_SECONDS where the CLI runs') : rest;
  return `${option}${item}${said}`;
}

function oneLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** The innermost useful message of an error, on one line (no stack). */
function reason(error: unknown): string {
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) return reason(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return oneLine(error.message) || (typeof code === 'string' ? code : error.name);
  }
  return oneLine(String(error));
}

/** The one-line message printed for a failure. Never echoes the store URL, which may hold a password. */
function describeFailure(error: unknown): string {
  if (error instanceof StoreUnavailableError) {
    const cause = error.cause === undefined ? reason(error) : reason(error.cause);
    return `the account store is unavailable: ${cause}`;
  }
  return reason(error);
}

/**
 * Runs the CLI on `argv` (without the node and script paths) and returns its exit code.
 *
 * @example
 * ```ts
 * const code = await runCli(['list', '--json'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) })
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // With --json, `--version` too prints one JSON document: {"version": "..."}. Commander prints the
  // version as it meets the flag, before a later --json is read, so that one line is held back here.
  const end = argv.indexOf('--');
  const json = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  let held = '';
  const out: CliIo = json ? { stdout: (text) => void (held += text), stderr: io.stderr } : io;
  try {
    await buildProgram(out).parseAsync([...argv], { from: 'user' });
    if (held !== '') io.stdout(held);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError && error.code === 'commander.version' && json) {
      io.stdout(`${JSON.stringify({ version: held.trim() })}\n`);
      return EXIT_OK;
    }
    if (held !== '') io.stdout(held);
    // Commander has already printed its message (or the help) through io.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    const refusedInput = error instanceof AdminError && error.code === 'invalid_input';
    const usage = error instanceof UsageError || refusedInput;
    // The admin API names its fields (`expiresIn`), a usage error of the CLI already says what was typed
    // (`resources set: ...`). Messages quote what was typed only in an ID's form; a driver's message is not ours to trust.
    const message = refusedInput ? inCliTerms(error.message) : usage ? (error as Error).message : describeFailure(error);
    io.stderr(`service-accounts: ${redactSecrets(message)}\n`);
    return usage ? EXIT_USAGE : EXIT_FAILURE;
  }
}

if (require.main === module) {
  const io: CliIo = {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
  // A driver may fail outside any awaited call (a pool's 'error' event): still one line, no stack.
  const crash = (error: unknown): void => {
    io.stderr(`service-accounts: ${redactSecrets(describeFailure(error))}\n`);
    process.exit(EXIT_FAILURE);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  void runCli(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
    // The store is closed, so the process ends by itself; should a driver keep a handle open anyway,
    // do not hang a shell script: exit once the output is flushed.
    setTimeout(() => process.exit(code), 1000).unref();
  });
}
