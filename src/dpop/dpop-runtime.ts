/**
 * @module dpop-runtime
 * What one instance holds for DPoP, built once from the resolved config and shared by the token
 * endpoint and every `requireBearer()` route: the proof checker (with its cache of imported keys),
 * the nonces, and the replay guard of resource requests.
 */
import type { DpopChallenge } from '../errors.js';
import type { OperationalEventInput } from '../observability/operational-events.js';
import { DpopNonces } from './dpop-nonces.js';
import type { ResolvedDpopConfig } from './dpop-options.js';
import { DpopProofChecker } from './dpop-proof.js';
import { MemoryReplayCache, RedisReplayGuard, type DpopReplayGuard } from './dpop-replay.js';

/** An instance's DPoP parts. */
export interface DpopRuntime {
  readonly settings: ResolvedDpopConfig;
  readonly proofs: DpopProofChecker;
  /** Single use of proofs sent to protected routes. */
  readonly replay: DpopReplayGuard;
  /** The challenges of a route that accepts Bearer and DPoP, of one that requires DPoP, and of a DPoP request's refusal. */
  readonly challenges: { readonly offered: DpopChallenge; readonly required: DpopChallenge; readonly used: DpopChallenge };
}

/** What the DPoP parts of an instance are built from: the few resolved settings they read. */
export interface DpopRuntimeSettings {
  readonly dpop: ResolvedDpopConfig | false;
  readonly clockTolerance: number;
  readonly storeTimeout: number;
  /** `failureLimit`: its ioredis client (`redis`) serves strict replay. */
  readonly failureLimit: { readonly redis: unknown } | false;
}

/** Builds the DPoP parts of an instance, or `undefined` when DPoP is off. */
export function createDpopRuntime(config: DpopRuntimeSettings, event: (event: OperationalEventInput) => void): DpopRuntime | undefined {
  const settings = config.dpop;
  if (settings === false) return undefined;
  const nonces = settings.nonceSecret === undefined ? undefined : new DpopNonces(settings.nonceSecret);
  const proofs = new DpopProofChecker(settings, config.clockTolerance, nonces);
  // The protected routes' replay guard also serves the token endpoint when the store has no
  // consumeAssertionId: it remembers a proof as long as either place could accept it again.
  const windowMs = Math.max(proofs.replayWindowSeconds(400), proofs.replayWindowSeconds(401)) * 1000;
  const replay =
    settings.replay === 'redis' && config.failureLimit !== false
      ? new RedisReplayGuard(config.failureLimit.redis, windowMs, config.storeTimeout)
      : new MemoryReplayCache(settings.maxReplayEntries, windowMs, event);
  const algs = settings.algs;
  return {
    settings,
    proofs,
    replay,
    challenges: Object.freeze({
      offered: Object.freeze({ algs, mode: 'offered' as const }),
      required: Object.freeze({ algs, mode: 'required' as const }),
      used: Object.freeze({ algs, mode: 'used' as const }),
    }),
  };
}
