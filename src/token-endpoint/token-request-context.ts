/**
 * @module token-request-context
 * One token request as it moves through the endpoint's steps (docs/token-endpoint.md): the one object
 * every step receives. It holds only what the request carries: the request and response, the client's
 * address, the validated parameters (with the presented credentials, decoded once) and, once client
 * authentication succeeded, the client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedClient, PresentedCredentials } from '../client-auth/presented-credentials.js';
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
export type TokenHttpRequest = IncomingMessage & { body?: unknown; ip?: string; _body?: unknown };

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
    const { ip } = req;
    this.address = typeof ip === 'string' ? ip : req.socket?.remoteAddress;
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
