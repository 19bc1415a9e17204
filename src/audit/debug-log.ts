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

/** What the debug log needs of the configuration (the audiences it tells an assertion to name). */
export interface DebugLogSettings {
  readonly issuer: string;
}

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
        'an asymmetric alg and no crit header, and a kid when the account has more than 3 keys; for a federated token, the issuer\'s signature, exp, and the audience the credential names ' +
        `(by default ${aud}) must hold`,
    },
    wrong_audience: {
      method: 'private_key_jwt',
      text:
        `the assertion's aud is not this server's issuer identifier; set aud to exactly ${aud} (with Authlib: PrivateKeyJWT(${aud})), ` +
        'or turn on acceptTokenEndpointAudience for clients that can only name the token endpoint URL',
    },
    assertion_lifetime_too_long: {
      method: 'private_key_jwt',
      text: 'the assertion\'s exp lies further ahead than maxAssertionLifetime allows; sign assertions that expire sooner, or raise maxAssertionLifetime (at most 3600 s)',
    },
    expired_assertion: { method: 'private_key_jwt', text: 'the assertion\'s exp has passed; sign a fresh assertion for every request, and check the client machine\'s clock' },
    assertion_not_yet_valid: {
      method: 'private_key_jwt',
      text: 'the assertion\'s nbf or iat lies in the future; check the client machine\'s clock (the server allows clockTolerance seconds of skew)',
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
    rate_limited: { text: 'too many failed attempts from this client ID or address; wait for Retry-After, and fix the failures logged before this one' },
  };
}

const TOKEN_EXPLANATIONS: Record<InvalidTokenReason | 'insufficient_scope', string> = {
  expired: 'the access token expired; get a new one from the token endpoint (clients should renew before expires_in runs out)',
  revoked: 'the token, or the credential it was issued against, was revoked; get new credentials and a new token',
  disabled: 'the account the token was issued to is disabled; enable it if it should work',
  invalid: 'the token is not one this server issued for this audience (wrong signature, issuer or audience, or a deleted account); get a token from this server\'s token endpoint',
  wrong_audience: 'the token was issued for another API (its aud is not the audience this route requires); request a token with resource=<this API> from an account allowed that resource',
  insufficient_scope: 'the token lacks a scope this route needs; ask for it (scope=...) and make sure the account was granted it',
};

/**
 * Returns what writes the debug line of an audit event: a line for refused token requests
 * (`client.authentication_failed`) and refused bearer tokens (`token.refused`), nothing for others.
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
      line = `service-accounts: token request refused (${code}): ${event.reason} for ${who}${method ? ` via ${method}` : ''} — ${text} (${DOCS})`;
    } else if (event.type === 'token.refused') {
      const code = event.reason === 'insufficient_scope' ? 'insufficient_scope' : 'invalid_token';
      const who = event.clientId !== undefined ? `client ${event.clientId}` : 'an unverified token';
      line = `service-accounts: bearer token refused (${code}): ${event.reason} for ${who} — ${TOKEN_EXPLANATIONS[event.reason]} (${DOCS})`;
    } else {
      return;
    }
    try {
      write(line);
    } catch {
      // A failing sink must never break the request it reports on.
    }
  };
}
