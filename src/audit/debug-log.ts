/**
 * @module debug-log
 * The `debug` option: one line per refused token request or bearer token, saying why and what to do,
 * for the developer reading the server's console. It reads the audit events (what the `onAudit` hook
 * receives), so the authentication code knows nothing of it; the client still gets only
 * `invalid_client` or `invalid_token`. A line names the client ID, the reason and the method, never a
 * secret, an assertion or a token (nothing of them is in an audit event).
 */
import type { ClientAuthenticationFailure, InvalidTokenReason } from '../errors.js';
import type { AuditEventInput } from './audit-events.js';

/** Where every line points: one section per reason. */
const DOCS = 'docs/errors.md#debugging-401s';

/** What the debug log needs of the configuration: the audience it tells an assertion to name, and the clock. */
export interface DebugLogSettings {
  readonly issuer: string;
  /** @default () => new Date() */
  readonly now?: () => Date;
}

/**
 * At most this many lines per {@link DEBUG_WINDOW_MS}: a flood of refused requests (an attacker's, or
 * a misconfigured fleet's) cannot flood the console. The lines left out are counted, and said in one
 * line when the next window opens.
 */
export const DEBUG_LINES_PER_WINDOW = 20;
const DEBUG_WINDOW_MS = 10_000;

interface Explanation {
  /** The method the reason belongs to, when only one can give it. */
  readonly method?: string;
  readonly text: string;
}

function clientAuthExplanations(issuer: string): Record<ClientAuthenticationFailure | 'rate_limited', Explanation> {
  const aud = JSON.stringify(issuer);
  return {
    missing_credentials: { text: 'the request carried no client credentials; send the client ID and secret with HTTP Basic (curl -u ID:SECRET), or a client assertion' },
    malformed_credentials: {
      method: 'client secret',
      text: 'the client ID or secret is not in the form this server issues (esa_... and esas_...), or the Basic header is not base64 of ID:SECRET; copy both from the account\'s creation output',
    },
    unknown_client: { text: 'no service account has this client ID on this server; check the ID, and that the server uses the store the account was created in' },
    wrong_secret: {
      method: 'client secret',
      text: 'the secret is not one of the account\'s secrets; copy the secret printed when it was created (it is shown once), or add a new one',
    },
    revoked_secret: { method: 'client secret', text: 'the secret was revoked; use a live secret of the account, or add a new one' },
    disabled_account: { text: 'the account is disabled; enable it (sa.admin.enableAccount or the CLI\'s enable command) if it should work' },
    invalid_assertion: {
      method: 'private_key_jwt or federated token',
      text:
        'the assertion did not check out: for a key pair, it must be a JWT whose iss and sub are the client ID (the same as any client_id sent beside it), with exp and a jti, ' +
        'an asymmetric alg and no crit header, and a kid when the account has more than 3 live keys of its type; a federated token must be signed by a key its issuer publishes, with an exp',
    },
    wrong_audience: {
      method: 'private_key_jwt or federated token',
      text:
        `the token's aud is not the one required alone: a key-pair assertion must name exactly ${aud} (with Authlib: PrivateKeyJWT(${aud}); ` +
        'or, for untyped assertions of clients that can only name the token endpoint URL, turn on acceptTokenEndpointAudience); a federated token, its credential\'s audience ' +
        `(by default ${aud})`,
    },
    assertion_lifetime_too_long: {
      method: 'private_key_jwt or federated token',
      text: 'the token\'s exp lies further ahead than allowed (maxAssertionLifetime for key pairs, federation.maxTokenLifetime for federated tokens); use shorter-lived assertions',
    },
    expired_assertion: {
      method: 'private_key_jwt or federated token',
      text: 'the token\'s exp has passed; sign a fresh assertion (or read the platform\'s token again) for every request, and check the client machine\'s clock',
    },
    assertion_not_yet_valid: {
      method: 'private_key_jwt or federated token',
      text: 'the token\'s nbf or iat lies in the future; check the client machine\'s clock (the server allows clockTolerance seconds of skew)',
    },
    unknown_key: {
      method: 'private_key_jwt',
      text: 'no public key registered to the account verifies the signature; register the public key of the private key that signs (npx service-accounts key add), and sign with an algorithm of its type',
    },
    bad_signature: {
      method: 'private_key_jwt',
      text: 'the key the kid header names did not verify the signature: the assertion was altered, or signed with another private key under that kid',
    },
    revoked_key: { method: 'private_key_jwt', text: 'the assertion is signed by a revoked key; sign with a live key of the account, or register a new public key' },
    replayed_assertion: {
      method: 'private_key_jwt or federated token',
      text: 'this assertion\'s jti was already used; sign a fresh assertion, with a new jti, for every request',
    },
    untrusted_token: {
      method: 'federated token',
      text: 'no live federated credential trusts this token\'s issuer and subject (iss and sub must match one exactly); add one, or check the issuer\'s URL (trailing slash included)',
    },
    ambiguous_token: {
      method: 'federated token',
      text: 'several accounts trust this token\'s issuer and subject; send client_id beside the token to say which account it acts as',
    },
    revoked_federated_credential: {
      method: 'federated token',
      text: 'only a revoked federated credential trusts this token\'s issuer and subject; add a new federated credential',
    },
    claim_condition_failed: {
      method: 'federated token',
      text:
        'the token lacks a claim the federated credential requires, or carries another value (the claim is named above); check which workload sent it, ' +
        'or register a credential whose conditions match the workload that should get in',
    },
    expired_credential: {
      text: 'the credential (secret, key or federated credential) passed its expiresAt; use a live credential of the account, or add a new one (docs/rotation.md)',
    },
    rate_limited: { text: 'too many failed attempts from this client ID or address; wait for Retry-After, and fix the failures logged before this one' },
  };
}

