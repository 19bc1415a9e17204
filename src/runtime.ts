/**
 * @module runtime
 * The per-instance state built once from the resolved config and shared by the token router, the
 * bearer check and the admin API: the account cache, the secret verifier, the audit emitter, the
 * failure limiter, and lazy start-up (store init, change watching, dummy hash).
 */
import type { ResolvedConfig } from './config.js';
import { createAuditEmitter, type AuditEventInput } from './audit/audit-events.js';
import { AccountCache } from './store/account-cache.js';
import { callStore } from './store/call-store.js';
import { SecretVerifier } from './secrets/secret-verifier.js';
import { createFailureLimiter, type FailureLimiter } from './token/failure-limiter.js';
import { SecretUseRecorder } from './secrets/secret-use-recorder.js';

/** Shared per-instance state. */
export interface Runtime {
  readonly config: ResolvedConfig;
  readonly accounts: AccountCache;
  readonly secrets: SecretVerifier;
  readonly secretUse: SecretUseRecorder;
  readonly audit: (event: AuditEventInput) => void;
  readonly limiter: FailureLimiter | undefined;
  /** Resolves once the store is initialised; retried on the next call after a failure. */
  ready(): Promise<void>;
  /** Whether {@link Runtime.ready} has resolved (and the instance is not closed): callers may skip awaiting it. */
  isReady(): boolean;
  close(): Promise<void>;
}

export function createRuntime(config: ResolvedConfig): Runtime {
  const accounts = new AccountCache(config);
  const secrets = new SecretVerifier({ rounds: config.secretHashRounds, gate: { queue: config.maxQueuedSecretChecks } });
  const limiter = config.failureLimit ? createFailureLimiter(config.failureLimit, config.storeTimeout) : undefined;
  accounts.onInvalidate((clientId) => {
    if (clientId === '*') secrets.clear();
  });
  let starting: Promise<void> | undefined;
  let started = false;
  let closed = false;

  const start = async (): Promise<void> => {
    const { store } = config;
    if (store.init) await callStore(() => store.init!(), Math.max(config.storeTimeout, 30_000), 'init');
    await accounts.start();
    await secrets.dummyHash();
  };

  return {
    config,
    accounts,
    secrets,
    secretUse: new SecretUseRecorder(config.store, config.storeTimeout),
    audit: createAuditEmitter(config.onAudit, config.now),
    limiter,
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
}
