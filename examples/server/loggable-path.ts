/**
 * What the example server writes of a request's URL to its log: the path, never the query string or
 * fragment, and with any segment that looks like a client secret or a token replaced by `[redacted]`.
 * A careless client may put a credential anywhere in a URL (`/api/esas_...`, `/callback/eyJ...`), and
 * access logs are kept longer and read by more people than anything else.
 */

/**
 * Looks like a credential: a client secret (`esas_`, in any case), a JWT (its header starts `eyJ`, the
 * base64url of `{"`), 32 or more letters and digits in a row (a secret's random part has 50; a client
 * ID's 24 and a UUID's groups at most 12, so both stay readable), or 32 or more base64url characters
 * mixing upper and lower case (a token's signature; a UUID's hex is never mixed-case).
 */
const CREDENTIAL_LIKE = /[Ee][Ss][Aa][Ss]_|eyJ[0-9A-Za-z_-]{8}|[0-9A-Za-z]{32}/;
const BASE64URL_RUN = /[0-9A-Za-z_-]{32,}/g;

function looksLikeCredential(text: string): boolean {
  return CREDENTIAL_LIKE.test(text) || (text.match(BASE64URL_RUN) ?? []).some((run) => /[a-z]/.test(run) && /[A-Z]/.test(run));
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The path of `url` for a log line, without its query string and with credential-like segments redacted. */
export function loggablePath(url: string | undefined): string {
  const path = (url ?? '').split(/[?#]/, 1)[0] ?? '';
  return path
    .split('/')
    .map((segment) => (looksLikeCredential(segment) || looksLikeCredential(decoded(segment)) ? '[redacted]' : segment))
    .join('/');
}
