/**
 * @module express
 * Types `req.serviceAccount` and `req.actor` on every Express request once this package is imported.
 */
import type { ServiceAccountPrincipal } from './bearer/require-bearer.js';
import type { Actor } from './actor/actor.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /**
       * Set by `requireBearer()`: the service account that made the request. Also set when a good
       * token lacks the route's scope (403), with the token's own scopes, for what runs as the
       * answer is sent (a request log); no route handler runs then, so such code should check
       * `res.statusCode` before it records the request as the account's action.
       */
      serviceAccount?: ServiceAccountPrincipal;
      /** Set by `requireActor()`: the person or service account that made the request. */
      actor?: Actor;
    }
  }
}

export {};
