/**
 * @module request-guards
 * Checks every request of the token router (token, revocation, introspection) before passport and
 * oauth2orize see it: method, browser origin, the parameters' shape, and how credentials are presented.
 * Parameters are validated here once.
 */
import type { ServerResponse } from 'node:http';
import { InvalidRequestError, MethodNotAllowedError } from '../errors.js';
import { parseBasicAuthorization } from './basic-credentials.js';
import type { PresentedCredentials, Step } from './token-request-context.js';

/** RFC 6749 §5.1: token responses, errors included, must not be cached. */
export function setNoStore(res: ServerResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

/** Only POST reaches the token endpoint (RFC 6749 §3.2); anything else is 405 with `Allow: POST`. */
export const requirePost: Step = ({ req }, next) => {
  next(req.method === 'POST' ? undefined : new MethodNotAllowedError('POST'));
};

/**
 * Refuses requests a browser marks as such (RFC 6749 §4.4: confidential backend clients only).
 * `Sec-Fetch-Mode` is not used: Node's own fetch sends `Sec-Fetch-Mode: cors` on every request.
 */
export function createBrowserGuard(allowBrowserRequests: boolean): Step {
  return ({ req }, next) => {
    if (!allowBrowserRequests && (req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined)) {
      next(new InvalidRequestError('The client credentials flow is for backend clients only; browser requests are refused'));
      return;
    }
    next();
  };
}

/** Every parameter an endpoint of the router reads; each endpoint reads its own subset. */
type Field = 'grant_type' | 'client_id' | 'client_secret' | 'scope' | 'token' | 'token_type_hint';

const TOKEN_FIELDS: readonly Field[] = ['grant_type', 'client_id', 'client_secret', 'scope'];
/** RFC 7009 §2.1 and RFC 7662 §2.1: the token, an optional hint, and client credentials in the body. */
const TOKEN_MANAGEMENT_FIELDS: readonly Field[] = ['token', 'token_type_hint', 'client_id', 'client_secret'];

function readFields(body: unknown, fields: readonly Field[]): Partial<Record<Field, string>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a set of parameters');
  }
  const values: Partial<Record<Field, string>> = {};
  for (const field of fields) {
    const value: unknown = Object.prototype.hasOwnProperty.call(body, field) ? (body as Record<string, unknown>)[field] : undefined;
    if (Array.isArray(value)) throw new InvalidRequestError(`The parameter ${field} is repeated`);
    if (value !== undefined && typeof value !== 'string') throw new InvalidRequestError(`The parameter ${field} must be a string`);
    // RFC 6749 §3.2: parameters sent without a value are treated as omitted.
    if (value !== undefined && value !== '') values[field] = value;
  }
  return values;
}

/**
 * Validates the parameters `fields` names and the presentation of credentials (HTTP Basic decoded here,
 * once), then records them on the context. RFC 6749 §2.3: a client must not use more than one
 * authentication method in a request.
 */
function validateRequest(fieldNames: readonly Field[]): Step {
  return (context, next) => {
    try {
      const { req } = context;
      const fields = readFields(context.body, fieldNames);
      const basic = parseBasicAuthorization(req.headers.authorization);
      let credentials: PresentedCredentials;
      if (basic.kind !== 'absent') {
        const clashes =
          fields.client_secret !== undefined ||
          (fields.client_id !== undefined && (basic.kind !== 'present' || fields.client_id !== basic.clientId));
        if (clashes) throw new InvalidRequestError('Send client credentials either in HTTP Basic or in the body, not both');
        credentials =
          basic.kind === 'present'
            ? { method: 'basic', clientId: basic.clientId, secret: basic.secret }
            : { method: 'basic', malformed: true };
      } else if (fields.client_id !== undefined && fields.client_secret !== undefined) {
        credentials = { method: 'body', clientId: fields.client_id, secret: fields.client_secret };
      } else if (fields.client_id !== undefined || fields.client_secret !== undefined) {
        credentials = { method: 'body', malformed: true, ...(fields.client_id !== undefined ? { clientId: fields.client_id } : {}) };
      } else {
        credentials = { method: 'none' };
      }
      context.parameters = {
        grantType: fields.grant_type,
        scope: fields.scope,
        token: fields.token,
        tokenTypeHint: fields.token_type_hint,
        credentials,
      };
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Validation of a token request (`POST {mount}/token`). */
export const validateTokenRequest: Step = validateRequest(TOKEN_FIELDS);

/** Validation of a revocation or introspection request (`POST {mount}/revoke`, `POST {mount}/introspect`). */
export const validateTokenManagementRequest: Step = validateRequest(TOKEN_MANAGEMENT_FIELDS);
