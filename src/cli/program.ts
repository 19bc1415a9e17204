/**
 * @module program
 * The `service-accounts` command line, defined with commander: one subcommand per admin API call.
 * `--store` and `--json` belong to the program, so commander accepts them before and after the
 * command words; every command reads them with `optsWithGlobals()`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import type { AdminApi } from '../index.js';
import { redactSecrets } from '../credentials/redact-secrets.js';
import { parseAccountStoreUrl } from '../sql/index.js';
import { openAdminSession, type AdminSessionOptions } from './admin-session.js';
import {
  accountResourcesJson,
  accountResourcesText,
  accountListJson,
  accountListText,
  accountStatusJson,
  accountStatusText,
  createdAccountJson,
  createdAccountText,
  revokedTokenJson,
  revokedTokenText,
  staleCredentialsJson,
  staleCredentialsText,
  type Json,
} from './output.js';
import { addCredentialCommands } from './credential-commands.js';
import { addPolicyCommands, parseDuration } from './policy-commands.js';
import { UsageError } from './usage-error.js';

/** The store used when neither `--store` nor `SERVICE_ACCOUNTS_STORE` names one (docs/cli.md). */
export const DEFAULT_STORE_URL = 'sqlite:./.data/service-accounts.db';

/** Where the CLI writes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

interface GlobalOptions {
  store: string;
  json?: boolean;
}

/** What a command hands back: its `--json` document and its human-readable text. */
interface CommandResult {
  readonly json: Json;
  readonly text: string;
}

function packageVersion(): string {
  // src/cli/program.ts and dist/cli/main.cjs both sit two folders below package.json.
  try {
    return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function collectScopes(value: string, previous: string | undefined): string {
  return previous === undefined ? value : `${previous} ${value}`;
}

/** The environment variable each admin session setting is read from. */
const SESSION_VARIABLES: readonly (readonly [option: string, variable: string])[] = [
  ['maxCredentialLifetime', 'MAX_CREDENTIAL_LIFETIME'],
  ['maxAccessTokenLifetime', 'MAX_TOKEN_TTL_SECONDS'],
  ['tokenLifetime', 'TOKEN_TTL_SECONDS'],
];

/**
 * A refused setting of the admin session, named as it was given: `MAX_CREDENTIAL_LIFETIME`,
 * `TOKEN_TTL_SECONDS`, `MAX_TOKEN_TTL_SECONDS`, or `--allowed-issuers` / `FEDERATION_ALLOWED_ISSUERS`
 * for `federated add`: a message about option "maxCredentialLifetime" becomes
 * `MAX_CREDENTIAL_LIFETIME: <message>`.
 */
function sessionSettingMessage(message: string, command: Command): string {
  for (const [option, variable] of SESSION_VARIABLES) {
    if (message.startsWith(`${variable} `)) return message;
    if (message.includes(`"${option}"`)) return `${variable}: ${message}`;
  }
  if (message.includes('"allowedIssuers')) {
    return `${command.getOptionValueSource('allowedIssuers') === 'env' ? 'FEDERATION_ALLOWED_ISSUERS' : '--allowed-issuers'}: ${message}`;
  }
  return message;
}

/**
 * Text with the password of every URL in it (`scheme://user:PASSWORD@host`) replaced by `[REDACTED]`:
 * `unknown option '--stor=postgres://app:s3cret@db/prod'` becomes `... postgres://app:[REDACTED]@db/prod'`.
 */
function redactUrlPasswords(text: string): string {
  // Up to the last `@` of the line: a password may hold an unencoded `@`, `/`, quote or space, and a
  // user name a quote or space (pg reads them).
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\n/:@]*):[^\n]*@/gi, '$1:[REDACTED]@');
}

/** The options of `create`. */
interface CreateOptions {
  name: string;
  clientAccount?: string;
  scope?: string;
  resource?: string[];
  tokenLifetime?: string;
  requireDpop?: boolean;
  expiresIn?: string;
}

