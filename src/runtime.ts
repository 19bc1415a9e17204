/**
 * @module runtime
 * The per-instance state built once from the resolved config and shared by the token router, the
 * bearer check and the admin API: the account cache, the secret verifier, the audit emitter, the
 * failure limiter, observability (telemetry, operational events, the health check), and lazy start-up
 * (store init, change watching, dummy hash).
 */
import type { ResolvedConfig } from './config.js';
import { createAuditEmitter, type AuditEventInput } from './audit/audit-events.js';
import { AccountCache } from './store/account-cache.js';
import { callStore } from './store/call-store.js';
import { SecretVerifier } from './secrets/secret-verifier.js';
import { createFailureLimiter, type FailureLimiter } from './token-endpoint/failure-limiter.js';
import { SecretUseRecorder } from './secrets/secret-use-recorder.js';
import { DependencyMonitor } from './observability/dependency-monitor.js';
import { checkHealth, type HealthReport } from './observability/health.js';
import { createHookEmitter } from './observability/hook-emitter.js';
import type { ChangeFeedState, OperationalEvent, OperationalEventInput } from './observability/operational-events.js';
import { createTelemetry, type Telemetry } from './observability/telemetry.js';
import { LIBRARY_VERSION } from './version.js';

/** A client ID that can never be issued (issued ones are `esa_` and 24 letters or digits): the store probe reads it. */
const HEALTH_PROBE_CLIENT_ID = 'esa_health-probe';

/** Shared per-instance state. */
export interface Runtime {
  readonly config: ResolvedConfig;
  readonly accounts: AccountCache;
  readonly secrets: SecretVerifier;
  readonly secretUse: SecretUseRecorder;
  readonly audit: (event: AuditEventInput) => void;
  readonly limiter: FailureLimiter | undefined;
  readonly telemetry: Telemetry;
  /** Hands an operational event to the `onEvent` hook. */
  readonly event: (event: OperationalEventInput) => void;
  /** The state of each part, checked now; never rejects. */
  health(): Promise<HealthReport>;
  /** Resolves once the store is initialised; retried on the next call after a failure. */
  ready(): Promise<void>;
  /** Whether {@link Runtime.ready} has resolved (and the instance is not closed): callers may skip awaiting it. */
  isReady(): boolean;
  close(): Promise<void>;
}

export function createRuntime(config: ResolvedConfig): Runtime {
  const event = createHookEmitter<OperationalEvent>(config.onEvent, config.now) as (event: OperationalEventInput) => void;
  // Filled in below; the gauges read them only at collection time.
  let accounts: AccountCache | undefined;
  let secrets: SecretVerifier | undefined;
  const telemetry = createTelemetry(config.telemetry, LIBRARY_VERSION, {
    secretCheckQueueDepth: () => secrets?.load.queued ?? 0,
    accountCacheCounts: () => accounts?.counts() ?? { hits: 0, misses: 0 },
  });
  const storeMonitor = new DependencyMonitor('store', telemetry, event, config.now);
  const limiterMonitor = new DependencyMonitor('limiter', telemetry, event, config.now);
  let feedState: ChangeFeedState | undefined;
  const onFeedState = (state: ChangeFeedState): void => {
    if (state === feedState) return;
    const previous = feedState;
    feedState = state;
    event({ type: 'change_feed.state_changed', state, previous });
  };
  accounts = new AccountCache({ ...config, observer: storeMonitor, onFeedState });
  secrets = new SecretVerifier({
    rounds: config.secretHashRounds,
    gate: { queue: config.maxQueuedSecretChecks },
    telemetry,
    onSaturated: (queued) => event({ type: 'secret_checks.saturated', queued }),
  });
  const limiter = config.failureLimit ? createFailureLimiter(config.failureLimit, config.storeTimeout, limiterMonitor) : undefined;
  const redis = config.failureLimit ? (config.failureLimit.redis as { ping?: () => Promise<unknown> } | undefined | null) : undefined;
  accounts.onInvalidate((clientId) => {
    if (clientId === '*') secrets.clear();
  });
  let starting: Promise<void> | undefined;
  let started = false;
  let closed = false;

  const start = async (): Promise<void> => {
    const { store } = config;
    if (store.init) await callStore(() => store.init!(), Math.max(config.storeTimeout, 30_000), 'init', storeMonitor);
    await accounts.start();
    await secrets.dummyHash();
  };

  const runtime: Runtime = {
    config,
    accounts,
    secrets,
    secretUse: new SecretUseRecorder(config.store, config.storeTimeout, storeMonitor),
    audit: createAuditEmitter(config.onAudit, config.now),
    limiter,
    telemetry,
    event,
    health() {
      const verifier = secrets!;
      const cache = accounts!;
      return checkHealth({
        probeStore: () =>
          callStore(
            async () => {
              await runtime.ready();
              await config.store.findAccount(HEALTH_PROBE_CLIENT_ID);
            },
            config.storeTimeout,
            'health probe',
            storeMonitor,
          ),
        changeFeed: () => {
          if (!config.store.watch) return 'unsupported';
          if (!cache.watching) return 'not_started';
          return feedState ?? 'watching';
        },
        limiterBackend: !config.failureLimit ? 'none' : redis ? 'redis' : 'memory',
        probeLimiter: () => callStore(async () => void (await redis!.ping!()), config.storeTimeout, 'limiter ping', limiterMonitor),
        secretChecks: () => verifier.load,
        now: config.now,
      });
    },
    ready() {
      if (closed) return Promise.reject(new Error('express-service-accounts: this instance was closed'));
      starting ??= start().then(
        () => {
          started = true;
        },
        (err: unknown) => {
          starting = undefined;
          throw err;
        },
      );
      return starting;
    },
    isReady() {
      return started && !closed;
    },
    async close() {
      closed = true;
      await accounts.stop();
      await limiter?.close();
      await config.store.close?.();
    },
  };
  return runtime;
}
