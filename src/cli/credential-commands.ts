/**
 * @module credential-commands
 * The CLI's commands on credentials: `secret`, `key` and `federated`, each with `add` and `revoke`.
 * What every kind shares (the group, `revoke`, `--expires-in`, the answers) is written once and
 * follows the kind's row of {@link CLI_KINDS} and of `CREDENTIAL_KINDS` (whose method names the admin
 * API shares); only each kind's `add` options and input are its own.
 */
import { Option, type Command } from 'commander';
import type { AdminApi } from '../index.js';
import { CREDENTIAL_KINDS, type CredentialKindName } from '../store/credential-kinds.js';
import { cliAllowedIssuers, type AdminSessionOptions } from './admin-session.js';
import { claimConditionsOf, collectClaim } from './claim-options.js';
import {
  createdFederatedJson,
  createdFederatedText,
  createdKeyJson,
  createdKeyText,
  createdSecretJson,
  createdSecretText,
  revokedFederatedJson,
  revokedFederatedText,
  revokedKeyJson,
  revokedKeyText,
  revokedSecretJson,
  revokedSecretText,
  type Json,
} from './output.js';
import { readPublicKeyArgument } from './read-public-key.js';

/** What a command hands back: its `--json` document and its human-readable text. */
type CommandResult = { readonly json: Json; readonly text: string };

/** Runs one admin call against the store and prints its result (the program's `run`). */
export type RunCredentialCall = (command: Command, call: (admin: AdminApi) => Promise<CommandResult>, sessionOptions?: AdminSessionOptions) => Promise<void>;

/** The options of `federated add`, as Commander parses them. */
interface FederatedAddOptions {
  issuer: string;
  subject: string;
  audience?: string;
  jwksUri?: string;
  claim?: string[];
  expiresIn?: string;
  allowedIssuers?: string;
}

const EXPIRES_IN = ['--expires-in <duration>', 'when it stops working on its own: 90d, 12h, 30m or 4s (default: never, unless the server requires an expiry)'] as const;

/** `--expires-in`, as the admin API takes it (it reads and checks the duration). */
function expiryOf(options: { expiresIn?: string }): { expiresIn?: string } {
  return options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn };
}

/**
 * The admin call of a kind's `add`: adds the credential, and answers with its `--json` document and
 * its text (output.ts).
 */
function added<C>(
  clientId: string,
  add: (admin: AdminApi) => Promise<C>,
  json: (created: C) => Json,
  text: (clientId: string, created: C) => string,
): (admin: AdminApi) => Promise<CommandResult> {
  return async (admin) => {
    const created = await add(admin);
    return { json: json(created), text: text(clientId, created) };
  };
}

/** A kind's answer to `revoke`: the revocation's `--json` document and its text (output.ts). */
function answered<R>(json: (revoked: R) => Json, text: (revoked: R) => string): (revoked: R) => CommandResult {
  return (revoked) => ({ json: json(revoked), text: text(revoked) });
}

/** One kind's commands: the group's word and description, `add` (its own), and what `revoke` says and prints. */
interface CliKind {
  readonly word: string;
  readonly description: string;
  readonly add: {
    readonly description: string;
    /** Its options besides `<clientId>`, in the order the help lists them. */
    readonly options: (add: Command) => Command;
    readonly help: string;
    /** Reads what the options name (before the store is opened) and gives the admin call, and the session it needs. */
    readonly prepare: (clientId: string, options: never) => Promise<{ call: (admin: AdminApi) => Promise<CommandResult>; session?: AdminSessionOptions }>;
  };
  readonly revoke: { readonly description: string; readonly id: string; readonly idDescription: string; readonly answer: (revoked: never) => CommandResult };
}

/**
 * Each kind's commands, in the order the help lists them.
 *
 * @example
 * ```ts
 * const words = Object.values(CLI_KINDS).map((kind) => kind.word) // secret, key, federated
 * ```
 */
