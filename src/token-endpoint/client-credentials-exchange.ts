/**
 * @module client-credentials-exchange
 * The RFC 6749 §4.4 exchange: checks `grant_type`, the request's DPoP proof, the requested scope and
 * resource (RFC 8707), then issues an RFC 9068 access token. oauth2orize is a thin adapter here: it
 * dispatches the exchange and writes the token response; it sees only a view of the request's context
 * (the validated parameters and the authenticated client). Its own statuses (501 for an unknown grant
 * type, 403 for `invalid_grant`) never reach the client: the grant type is checked here first (400
 * `invalid_grant`, docs/errors.md).
 *
 * The token's scopes and audience are decided once, after client authentication, by the exchange
 * step, which hands them to oauth2orize with the client.
 *
 * DPoP (RFC 9449 §5): the `DPoP` proof is checked before client authentication, so a bad proof costs
 * no secret check and is no authentication failure (400 `invalid_dpop_proof`, not counted by the
 * limiter); once the client is authenticated, an account that requires DPoP-bound tokens is refused
 * without a proof, and, once the scope and resource are allowed, the proof's `jti` is recorded as
 * used on every instance through the store record client assertions use (`consumeAssertionId`), so
 * the exchange can bind the token to the proof's key.
 */
import oauth2orize from 'oauth2orize';
import { InvalidDpopProofError, InvalidGrantError, ServerError } from '../errors.js';
import { dpopHeaderOf } from '../dpop/dpop-proof.js';
import type { DpopRuntime } from '../dpop/dpop-runtime.js';
import { replayOwnerOf } from '../dpop/dpop-replay.js';
import { callStore } from '../runtime/call-store.js';
import { collectExtraClaims, type ExtraClaimsError } from '../extra-token-claims.js';
import { accessTokenLifetimeOf, chooseAudience, grantScopes, type TokenGrant } from '../token-grant.js';
import type { AccountRecord } from '../store/account-store.js';
import { signAccessToken } from '../access-tokens/access-token.js';
import type { Runtime } from '../create-runtime.js';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedClient } from '../client-auth/presented-credentials.js';
import type { Step } from './request-guards.js';
import { ExpiringCredentialNotices } from '../client-auth/client-authenticator.js';

/** Rejects any `grant_type` but `client_credentials` with 400 `invalid_grant`. Runs after client authentication. */
export const requireClientCredentialsGrant: Step = (context, next) => {
  const { grantType } = context.parameters;
  if (grantType === 'client_credentials') return next();
  next(
    new InvalidGrantError(
      grantType === undefined ? 'The grant_type parameter is missing' : 'Only the client_credentials grant type is supported',
    ),
  );
};

/** The step that checks a token request's `DPoP` proof, if it carries one, and records it on the context. */
export function createDpopProofStep(dpop: DpopRuntime, now: () => Date): Step {
  return (context, next) => {
    // No `DPoP` header at all (Node joins repeats of a header it does not know, so one or more give a
    // value): nothing to check. With one, dpopHeaderOf counts them and the proof check runs.
    if (context.req.headers.dpop === undefined) return next();
    const proof = dpopHeaderOf(context.req);
    if (proof === undefined) return next();
    if (proof === null) return next(new InvalidDpopProofError('The request must carry exactly one DPoP header'));
    try {
      context.dpopProof = dpop.proofs.check(proof, { req: context.req, accessToken: undefined, now: now(), status: 400 });
    } catch (err) {
      return next(err);
    }
    next();
  };
}

/** Namespace of proof IDs in the store's record of used assertion IDs, apart from every issuer's. */
const PROOF_NAMESPACE = 'urn:ietf:params:oauth:dpop:';

/** Where oauth2orize finds the client on the request it is given (`userProperty`). */
const CLIENT_PROPERTY = 'client';

/**
 * What oauth2orize sees of a token request: the validated `grant_type`, what the token grants (decided
 * before; no `scope` of its own to read, so it never parses one) and the authenticated
 * client. Like passport, it is given a view rather than the host's request.
 */
interface ExchangeView {
  readonly body: {
    readonly grant_type: string | undefined;
    readonly grant: TokenGrant;
    /** The host's extra claims as JSON text (`extraTokenClaims`), when it has a hook and they are not empty. */
    readonly extraClaimsJson: string | undefined;
    /** Thumbprint of the key of the request's DPoP proof, when it had one: the token is bound to it. */
    readonly jkt: string | undefined;
  };
  readonly [CLIENT_PROPERTY]: AuthenticatedClient;
}

/**
 * Returns the exchange step, after client authentication: refuses an account that requires DPoP-bound
 * tokens when the request has no proof, decides once what the token grants (refused:
 * `invalid_scope`, RFC 6749 §5.2; `invalid_target`, RFC 8707 §2), only then records the proof's `jti`
 * as used (a replay is `invalid_dpop_proof`), so a refused request never uses up its proof
 * (docs/dpop.md), and issues the token through oauth2orize's token middleware, a thin adapter given
 * a view of the context, never the host's request.
 */
