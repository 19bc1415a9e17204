/**
 * @module create-runtime
 * What every part of an instance shares, built once from the resolved config: the account cache, the
 * token deny-list, the verified-token cache, the audit and operational-event emitters, telemetry, the
 * observer of store calls, and the lifecycle
 * (lazy start-up on the first request or `ready()`, and `close()`). Parts with start-up or shutdown work
 * of their own (the token endpoint's dummy hash and failure limiter) register it here.
 */
import type { ResolvedConfig } from './config.js';
import { VerifiedTokenCache } from './token-check/token-check.js';
import { createAuditEmitter, type AuditEventInput } from './audit/audit-events.js';
import { createDebugLog } from './audit/debug-log.js';
import { AccountCache } from './runtime/account-cache.js';
import { callStore, DependencyMonitor, type CallObserver } from './runtime/call-store.js';
import { initStore, onceUntilSuccess } from './runtime/init-store.js';
import { missingDriverOf } from './store/missing-driver-error.js';
import { RevokedTokenCache } from './runtime/revoked-token-cache.js';
import type { StoreHealthSources } from './observability/health.js';
import type { ChangeFeedState } from './store/account-store.js';
import type { OperationalEvent, OperationalEventInput } from './observability/operational-events.js';
import { createHookEmitter, createTelemetry, type Telemetry } from './observability/telemetry.js';
import { LIBRARY_VERSION } from './version.js';
import { createDpopRuntime, type DpopRuntime } from './dpop/dpop-runtime.js';

/** A client ID that can never be issued (issued ones are `esa_` and 24 letters or digits): the store probe reads it. */
const HEALTH_PROBE_CLIENT_ID = 'esa_health-probe';

/** Shared per-instance state. */
export interface Runtime {
  readonly config: ResolvedConfig;
  readonly accounts: AccountCache;
  /** This instance's copy of the store's token deny-list, kept current by the same announcements. */
  readonly revokedTokens: RevokedTokenCache;
  /** The claims of access tokens whose signature already verified: one cache per instance, for every token check. */
  readonly verifiedTokens: VerifiedTokenCache;
  /** DPoP proof checks, nonces and replay detection, or `undefined` when the `dpop` option is `false`. */
  readonly dpop: DpopRuntime | undefined;
  readonly audit: (event: AuditEventInput) => void;
  readonly telemetry: Telemetry;
  /** Hands an operational event to the `onEvent` hook. */
  readonly event: (event: OperationalEventInput) => void;
  /** Watches store calls (outage and recovery events, metrics): give it to `callStore`. */
  readonly storeCalls: CallObserver;
  /** The store's and the change feed's part of `sa.health()`. */
  readonly storeHealth: StoreHealthSources;
  /** Adds start-up work, run by {@link Runtime.ready} after the store is initialised and watched. */
  onStart(task: () => Promise<void>): void;
  /** Adds shutdown work, run by {@link Runtime.close} before the store is closed. */
  onClose(task: () => Promise<void>): void;
  /** Resolves once the instance has started; retried on the next call after a failure. */
  ready(): Promise<void>;
  /**
   * Whether {@link Runtime.ready} has resolved and the instance is not closed: callers may skip awaiting
   * it. A field, kept current by the runtime, so reading it on every request calls nothing.
   */
  readonly started: boolean;
  close(): Promise<void>;
}

/**
 * The audit emitter, followed by the debug log when `debug` is on. Off, it is the emitter alone: no
 * added work on any request path.
 */
function auditWithDebugLog(config: ResolvedConfig): (event: AuditEventInput) => void {
  const audit = createAuditEmitter(config.onAudit, config.now);
  if (!config.debug) return audit;
  const debug = createDebugLog(config, config.debug);
  return (event) => {
    audit(event);
    debug(event);
  };
}

export function createRuntime(config: ResolvedConfig): Runtime {
  const event = createHookEmitter<OperationalEvent>(config.onEvent, config.now);
  const telemetry = createTelemetry(config.telemetry, LIBRARY_VERSION);
  const storeMonitor = new DependencyMonitor('store', telemetry, event, config.now);
  let feedState: ChangeFeedState | undefined;
  const onFeedState = (state: ChangeFeedState): void => {
    const previous = feedState;
    feedState = state;
    event({ type: 'change_feed.state_changed', state, previous });
  };
  const accounts = new AccountCache({ ...config, observer: storeMonitor, onFeedState });
  telemetry.observe({ accountCacheCounts: () => accounts.counts() });
  const revokedTokens = new RevokedTokenCache({ ...config, observer: storeMonitor, announcing: accounts.announcing });
  accounts.onInvalidate((key) => revokedTokens.onChange(key));
  const verifiedTokens = new VerifiedTokenCache({
    keyring: config.keyring,
    issuer: config.issuer,
    audience: config.audience,
    clockTolerance: config.clockTolerance,
  });
  const startTasks: Array<() => Promise<void>> = [];
  const closeTasks: Array<() => Promise<void>> = [];
  let closed = false;

  let missingDriverReported = false;
  const start = onceUntilSuccess(async () => {
    try {
      await initStore(config.store, config.storeTimeout, storeMonitor);
    } catch (error) {
      // Said once, even when nobody awaits ready() and requests only get 503: the onEvent hook has it as
      // `store.unavailable`; without a hook, it goes to stderr.
      if (!missingDriverReported && missingDriverOf(error)) {
        missingDriverReported = true;
        if (!config.onEvent) console.error(`express-service-accounts: ${(error as Error).message}`);
      }
      throw error;
    }
    await accounts.start();
    await revokedTokens.start(); // after subscribing, so no revocation falls between the read and the announcements
    for (const task of startTasks) await task();
    if (!closed) (runtime as { started: boolean }).started = true;
  });

  const runtime: Runtime = {
    config,
    accounts,
    revokedTokens,
    verifiedTokens,
    dpop: createDpopRuntime(config, event),
    audit: auditWithDebugLog(config),
    telemetry,
    event,
    storeCalls: storeMonitor,
    storeHealth: {
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
        if (!accounts.watching) return 'not_started';
        return feedState ?? 'watching';
      },
    },
    onStart: (task) => void startTasks.push(task),
    onClose: (task) => void closeTasks.push(task),
    ready() {
      if (closed) return Promise.reject(new Error('express-service-accounts: this instance was closed'));
      return start();
    },
    started: false,
    async close() {
      closed = true;
      (runtime as { started: boolean }).started = false;
      await accounts.stop();
      for (const task of closeTasks) await task();
      await config.store.close?.();
    },
  };
  return runtime;
}