export const CLI_KINDS: { readonly [K in CredentialKindName]: CliKind } = {
  secret: {
    word: 'secret',
    description: 'add or revoke client secrets (rotation, breach response)',
    add: {
      description: 'add a client secret to an account (shown once); the others keep working',
      options: (add) => add.option(...EXPIRES_IN),
      help: '\nExample (rotation with expiring secrets, docs/rotation.md):\n  service-accounts secret add esa_... --expires-in 90d --json',
      prepare: async (clientId, options: { expiresIn?: string }) => ({
        call: added(clientId, (admin) => admin.addSecret(clientId, expiryOf(options)), createdSecretJson, createdSecretText),
      }),
    },
    revoke: {
      description: 'revoke a client secret and every access token issued against it',
      id: '<secretId>',
      idDescription: 'ID of the secret, as `list` shows it',
      answer: answered(revokedSecretJson, revokedSecretText),
    },
  },
  key: {
    word: 'key',
    description: 'register or revoke public keys: credentials whose private half stays with the client',
    add: {
      description: 'register a public key (EC P-256, RSA 2048+ or Ed25519; PEM or JWK) as a credential of an account',
      options: (add) => add.requiredOption('--public-key <file>', 'the public key file (PEM or JWK); - reads standard input').option(...EXPIRES_IN),
      help: '\nExample:\n  openssl pkey -in private.pem -pubout | service-accounts key add esa_... --public-key - --json',
      prepare: async (clientId, options: { publicKey: string; expiresIn?: string }) => {
        const publicKey = await readPublicKeyArgument(options.publicKey);
        return { call: added(clientId, (admin) => admin.addKey(clientId, publicKey, expiryOf(options)), createdKeyJson, createdKeyText) };
      },
    },
    revoke: {
      description: 'revoke a public key and every access token issued against it',
      id: '<keyId>',
      idDescription: 'ID of the key, as `list` shows it',
      answer: answered(revokedKeyJson, revokedKeyText),
    },
  },
  federated: {
    word: 'federated',
    description: "trust or stop trusting an outside issuer's tokens (Kubernetes, GitHub Actions, any OpenID Connect provider) for one subject",
    add: {
      description: 'trust tokens of an outside issuer for exactly one subject as a credential of an account (no secret is stored)',
      options: (add) =>
        add
          .requiredOption('--issuer <url>', "the issuer's identifier, exactly as its tokens carry it in iss (https)")
          .requiredOption('--subject <sub>', 'the one subject (sub) accepted, compared exactly: patterns are not supported')
          .option('--audience <aud>', "the audience (aud) the tokens must carry (default: this server's issuer identifier)")
          .option('--jwks-uri <url>', "the issuer's JWK Set URL, when it has no OpenID Connect discovery")
          .option(
            '--claim <name=value>',
            'a claim condition: another claim the token must carry with exactly this value (repeatable, all must hold); ' +
              'a nested claim as a JSON Pointer, e.g. /kubernetes.io/namespace=payments',
            collectClaim,
          )
          .option(...EXPIRES_IN)
          .addOption(
            new Option('--allowed-issuers <urls>', "refuse any issuer but these (comma-separated; none; any), as the server's federation.allowedIssuers does")
              .env('FEDERATION_ALLOWED_ISSUERS'),
          ),
      help:
        '\nWithout --audience the tokens must be issued for your server\'s issuer identifier (its `issuer` option,\n' +
          'TOKEN_ISSUER in the example server). The CLI cannot read it from the server: it prints TOKEN_ISSUER when\n' +
          'set, and otherwise null, meaning "the server\'s issuer option".\n' +
          '\nWith --allowed-issuers (or FEDERATION_ALLOWED_ISSUERS, as the example server reads it), an issuer outside\n' +
          'the list and --jwks-uri are refused, as the server refuses them.\n' +
          '\nExample:\n' +
          '  service-accounts federated add esa_... --issuer https://token.actions.githubusercontent.com \\\n' +
          '    --subject repo:acme/billing:environment:production --claim repository_owner=acme --json',
      prepare: async (clientId, options: FederatedAddOptions) => {
        const claims = options.claim !== undefined ? claimConditionsOf(options.claim) : undefined;
        const input = {
          issuer: options.issuer,
          subject: options.subject,
          ...(options.audience !== undefined && { audience: options.audience }),
          ...(options.jwksUri !== undefined && { jwksUri: options.jwksUri }),
          ...(claims !== undefined && { claims }),
          ...expiryOf(options),
        };
        return {
          call: added(clientId, (admin) => admin.addFederatedCredential(clientId, input), createdFederatedJson, createdFederatedText),
          session: { allowedIssuers: cliAllowedIssuers(options.allowedIssuers) },
        };
      },
    },
    revoke: {
      description: 'revoke a federated credential and every access token issued against it',
      id: '<credentialId>',
      idDescription: 'ID of the federated credential, as `list` shows it',
      answer: answered(revokedFederatedJson, revokedFederatedText),
    },
  },
};

/** The admin API's revoke methods, by the names the kind's descriptor gives (`revokeKey`, ...). */
type RevokeMethod = (clientId: string, id: string) => Promise<never>;

/**
 * Adds `secret`, `key` and `federated`, each with `add` and `revoke`, to the program.
 *
 * @example
 * ```ts
 * import { Command } from 'commander'
 * declare const run: RunCredentialCall // the program's: opens the store, calls the admin API, prints
 *
 * const program = new Command('service-accounts')
 * addCredentialCommands(program, run)
 * ```
 */
export function addCredentialCommands(program: Command, run: RunCredentialCall): void {
  for (const kind of Object.keys(CLI_KINDS) as CredentialKindName[]) {
    const { word, description, add, revoke } = CLI_KINDS[kind];
    const method = CREDENTIAL_KINDS[kind].revoke;
    const group = program.command(word).description(description);
    add
      .options(group.command('add').description(add.description).argument('<clientId>', 'client ID of the account'))
      .addHelpText('after', add.help)
      .action(async (clientId: string, options: unknown, command: Command) => {
        // Commander parsed the options this kind's `add.options` defined.
        const { call, session } = await add.prepare(clientId, options as never);
        await run(command, call, session);
      });
    group
      .command('revoke')
      .description(revoke.description)
      .argument('<clientId>', 'client ID of the account')
      .argument(revoke.id, revoke.idDescription)
      .action(async (clientId: string, id: string, _options: unknown, command: Command) => {
        await run(command, async (admin) => revoke.answer(await (admin[method] as RevokeMethod).call(admin, clientId, id)));
      });
  }
}
