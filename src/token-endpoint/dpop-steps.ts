/**
 * @module dpop-steps
 * DPoP at the token endpoint (RFC 9449 §5): the `DPoP` proof is checked before client authentication,
 * so a bad proof costs no secret check and is no authentication failure (400 `invalid_dpop_proof`, not
 * counted by the limiter); once the client is authenticated, an account that requires DPoP-bound
 * tokens is refused without a proof, and the proof's `jti` is recorded as used on every instance
 * through the store record client assertions use (`consumeAssertionId`), so the token exchange can
 * bind the token to the proof's key.
 */
import { InvalidDpopProofError } from '../errors.js';
import { dpopHeaderOf } from '../dpop/dpop-proof.js';
import type { DpopRuntime } from '../dpop/dpop-runtime.js';
import { callStore } from '../runtime/call-store.js';
import type { Runtime } from '../create-runtime.js';
import type { Step } from './request-guards.js';

/** The step that checks a token request's `DPoP` proof, if it carries one, and records it on the context. */
export function createDpopProofStep(dpop: DpopRuntime, now: () => Date): Step {
  return (context, next) => {
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

/**
 * The step after client authentication: refuses an account that requires DPoP-bound tokens when the
 * request has no proof, and records the proof's `jti` as used (a replay is `invalid_dpop_proof`).
 */
export function createDpopBindingStep(runtime: Runtime, dpop: DpopRuntime | undefined): Step {
  const { config } = runtime;
  return (context, next) => {
    const proof = context.dpopProof;
    if (proof === undefined) {
      if (context.client.account.dpopBoundAccessTokens === true) {
        return next(
          new InvalidDpopProofError(
            dpop === undefined
              ? 'This client requires DPoP-bound tokens, which this server does not issue (DPoP is turned off)'
              : 'This client must send a DPoP proof with its token requests',
          ),
        );
      }
      return next();
    }
    if (dpop === undefined) return next();
    const now = config.now();
    const store = config.store;
    const used =
      store.consumeAssertionId === undefined
        ? Promise.resolve(dpop.replay.firstUse(proof.jkt, proof.jti, now.getTime()))
        : callStore(
            () => store.consumeAssertionId!(`${PROOF_NAMESPACE}${proof.jkt}`, proof.jti, new Date(now.getTime() + dpop.proofs.replayWindowSeconds * 1000), now),
            config.storeTimeout,
            'consumeAssertionId',
            runtime.storeCalls,
          );
    used.then((first) => next(first ? undefined : new InvalidDpopProofError('The DPoP proof was already used: make a fresh proof, with a new jti, for every request')), next);
  };
}