export function createClientCredentialsExchange(runtime: Runtime, dpop: DpopRuntime | undefined): Step {
  const { config } = runtime;
  const server = oauth2orize.createServer();
  const expiring = new ExpiringCredentialNotices(runtime.event);

  /** The host's extra claims (JSON text), or a 500 whose detail goes to `onEvent` only. */
  const extraClaimsFor = (account: AccountRecord, scopes: readonly string[] | undefined, resource: string): string | undefined => {
    try {
      return collectExtraClaims(config.extraTokenClaims, { account, scopes, resource });
    } catch (error) {
      const refusal = error as ExtraClaimsError;
      runtime.event({ type: 'extra_claims.refused', clientId: account.clientId, reason: refusal.reason, ...(refusal.claim !== undefined && { claim: refusal.claim }) });
      throw new ServerError({ cause: error });
    }
  };

  // Four parameters: oauth2orize passes the view's body, which carries the decided grant (it has no
  // `scope` for oauth2orize to split, so `_scopes` is always undefined).
  const issue = (client: AuthenticatedClient, _scopes: string[] | undefined, body: ExchangeView['body'], done: oauth2orize.ExchangeDoneFunction): void => {
    try {
      const { account, credential } = client;
      const { scopes, audience } = body.grant;
      const lifetime = accessTokenLifetimeOf(account, config);
      const { extraClaimsJson } = body;
      const now = config.now();
      const { token, claims } = signAccessToken(config, {
        clientId: account.clientId,
        secretId: credential.id,
        scopes,
        now,
        lifetime,
        audience,
        extraClaimsJson,
        jkt: body.jkt,
      });
      runtime.telemetry.tokenIssued();
      runtime.audit({
        type: 'token.issued',
        clientId: account.clientId,
        name: account.name,
        secretId: credential.id,
        tokenId: claims.jti,
        scopes: scopes ?? [],
        audience: claims.aud,
        expiresAt: new Date(claims.exp * 1000),
      });
      expiring.used(account, credential, now);
      // RFC 9449 §5: a token bound to a DPoP key is of type DPoP.
      done(null, token, undefined, {
        ...(body.jkt !== undefined ? { token_type: 'DPoP' } : {}),
        expires_in: lifetime,
        ...(scopes ? { scope: scopes.join(' ') } : {}),
      });
    } catch (err) {
      done(err as Error);
    }
  };
  server.exchange(
    'client_credentials',
    oauth2orize.exchange.clientCredentials({ userProperty: CLIENT_PROPERTY }, issue),
  );
  const token = server.token() as unknown as (view: ExchangeView, res: ServerResponse, next: (err?: unknown) => void) => void;

  return (context, next) => {
    const proof = context.dpopProof;
    const { client } = context;
    const { account } = client;
    if (proof === undefined) {
      if (account.dpopBoundAccessTokens === true) {
        return next(
          new InvalidDpopProofError(
            dpop === undefined
              ? 'This client requires DPoP-bound tokens, which this server does not issue (DPoP is turned off)'
              : 'This client must send a DPoP proof with its token requests',
          ),
        );
      }
    } else if (dpop !== undefined) {
      // RFC 9449 §8: where nonces are required, the answers after client authentication carry the next
      // nonce, this step's refusals included.
      const nonce = dpop.proofs.nextNonce(config.now(), 400);
      if (nonce !== undefined) context.res.setHeader('DPoP-Nonce', nonce);
    }
    const { grantType, scope, resource } = context.parameters;
    let grant: TokenGrant;
    let extraClaimsJson: string | undefined;
    try {
      // RFC 8707 §2: the token is for the requested resource, when the account is allowed it.
      grant = { scopes: grantScopes(account.scopes, scope), audience: chooseAudience(account.resources, resource, config.audience) };
      // The host's claims too before a proof is used up: a request its hook fails keeps its proof.
      extraClaimsJson = config.extraTokenClaims && extraClaimsFor(account, grant.scopes, grant.audience ?? config.audience);
    } catch (err) {
      return next(err);
    }
    const view: ExchangeView = { body: { grant_type: grantType, grant, extraClaimsJson, jkt: proof?.jkt }, [CLIENT_PROPERTY]: client };
    if (proof === undefined || dpop === undefined) return token(view, context.res, next);
    const now = config.now();
    const store = config.store;
    const used =
      store.consumeAssertionId === undefined
        ? Promise.resolve(dpop.replay.firstUse(replayOwnerOf(account), proof.jkt, proof.jti, now.getTime()))
        : callStore(
            () => store.consumeAssertionId!(`${PROOF_NAMESPACE}${proof.jkt}`, proof.jti, new Date(now.getTime() + dpop.proofs.replayWindowSeconds(400) * 1000), now),
            config.storeTimeout,
            'consumeAssertionId',
            runtime.storeCalls,
          );
    used.then(
      (first) => (first ? token(view, context.res, next) : next(new InvalidDpopProofError('The DPoP proof was already used: make a fresh proof, with a new jti, for every request'))),
      next,
    );
  };
}