function collectResources(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * Builds the program. Commander's own errors (unknown command or option, missing argument) and its
 * help output surface as a `CommanderError` thrown from `parseAsync`, because of `exitOverride()`.
 *
 * @example
 * ```ts
 * declare const io: CliIo // stdout and stderr writers (tests pass in-memory ones)
 * await buildProgram(io).parseAsync(['list', '--json'], { from: 'user' })
 * ```
 */
export function buildProgram(io: CliIo): Command {
  const program = new Command('service-accounts');
  // SERVICE_ACCOUNTS_STORE is read as the example server reads it: trimmed (a value from a .env file or
  // a mounted secret often ends in a line break), and empty means "not set": the default store.
  const storeFromEnv = process.env.SERVICE_ACCOUNTS_STORE?.trim();
  if (storeFromEnv === '') delete process.env.SERVICE_ACCOUNTS_STORE;
  else if (storeFromEnv !== undefined) process.env.SERVICE_ACCOUNTS_STORE = storeFromEnv;

  // Settings set before .command() are inherited by every subcommand.
  program
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      // Commander's own messages ("error: unknown option '--bogus'") carry the prefix of all the others, and
      // may quote what was typed: a secret pasted as an option is redacted, and so is the password of a
      // store URL typed with a misspelt --store (`--stor=postgres://app:PASSWORD@db/prod`) or none.
      outputError: (text, write) => write(`service-accounts: ${redactSecrets(redactUrlPasswords(text.replace(/^error: /, '')))}`),
    })
    .configureHelp({ showGlobalOptions: true })
    .allowExcessArguments(false);

  program
    .description('Provision OAuth 2.0 service accounts and manage their client secrets, public keys and federated credentials.')
    .version(packageVersion(), '-V, --version')
    .addOption(
      new Option('--store <url>', 'account store: sqlite:PATH or postgres://USER:PASSWORD@HOST/DB[?schema=NAME]')
        .env('SERVICE_ACCOUNTS_STORE')
        .default(DEFAULT_STORE_URL),
    )
    .option('--json', 'print exactly one JSON document on stdout')
    .addHelpText(
      'after',
      '\nExit codes: 0 success, 1 failure (message on stderr), 2 usage error.\n' +
        '--store and --json may also follow the command words.',
    );

  /** Runs one admin call against the store and prints its result. */
  const run = async (command: Command, call: (admin: AdminApi) => Promise<CommandResult>, sessionOptions: AdminSessionOptions = {}): Promise<void> => {
    const options = command.optsWithGlobals<GlobalOptions>();
    try {
      parseAccountStoreUrl(options.store);
    } catch (error) {
      const from = command.getOptionValueSourceWithGlobals('store') === 'env' ? 'SERVICE_ACCOUNTS_STORE' : '--store';
      throw new UsageError(`${from}: ${(error as Error).message}`);
    }
    let session: ReturnType<typeof openAdminSession>;
    try {
      session = openAdminSession(options.store, sessionOptions);
    } catch (error) {
      // The store URL was checked above: what is left are the lifetime settings and the allowed issuers.
      if (error instanceof TypeError) throw new UsageError(sessionSettingMessage(error.message, command));
      throw error;
    }
    let result: CommandResult;
    try {
      result = await call(session.admin);
    } finally {
      await session.close().catch(() => undefined);
    }
    io.stdout(options.json ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.text}\n`);
  };

  program
    .command('create')
    .description('provision a service account with its first client secret (shown once)')
    .requiredOption('--name <name>', 'the name audit logs and activity history show for its actions')
    .option('--client-account <id>', 'the client account it acts for')
    .option('--scope <scopes>', 'allowed scopes, space-separated (repeatable); none means unrestricted', collectScopes)
    .option(
      '--resource <uri>',
      "a resource (API) its tokens may be for: an absolute URI or a plain name (repeatable); none: the server's audience",
      collectResources,
    )
    .option('--token-lifetime <duration>', "its tokens' lifetime (90s, 15m, 12h, 1d); default: the server's")
    .option('--require-dpop', 'require DPoP-bound tokens (RFC 9449): token requests without a DPoP proof are refused')
    .option('--expires-in <duration>', 'when its first secret stops working on its own: 90d, 12h, 30m or 4s (default: never)')
    .addHelpText(
      'after',
      '\nExamples:\n  service-accounts create --name procurement-portal --scope "jobs:read jobs:write" --json\n' +
        '  service-accounts create --name billing-exporter --resource https://billing.example.com --json\n' +
        '  service-accounts create --name payouts --token-lifetime 15m --require-dpop --json',
    )
    .action(async (options: CreateOptions, command: Command) => {
      const accessTokenLifetime = options.tokenLifetime === undefined ? undefined : parseDuration(options.tokenLifetime, '--token-lifetime');
      await run(command, async (admin) => {
        const account = await admin.createAccount({
          name: options.name,
          clientAccountId: options.clientAccount ?? null,
          ...(options.scope !== undefined && { scopes: options.scope }),
          ...(options.resource !== undefined && { resources: options.resource }),
          ...(accessTokenLifetime !== undefined && { accessTokenLifetime }),
          ...(options.requireDpop === true && { dpopBoundAccessTokens: true }),
          ...(options.expiresIn !== undefined && { secret: { expiresIn: options.expiresIn } }),
        });
        return { json: createdAccountJson(account), text: createdAccountText(account) };
      });
    });

  program
    .command('list')
    .description('list service accounts, their secrets (IDs and dates only, never a secret or a hash), public keys and federated credentials')
    .action(async (_options: unknown, command: Command) => {
      await run(command, async (admin) => {
        const accounts = await admin.listAccounts();
        return { json: accountListJson(accounts), text: accountListText(accounts) };
      });
    });

  addCredentialCommands(program, run);

  program
    .command('credentials')
    .description('review credentials: what to rotate or revoke next')
    .command('stale')
    .description('list live secrets, keys and federated credentials that expire soon (or have expired) or have not been used for a while')
    .option('--expiring-within <duration>', 'credentials that expire within this long (14d, 12h, 30m, 4s), or have expired')
    .option('--unused-for <duration>', 'credentials last used (never used: created) at least this long ago (30d, ...)')
    .addHelpText('after', '\nExample:\n  service-accounts credentials stale --expiring-within 14d --unused-for 30d --json')
    .action(async (options: { expiringWithin?: string; unusedFor?: string }, command: Command) => {
      if (options.expiringWithin === undefined && options.unusedFor === undefined) {
        throw new UsageError('credentials stale: give --expiring-within, --unused-for or both');
      }
      await run(command, async (admin) => {
        const stale = await admin.listStaleCredentials({
          ...(options.expiringWithin !== undefined && { expiringWithin: options.expiringWithin }),
          ...(options.unusedFor !== undefined && { unusedFor: options.unusedFor }),
        });
        return { json: staleCredentialsJson(stale), text: staleCredentialsText(stale) };
      });
    });

  program
    .command('resources')
    .description('choose the resources (APIs) an account\'s tokens may be for (RFC 8707 resource indicators)')
    .command('set')
    .description('replace the resources of an account; tokens for a resource taken off are refused within 1 second')
    .argument('<clientId>', 'client ID of the account')
    .option('--resource <uri>', 'a resource (API) its tokens may be for: an absolute URI or a plain name (repeatable)', collectResources)
    .option('--none', "no resources: its tokens are for the server's audience again")
    .addHelpText('after', '\nExample:\n  service-accounts resources set esa_... --resource https://billing.example.com --resource reports --json')
    .action(async (clientId: string, options: { resource?: string[]; none?: boolean }, command: Command) => {
      if ((options.resource === undefined) === (options.none !== true)) {
        throw new UsageError('resources set: give --resource (one or more times) or --none, not both');
      }
      await run(command, async (admin) => {
        const changed = await admin.setResources(clientId, options.resource ?? []);
        return { json: accountResourcesJson(changed), text: accountResourcesText(changed) };
      });
    });

  addPolicyCommands(program, run);

  program
    .command('token')
    .description('revoke a single access token')
    .command('revoke')
    .description('revoke one access token by its ID (the tokenId of an audit line); its account keeps its other tokens')
    .argument('<tokenId>', 'ID of the token (its jti claim)')
    .action(async (tokenId: string, _options: unknown, command: Command) => {
      await run(command, async (admin) => {
        const revoked = await admin.revokeToken(tokenId);
        return { json: revokedTokenJson(revoked), text: revokedTokenText(revoked) };
      });
    });

  for (const enabled of [false, true]) {
    program
      .command(enabled ? 'enable' : 'disable')
      .description(
        enabled
          ? 're-enable a disabled service account'
          : 'disable a service account: its tokens are refused and it can get no new ones',
      )
      .argument('<clientId>', 'client ID of the account')
      .action(async (clientId: string, _options: unknown, command: Command) => {
        await run(command, async (admin) => {
          const status = enabled ? await admin.enableAccount(clientId) : await admin.disableAccount(clientId);
          return { json: accountStatusJson(status), text: accountStatusText(status) };
        });
      });
  }

  // `secret add`, `key add` or `federated add` typed without its first word: say so rather than just "unknown command".
  for (const word of ['add', 'revoke']) {
    program
      .command(word, { hidden: true })
      .argument('[arguments...]')
      .allowUnknownOption()
      .helpOption(false)
      .action(() => {
        throw new UsageError(
          `unknown command '${word}' (did you mean 'service-accounts secret ${word}', 'service-accounts key ${word}' or 'service-accounts federated ${word}'?)`,
        );
      });
  }

  return program;
}
