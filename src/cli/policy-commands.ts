/**
 * @module policy-commands
 * The CLI's commands for an account's token policy (docs/account-policy.md): `token-lifetime set`
 * and `dpop require|allow`, and the durations `create --token-lifetime` and `token-lifetime set` take.
 */
import type { Command } from 'commander';
import type { AdminApi } from '../index.js';
import { accountPolicyJson, accountPolicyText, type Json } from './output.js';
import { UsageError } from './usage-error.js';
import { parseDuration as readDuration } from '../admin/credential-expiry.js';

/** Runs one admin call and prints its result (the program's `run`). */
export type RunAdminCall = (command: Command, call: (admin: AdminApi) => Promise<{ readonly json: Json; readonly text: string }>) => Promise<void>;

/**
 * Reads a duration as the CLI takes it: a whole number followed by `s`, `m`, `h` or `d` (`90s`, `15m`,
 * `12h`, `1d`), or a bare number of seconds. Throws a {@link UsageError} naming `option` otherwise.
 *
 * @example
 * ```ts
 * parseDuration('15m', '--token-lifetime') // 900
 * parseDuration('3600', '--token-lifetime') // 3600
 * ```
 */
export function parseDuration(text: string, option: string): number {
  const seconds = readDuration(text);
  if (seconds === undefined) throw new UsageError(`${option}: expected a duration such as 90s, 15m, 12h or 1d, got ${JSON.stringify(text.slice(0, 40))}`);
  return seconds;
}

/**
 * Adds `token-lifetime set` and `dpop require|allow` to the program.
 *
 * @example
 * ```ts
 * import { Command } from 'commander'
 * declare const run: RunAdminCall // the program's: opens the store, calls the admin API, prints
 *
 * const program = new Command('service-accounts')
 * addPolicyCommands(program, run)
 * // service-accounts token-lifetime set esa_... 15m
 * // service-accounts dpop require esa_...
 * ```
 */
export function addPolicyCommands(program: Command, run: RunAdminCall): void {
  program
    .command('token-lifetime')
    .description("choose how long an account's access tokens live (expires_in)")
    .command('set')
    .description("set the lifetime of an account's new tokens, at most the server's maxAccessTokenLifetime")
    .argument('<clientId>', 'client ID of the account')
    .argument('[duration]', 'the lifetime: 90s, 15m, 12h, 1d, or seconds')
    .option('--default', "the server's token lifetime again (tokenLifetime)")
    .addHelpText('after', '\nExamples:\n  service-accounts token-lifetime set esa_... 15m --json\n  service-accounts token-lifetime set esa_... --default')
    .action(async (clientId: string, duration: string | undefined, options: { default?: boolean }, command: Command) => {
      if ((duration === undefined) === (options.default !== true)) {
        throw new UsageError('token-lifetime set: give a duration or --default, not both');
      }
      const accessTokenLifetime = duration === undefined ? null : parseDuration(duration, 'token-lifetime set');
      await run(command, async (admin) => {
        const policy = await admin.setPolicy(clientId, { accessTokenLifetime });
        return { json: accountPolicyJson(policy), text: accountPolicyText(policy) };
      });
    });

  const dpop = program.command('dpop').description('require DPoP-bound tokens for an account, or stop requiring them (RFC 9449)');
  for (const [word, required] of [['require', true], ['allow', false]] as const) {
    dpop
      .command(word)
      .description(
        required
          ? 'require DPoP-bound tokens: a token request without a DPoP proof is refused'
          : 'stop requiring DPoP: the account may get bearer tokens again',
      )
      .argument('<clientId>', 'client ID of the account')
      .action(async (clientId: string, _options: unknown, command: Command) => {
        await run(command, async (admin) => {
          const policy = await admin.setPolicy(clientId, { dpopBoundAccessTokens: required });
          return { json: accountPolicyJson(policy), text: accountPolicyText(policy) };
        });
      });
  }
}
