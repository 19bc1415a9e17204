/**
 * @module console-html
 * The self-service page's HTML: the page itself (a shell the script fills in, with the texts and who
 * is signed in as data attributes, never inline script or style) and the short pages shown instead
 * to someone who is not signed in, may not manage service accounts, or met an error. Every value is
 * escaped here, once.
 */
import type { AdminPrincipal } from '../admin-router/admin-router-options.js';
import type { ResolvedConsoleRouterOptions } from './console-router-options.js';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text made safe for HTML content and quoted attribute values.
 *
 * @example
 * ```ts
 * escapeHtml('Ada <Lovelace>') // 'Ada &lt;Lovelace&gt;'
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * Fills `{name}`-style placeholders; an unknown one stays as it is.
 *
 * @example
 * ```ts
 * fill('Signed in as {name}', { name: 'Ada' }) // 'Signed in as Ada'
 * ```
 */
export function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

function documentOf(options: ResolvedConsoleRouterOptions, title: string, body: string, script: boolean): string {
  const theme = options.stylesheet === undefined ? '' : `\n<link rel="stylesheet" href="${escapeHtml(options.stylesheet)}">`;
  return `<!doctype html>
<html lang="${escapeHtml(options.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="console.css">${theme}${script ? '\n<script src="console.js" defer></script>' : ''}
</head>
${body}
</html>
`;
}

/**
 * The page for a signed-in person: a shell that console.js fills in (its texts, its language, the
 * server's `maxCredentialLifetime` and `maxAccessTokenLifetime`, whether it offers DPoP, what its
 * store cannot hold, and which refusal texts the host gave, as data attributes).
 *
 * @example
 * ```ts
 * import { resolveConsoleRouterOptions } from './console-router-options.js'
 *
 * const resolved = resolveConsoleRouterOptions({ admin: sa.admin, authorize: () => undefined })
 * res.end(renderConsolePage(resolved, { actor: { id: 'u_1', name: 'Ada' }, clientAccountId: 'acme' }))
 * ```
 */
export function renderConsolePage(options: ResolvedConsoleRouterOptions, principal: AdminPrincipal): string {
  const { strings } = options;
  const account = 'clientAccountId' in principal ? fill(strings.clientAccount, { id: principal.clientAccountId }) : strings.allClientAccounts;
  const who = `${fill(strings.signedInAs, { name: principal.actor.name })} · ${account}`;
  // The server's bounds: the page offers only the expiries and token lifetimes it accepts, and DPoP
  // only where the server can issue DPoP-bound tokens.
  const { maxCredentialLifetime: max, maxAccessTokenLifetime: maxToken, dpopAvailable, supports } = options.admin;
  // What the store cannot hold (a host's own store may leave keys, federated credentials, policies or expiry out).
  const lacks = supports ? (['keys', 'federated', 'accountPolicy', 'credentialExpiry'] as const).filter((what) => supports[what] === false) : [];
  const bounds =
    (Number.isSafeInteger(max) && max! > 0 ? ` data-max-credential-lifetime="${max}"` : '') +
    (Number.isSafeInteger(maxToken) && maxToken! > 0 ? ` data-max-access-token-lifetime="${maxToken}"` : '') +
    (dpopAvailable === false ? ' data-dpop="off"' : '') +
    (lacks.length > 0 ? ` data-store-lacks="${lacks.join(' ')}"` : '') +
    (options.ownRefusals.length > 0 ? ` data-own-refusals="${options.ownRefusals.join(' ')}"` : '');
  const body = `<body class="esa-console">
<header class="esa-header">
<h1>${escapeHtml(strings.title)}</h1>
<p class="esa-who">${escapeHtml(who)}</p>
</header>
<main id="esa-console" data-strings="${escapeHtml(JSON.stringify(strings))}" data-lang="${escapeHtml(options.lang)}"${bounds}>
<p class="esa-intro">${escapeHtml(strings.intro)}</p>
<noscript><p>${escapeHtml(strings.noScript)}</p></noscript>
</main>
</body>`;
  return documentOf(options, strings.title, body, true);
}

/** Which short page to show instead of the console. */
export type ConsoleNotice = 'sign-in' | 'forbidden' | 'error';

/**
 * The short page for someone not signed in (401), not allowed (403), or an error (500).
 *
 * @example
 * ```ts
 * import { resolveConsoleRouterOptions } from './console-router-options.js'
 *
 * const resolved = resolveConsoleRouterOptions({ admin: sa.admin, authorize: () => undefined, signInUrl: '/login' })
 * res.statusCode = 401
 * res.end(renderConsoleNotice(resolved, 'sign-in'))
 * ```
 */
export function renderConsoleNotice(options: ResolvedConsoleRouterOptions, notice: ConsoleNotice): string {
  const { strings } = options;
  const [title, hint] =
    notice === 'sign-in' ? [strings.signInTitle, strings.signInHint] : notice === 'forbidden' ? [strings.forbiddenTitle, strings.forbiddenHint] : [strings.errorTitle, strings.errorHint];
  const link = notice === 'sign-in' && options.signInUrl !== undefined ? `\n<p><a class="esa-button" href="${escapeHtml(options.signInUrl)}">${escapeHtml(strings.signInLink)}</a></p>` : '';
  const body = `<body class="esa-console">
<main class="esa-notice">
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(hint)}</p>${link}
</main>
</body>`;
  return documentOf(options, title, body, false);
}
