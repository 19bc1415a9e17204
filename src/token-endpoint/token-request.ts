/**
 * @module token-request
 * The validated token request, attached to the Node request once the guards have run, so later steps
 * (client authentication, the exchange) read checked values and never re-validate.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How the client presented its credentials. */
export type PresentedCredentials =
  | { readonly method: 'none' }
  | { readonly method: 'basic' | 'body'; readonly clientId: string; readonly secret: string }
  | { readonly method: 'basic' | 'body'; readonly malformed: true; readonly clientId?: string };

/** A token request after the guards: every field a string or absent. */
export interface TokenRequest {
  readonly grantType: string | undefined;
  readonly scope: string | undefined;
  readonly credentials: PresentedCredentials;
}

/** The Node request as the token router sees it (Express adds `body` and `ip`). */
export type TokenHttpRequest = IncomingMessage & { body?: unknown; ip?: string; [key: string]: unknown };

/** A framework-free middleware. */
export type Middleware = (req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

const requests = new WeakMap<IncomingMessage, TokenRequest>();

export function setTokenRequest(req: IncomingMessage, value: TokenRequest): void {
  requests.set(req, value);
}

/** The validated request; throws if the guards did not run (a wiring bug). */
export function getTokenRequest(req: IncomingMessage): TokenRequest {
  const value = requests.get(req);
  if (!value) throw new Error('token request guards did not run');
  return value;
}
