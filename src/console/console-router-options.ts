/**
 * @module console-router-options
 * `ConsoleRouterOptions` → `resolveConsoleRouterOptions()`: what the host gives the self-service page
 * (who is acting, through the same `authorize` as the admin router; texts; where to sign in), checked
 * once when the router is created.
 */
import type { AdminApi } from '../admin/admin-api.js';
import type { AdminRouterOptions } from '../admin-router/admin-router-options.js';
import { checkKnownKeys, fail } from '../config-checks.js';
import { CONSOLE_STRINGS, REFUSAL_TEXTS, type ConsoleStrings } from './console-strings.js';

/**
 * Options of the self-service page (`sa.consoleRouter(options)`, {@link createConsoleRouter}). The
 * page's JSON calls go to the admin router, created with the same `authorize`, `onError` and
 * `operatorOnlyScopes`: a client account's administrator sees and changes only its accounts.
 *
 * @example
 * ```ts
 * import type { ConsoleRouterOptions } from 'express-service-accounts'
 *
 * // Your own login, which ran before: the signed-in user of a request, if any.
 * declare function currentUser(req: import('express').Request): { id: string; name: string; tenant: string } | undefined
 *
 * const options: ConsoleRouterOptions = {
 *   authorize: (req) => {
 *     const user = currentUser(req)
 *     return user && { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
 *   },
 *   signInUrl: '/login',
 *   strings: { title: 'API credentials' },
 * }
 * ```
 */
export interface ConsoleRouterOptions extends Omit<AdminRouterOptions, 'challenge'> {
  /**
   * Texts that replace the page's English defaults ({@link CONSOLE_STRINGS}), to translate or reword
   * it. Keep the `{placeholders}`.
   * @default {} (English)
   */
  strings?: Partial<ConsoleStrings>;
  /**
   * The page's language (`<html lang>`), a BCP 47 tag; dates are formatted for it too.
   * @default 'en'
   */
  lang?: string;
  /**
   * Where a person who is not signed in can sign in: the page shown to them links there. A path on
   * your site (`/login`) or an `https:` URL.
   * @default none (the page only says to sign in)
   */
  signInUrl?: string;
  /**
   * A stylesheet of your own, on your own site (`/assets/console-theme.css`), loaded after the page's:
   * set its CSS custom properties (`--esa-accent`, ...) there to match your look. The page's
   * Content-Security-Policy admits stylesheets from your own origin only.
   * @default none
   */
  stylesheet?: string;
}

/**
 * Options of {@link createConsoleRouter}: the page's options and the admin API it runs on.
 *
 * @example
 * ```ts
 * import { createAdminApi, createConsoleRouter, type AdminPrincipal, type CreateConsoleRouterOptions } from 'express-service-accounts'
 *
 * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // your login
 *
 * const options: CreateConsoleRouterOptions = { admin: createAdminApi({ store }), authorize: principalOf }
 * app.use('/console', createConsoleRouter(options))
 * ```
 */
export interface CreateConsoleRouterOptions extends ConsoleRouterOptions {
  /** The admin API every change goes through (`sa.admin` or `createAdminApi(...)`). */
  admin: AdminApi;
}

/** {@link CreateConsoleRouterOptions}, checked. */
export interface ResolvedConsoleRouterOptions {
  readonly admin: AdminApi;
  readonly authorize: AdminRouterOptions['authorize'];
  readonly onError: AdminRouterOptions['onError'];
  readonly operatorOnlyScopes: readonly string[] | undefined;
  readonly strings: ConsoleStrings;
  /** The refusal texts the host gave, other than the defaults: the page shows these instead of the server's own words. */
  readonly ownRefusals: readonly (typeof REFUSAL_TEXTS)[number][];
  readonly lang: string;
  readonly signInUrl: string | undefined;
  readonly stylesheet: string | undefined;
}

const KNOWN: ReadonlySet<string> = new Set<keyof CreateConsoleRouterOptions>([
  'admin', 'authorize', 'onError', 'operatorOnlyScopes', 'strings', 'lang', 'signInUrl', 'stylesheet',
]);

/** A path on this site (`/x`, never `//host`) or an https URL; `http:` on a loopback host for development. */
function isLinkable(value: string): boolean {
  if (/^\/(?![/\\])/.test(value)) return true;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname));
  } catch {
    return false;
  }
}

/**
 * Checks the options once; a bad or unknown one throws a `TypeError` naming it. The admin router's
 * own options (`authorize`, `onError`, `operatorOnlyScopes`) are checked by the admin router.
 *
 * @example
 * ```ts
 * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // your login
 *
 * const { strings, lang } = resolveConsoleRouterOptions({ admin: sa.admin, authorize: principalOf, lang: 'de' })
 * ```
 */
export function resolveConsoleRouterOptions(options: CreateConsoleRouterOptions): ResolvedConsoleRouterOptions {
  checkKnownKeys(options, KNOWN);
  const { admin, authorize, onError, operatorOnlyScopes, strings = {}, lang = 'en', signInUrl, stylesheet } = options;
  if (typeof strings !== 'object' || strings === null) fail('strings', 'must be an object of texts');
  for (const [key, value] of Object.entries(strings)) {
    if (!(key in CONSOLE_STRINGS)) fail(`strings.${key}`, 'is not a text of the page');
    if (typeof value !== 'string') fail(`strings.${key}`, 'must be a string');
  }
  if (typeof lang !== 'string' || !/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(lang)) fail('lang', 'must be a language tag such as en or de-CH');
  if (signInUrl !== undefined && (typeof signInUrl !== 'string' || !isLinkable(signInUrl))) fail('signInUrl', 'must be a path on your site (/...) or an https URL');
  if (stylesheet !== undefined && (typeof stylesheet !== 'string' || !/^\/(?![/\\])/.test(stylesheet))) fail('stylesheet', 'must be a path on your site (/...)');
  return Object.freeze({
    admin,
    authorize,
    onError,
    operatorOnlyScopes,
    strings: Object.freeze({ ...CONSOLE_STRINGS, ...strings }),
    // Given and different from the default: a host that spreads CONSOLE_STRINGS into its own keeps
    // the server's detailed words.
    ownRefusals: Object.freeze(REFUSAL_TEXTS.filter((key) => Object.hasOwn(strings, key) && strings[key] !== CONSOLE_STRINGS[key])),
    lang,
    signInUrl,
    stylesheet,
  });
}
