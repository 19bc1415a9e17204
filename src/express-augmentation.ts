/**
 * @module express
 * Types `req.serviceAccount` on every Express request once this package is imported.
 */
import type { ServiceAccountPrincipal } from './bearer/service-account-principal.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireBearer()`: the service account that made the request. */
      serviceAccount?: ServiceAccountPrincipal;
    }
  }
}

export {};
