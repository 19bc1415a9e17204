/**
 * @module request-guards
 * One request of the token router (token, revocation, introspection) as every step sees it, and the
 * guards that check it before passport and oauth2orize see it: method, browser origin, the
 * parameters' shape, and how credentials are presented. Parameters are validated here once.
 *
 * The request's context ({@link TokenRequestContext}, docs/token-endpoint.md) is the one object every
 * step receives. It holds only what the request carries: the request and response, the client's
 * address, the validated parameters (with the presented credentials, decoded once), the checked DPoP
 * proof and, once client authentication succeeded, the client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, InvalidTargetError, MethodNotAllowedError, NOT_A_JSON_OBJECT_DESCRIPTION } from '../errors.js';
import { presentedCredentials, type AuthenticatedClient, type PresentedCredentials } from '../client-auth/presented-credentials.js';
import type { CheckedProof } from '../dpop/dpop-proof.js';

/** The parameters of a request after validation: every field a string or absent (only its endpoint's are read). */
export interface TokenParameters {
  readonly grantType: string | undefined;
  readonly scope: string | undefined;
  /** The resource the token is asked for (RFC 8707 `resource`, or `audience` as Auth0's clients send it); token requests only. */
  readonly resource?: string | undefined;
  /** The token to revoke or introspect (RFC 7009 §2.1, RFC 7662 §2.1); read by those endpoints only. */
  readonly token?: string | undefined;
  readonly tokenTypeHint?: string | undefined;
  readonly credentials: PresentedCredentials;
}

/**
 * The Node request as the token endpoint sees it: Express adds `ip`, and a host's body parser that ran
 * first adds `body` (and, on Express 4, `_body`).
 */
export type TokenHttpRequest = IncomingMessage & { body?: unknown; ip?: string; _body?: unknown; app?: { settings?: Record<string, unknown> } };

/** Whether an `ip` getter is Express's own (4 and 5: `proxyaddr(this, trust)`), by function, checked once each. */
const expressIpGetters = new WeakMap<object, boolean>();

function isExpressIpGetter(getter: unknown): boolean {
  if (typeof getter !== 'function') return false;
  let known = expressIpGetters.get(getter);
  if (known === undefined) {
    known = getter.name === 'ip' && /\bproxyaddr\(this, trust\)/.test(Function.prototype.toString.call(getter));
    expressIpGetters.set(getter, known);
  }
  return known;
}

/** The `ip` accessor the request would use: on the request itself or the nearest prototype that has one. */
function ipGetterOf(req: object): unknown {
  for (let holder: object | null = req; holder !== null; holder = Object.getPrototypeOf(holder) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(holder, 'ip');
    if (descriptor !== undefined) return descriptor.get;
  }
  return undefined;
}

/**
 * The client's address as Express sees it. With `trust proxy` off (Express's default) and Express's
 * own `req.ip`, that is the socket's address, so it is read directly: Express computes `req.ip` anew
 * on every read through proxy-addr, about 20,000 instructions a request (measured with callgrind,
 * docs/performance.md). Any other setting, and any `ip` a host defined itself (on the request, on
 * `app.request` or on `express.request`), is read through `req.ip`.
 */
function clientAddress(req: TokenHttpRequest): string | undefined {
  if (req.app?.settings?.['trust proxy'] === false && isExpressIpGetter(ipGetterOf(req))) return req.socket?.remoteAddress;
  const { ip } = req;
  return typeof ip === 'string' ? ip : req.socket?.remoteAddress;
}

/** One request's state; see the module description. */
export class TokenRequestContext {
  #parameters: TokenParameters | undefined = undefined;
  #client: AuthenticatedClient | undefined = undefined;

  /**
   * The client's address as Express sees it (`req.ip`, which respects `trust proxy`), else the socket's.
   * Read once: Express computes `req.ip` anew on every read.
   */
  readonly address: string | undefined;

  /** The request's checked DPoP proof (RFC 9449), when it carried one: the token is bound to its key. */
  dpopProof: CheckedProof | undefined = undefined;

  constructor(
    readonly req: TokenHttpRequest,
    readonly res: ServerResponse,
  ) {
    this.address = clientAddress(req);
  }