const TOKEN_EXPLANATIONS: Record<InvalidTokenReason | 'insufficient_scope', string> = {
  expired: 'the access token expired; get a new one from the token endpoint (clients should renew before expires_in runs out)',
  revoked: 'the token, or the credential it was issued against, was revoked or has expired; get new credentials and a new token',
  disabled: 'the account the token was issued to is disabled; enable it if it should work',
  invalid: 'the token is not one this server issued for this audience (wrong signature, issuer or audience, or a deleted account); get a token from this server\'s token endpoint',
  wrong_audience: 'the token was issued for another API (its aud is not the audience this route requires); request a token with resource=<this API> from an account allowed that resource',
  dpop_bound: 'the token is DPoP-bound (it was issued to a request with a DPoP proof): send it with Authorization: DPoP and a fresh proof signed by the same key (docs/dpop.md)',
  not_dpop_bound: 'the token is not DPoP-bound but was sent with Authorization: DPoP; send it as Bearer, or send a DPoP proof with the token request (docs/dpop.md)',
  dpop_required: 'this route requires DPoP (requireBearer({ dpop: \'required\' })): get a token with a DPoP proof and send it with Authorization: DPoP (docs/dpop.md)',
  insufficient_scope: 'the token lacks a scope this route needs; ask for it (scope=...) and make sure the account was granted it',
};

/**
 * Returns what writes the debug line of an audit event: a line for refused token requests
 * (`client.authentication_failed`) and refused bearer tokens (`token.refused`), nothing for others;
 * at most {@link DEBUG_LINES_PER_WINDOW} lines per 10 s, the rest counted in one line.
 *
 * @example
 * ```ts
 * const debug = createDebugLog({ issuer: 'https://api.example.com' }, (line) => console.warn(line))
 * debug({ type: 'client.authentication_failed', reason: 'replayed_assertion', clientId: 'esa_...' })
 * // service-accounts: token request refused (invalid_client): replayed_assertion for client esa_... via private_key_jwt or federated token — ...
 * ```
 */
export function createDebugLog(settings: DebugLogSettings, write: (line: string) => void): (event: AuditEventInput) => void {
  const explanations = clientAuthExplanations(settings.issuer);
  const now = settings.now ?? (() => new Date());
  let windowStart = -Infinity;
  let written = 0;
  let left = 0;
  const emit = (line: string): void => {
    try {
      write(line);
    } catch {
      // A failing sink must never break the request it reports on.
    }
  };
  return (event) => {
    let line: string;
    if (event.type === 'client.authentication_failed') {
      const { method, text } = explanations[event.reason];
      const code = event.reason === 'rate_limited' ? 'too_many_requests' : 'invalid_client';
      const who = event.clientId !== undefined
        ? `client ${event.clientId}`
        : event.malformedClientId !== undefined
          ? `a value that is no client ID (#${event.malformedClientId})`
          : 'no client ID';
      const claim = event.claim !== undefined ? ` (claim ${JSON.stringify(event.claim)})` : '';
      line = `service-accounts: token request refused (${code}): ${event.reason}${claim} for ${who}${method ? ` via ${method}` : ''} — ${text} (${DOCS})`;
    } else if (event.type === 'token.refused') {
      const code = event.reason === 'insufficient_scope' ? 'insufficient_scope' : 'invalid_token';
      const who = event.clientId !== undefined ? `client ${event.clientId}` : 'an unverified token';
      line = `service-accounts: bearer token refused (${code}): ${event.reason} for ${who} — ${TOKEN_EXPLANATIONS[event.reason]} (${DOCS})`;
    } else {
      return;
    }
    const at = now().getTime();
    if (at - windowStart >= DEBUG_WINDOW_MS) {
      if (left > 0) emit(`service-accounts: ${left} more refused request${left === 1 ? ' was' : 's were'} not shown (at most ${DEBUG_LINES_PER_WINDOW} debug lines per ${DEBUG_WINDOW_MS / 1000} s)`);
      windowStart = at;
      written = 0;
      left = 0;
    }
    if (written >= DEBUG_LINES_PER_WINDOW) {
      left++;
      return;
    }
    written++;
    emit(line);
  };
}
