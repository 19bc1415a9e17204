/**
 * GET /readyz of the example server: 200 while the account store answers, 503 while it does not, for
 * a load balancer or Kubernetes' readinessProbe. Anyone may call it, so it answers with the overall
 * status alone (`{"status":"ok"}`): the full report (store latency, change-feed and limiter state,
 * queue depth, error text) is for operators, and goes only to a caller that presents the token set in
 * HEALTH_DETAILS_TOKEN as `Authorization: Bearer <token>`. `sa.health()` shares one store probe among
 * concurrent calls and reuses it for a second, so a flood of this route costs the store at most one
 * read a second.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { ServiceAccounts } from 'express-service-accounts';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The /readyz handler; `detailsToken` (HEALTH_DETAILS_TOKEN) unlocks the full report. */
export function readiness(sa: Pick<ServiceAccounts, 'health'>, detailsToken: string | undefined): RequestHandler {
  const expected = detailsToken === undefined ? undefined : digest(`Bearer ${detailsToken}`);
  // Compared as digests of equal length, in constant time: the answer tells nothing about a wrong token.
  const trusted = (authorization: string | undefined): boolean =>
    expected !== undefined && authorization !== undefined && timingSafeEqual(digest(authorization), expected);
  return (req, res, next) => {
    sa.health().then((report) => {
      res.status(report.store.status === 'ok' ? 200 : 503).set('Cache-Control', 'no-store');
      res.json(trusted(req.headers.authorization) ? report : { status: report.status });
    }, next);
  };
}
