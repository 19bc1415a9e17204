/**
 * @module presented-credentials
 * What a token request presents to authenticate its client, and what authentication answers: the
 * types the request's validation, the client authenticator and the grant share.
 */
import type { AccountRecord } from '../store/account-store.js';

/**
 * How the client presented its credentials, decoded once by the request's validation.
 * `authorizationHeader`: the request carried an `Authorization` header, whatever it held, so a failure
 * challenges with Basic (RFC 6749 §5.2).
 */
export type PresentedCredentials =
  | { readonly method: 'none'; readonly authorizationHeader: boolean }
  | { readonly method: 'basic' | 'body'; readonly clientId: string; readonly secret: string; readonly authorizationHeader: boolean }
  | { readonly method: 'basic' | 'body'; readonly malformed: true; readonly clientId?: string; readonly authorizationHeader: boolean }
  /** A signed client assertion (RFC 7523 §2.2), with the `client_id` sent beside it, if any. */
  | { readonly method: 'assertion'; readonly assertion: string; readonly clientId?: string; readonly authorizationHeader: boolean };

/** The credential a client authenticated with: a secret, a public key or a federated credential, by ID (the ID tokens carry). */
export interface UsedCredential {
  readonly kind: 'secret' | 'key' | 'federated';
  readonly id: string;
}

/** A client that authenticated: its account and the credential it used. */
export interface AuthenticatedClient {
  readonly account: AccountRecord;
  readonly credential: UsedCredential;
}

/** The answer of {@link ClientAuthenticator.authenticate}: the typed failure, or the client. */
export type AuthenticationDone = (err: unknown, client?: AuthenticatedClient) => void;
