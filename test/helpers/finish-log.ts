/**
 * A stand-in for a request log written as the answer is sent (pino-http's `customProps`, a
 * `res.on('finish')` listener): it records what `req.serviceAccount` holds by then.
 */
import type { RequestHandler } from 'express';

/** Middleware that pushes `req.serviceAccount` onto `seen` when the response is finished. */
export function recordServiceAccountOnFinish(seen: unknown[]): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => seen.push(req.serviceAccount));
    next();
  };
}