  /** The validated parameters; throws if the validation step has not run (a wiring bug). */
  get parameters(): TokenParameters {
    if (!this.#parameters) throw new Error('the token request was not validated');
    return this.#parameters;
  }

  set parameters(value: TokenParameters) {
    this.#parameters = value;
  }

  /** The authenticated client; throws if client authentication has not succeeded (a wiring bug). */
  get client(): AuthenticatedClient {
    if (!this.#client) throw new Error('the client was not authenticated');
    return this.#client;
  }

  set client(value: AuthenticatedClient) {
    this.#client = value;
  }
}

/** One step of the token endpoint: reads and records on the context, then calls `next` (with an error to stop). */
export type Step = (context: TokenRequestContext, next: (err?: unknown) => void) => void;

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

/** The parameters that carry client credentials, read by every endpoint of the router. */
const CREDENTIAL_FIELDS = ['client_id', 'client_secret', 'client_assertion_type', 'client_assertion'] as const;
/** RFC 8707 §2 `resource`, and `audience` as Auth0's clients send it for the same purpose. */
const TOKEN_FIELDS = ['grant_type', 'scope', 'resource', 'audience', ...CREDENTIAL_FIELDS] as const;
/** RFC 7009 §2.1 and RFC 7662 §2.1: the token and an optional hint, besides the client's credentials. */
const TOKEN_MANAGEMENT_FIELDS = ['token', 'token_type_hint', ...CREDENTIAL_FIELDS] as const;
type Field = (typeof TOKEN_FIELDS)[number] | (typeof TOKEN_MANAGEMENT_FIELDS)[number];

function readFields<F extends Field>(body: unknown, fields: readonly F[]): Record<F, string | undefined> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError(Array.isArray(body) ? NOT_A_JSON_OBJECT_DESCRIPTION : 'The request body must be a JSON object or a form');
  }
  const values = {} as Record<F, string | undefined>;
  for (const field of fields) {
    const value: unknown = Object.prototype.hasOwnProperty.call(body, field) ? (body as Record<string, unknown>)[field] : undefined;
    // RFC 8707 §2 lets a client repeat `resource` for several resources; a token here is for one API
    // (its `aud` is one value), and invalid_target is RFC 8707's answer for a target it cannot serve.
    if (Array.isArray(value) && field === 'resource') throw new InvalidTargetError('A token is for one resource: send the resource parameter once, as a string');
    if (Array.isArray(value)) throw new InvalidRequestError(`The parameter ${field} must be sent once, as a string`);
    if (value !== undefined && typeof value !== 'string') throw new InvalidRequestError(`The parameter ${field} must be a string`);
    // RFC 6749 §3.2: parameters sent without a value are treated as omitted.
    values[field] = value === '' ? undefined : value;
  }
  return values;
}

/**
 * Validates the parameters of a token request (its parsed `body`) and how it presents credentials
 * (HTTP Basic, from the `authorization` header, decoded here, once). RFC 6749 §2.3: a client must not
 * use more than one authentication method in a request. `resource` (RFC 8707) and `audience` (as
 * Auth0's clients send it) both name the token's API: both present and different is malformed.
 * @throws {InvalidRequestError} a malformed request (→ 400 `invalid_request`)
 * @throws {InvalidTargetError} `resource` repeated (→ 400 `invalid_target`)
 */
export function validateTokenRequest(body: unknown, authorization: string | undefined): TokenParameters {
  const fields = readFields(body, TOKEN_FIELDS);
  const { resource, audience } = fields;
  if (resource !== undefined && audience !== undefined && resource !== audience) {
    throw new InvalidRequestError('The parameters resource and audience name different APIs: send one of them');
  }
  return {
    grantType: fields.grant_type,
    scope: fields.scope,
    resource: resource ?? audience,
    credentials: presentedCredentials(fields, authorization),
  };
}

/**
 * Validates a revocation (RFC 7009) or introspection (RFC 7662) request: its `token` and
 * `token_type_hint`, and its client credentials exactly as {@link validateTokenRequest} does.
 * @throws {InvalidRequestError} a malformed request (→ 400 `invalid_request`)
 */
export function validateTokenManagementRequest(body: unknown, authorization: string | undefined): TokenParameters {
  const fields = readFields(body, TOKEN_MANAGEMENT_FIELDS);
  return {
    grantType: undefined,
    scope: undefined,
    token: fields.token,
    tokenTypeHint: fields.token_type_hint,
    credentials: presentedCredentials(fields, authorization),
  };
}
