/**
 * The parts of client authentication (src/client-auth/), built in process for the unit tests of each
 * method: a real MemoryAccountStore, runtime (account cache, store observer) and admin API over it, a
 * clock the test moves by hand, an audit sink the test reads at once (no hook emitter in between), and
 * an {@link Attempts} with the real memory failure limiter when asked for. What `createClientAuthenticator`
 * builds for the token endpoint, minus HTTP, so a test can build one method and watch its seams.
 */
import { buildAdminApi, type AdminApi } from '../../src/admin/admin-api.js';
import type { AuditEventInput } from '../../src/audit/audit-events.js';
import { Attempts, CredentialUseRecorder } from '../../src/client-auth/client-authenticator.js';
import { createFailureLimiter } from '../../src/client-auth/create-failure-limiter.js';
import type { FailureLimiter } from '../../src/client-auth/failure-limiter.js';
import type { AuthenticatedClient, AuthenticationDone } from '../../src/client-auth/presented-credentials.js';
import { resolveConfig, type ResolvedConfig, type ServiceAccountsOptions } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/create-runtime.js';
import { MemoryAccountStore } from '../../src/index.js';
import { captureText, leakGuard } from './leak-guard.js';
import { TEST_HS256_KEY, TEST_ISSUER, TestClock, watchAdmin } from './create-app.js';

export interface ClientAuthParts {
  readonly store: MemoryAccountStore;
  readonly config: ResolvedConfig;
  readonly runtime: Runtime;
  readonly admin: AdminApi;
  readonly clock: TestClock;
  readonly limiter: FailureLimiter | undefined;
  readonly attempts: Attempts;
  /** Every audit event the attempts emitted, in order. */
  readonly audit: AuditEventInput[];
  /** The reasons of the `client.authentication_failed` events, in order. */
  failures(): string[];
}

const built: Runtime[] = [];

/** Closes every runtime built since the last call (call it in `afterEach`). */
export async function closeClientAuthParts(): Promise<void> {
  for (const runtime of built.splice(0)) await runtime.close();
}

/**
 * Builds the parts over a fresh MemoryAccountStore (bcrypt cost 4, the test issuer, an HS256 key), the
 * runtime started (so the account cache follows the store's announcements). `failureLimit` as the
 * option; left out, there is no limiter.
 */
export async function createClientAuthParts(options: Partial<Omit<ServiceAccountsOptions, 'store' | 'now'>> = {}): Promise<ClientAuthParts> {
  const store = new MemoryAccountStore();
  const clock = new TestClock();
  const config = resolveConfig({
    store,
    issuer: TEST_ISSUER,
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
    secretHashRounds: 4,
    failureLimit: false,
    ...options,
    now: clock.now,
  });
  const runtime = createRuntime(config);
  built.push(runtime);
  await runtime.ready();
  const admin = buildAdminApi({ config, ready: () => runtime.ready(), audit: () => {}, changed: (clientId) => runtime.accounts.invalidate(clientId) });
  watchAdmin(admin);
  const limiter = config.failureLimit ? createFailureLimiter(config.failureLimit, config.storeTimeout) : undefined;
  if (limiter) runtime.onClose(() => limiter.close());
  const audit: AuditEventInput[] = [];
  const attempts = new Attempts({
    limiter,
    credentialUse: new CredentialUseRecorder(store, config.storeTimeout, runtime.storeCalls),
    audit: (event) => {
      leakGuard().capture('audit event', captureText(event));
      audit.push(event);
    },
    telemetry: runtime.telemetry,
    now: clock.now,
  });
  const failures = () => audit.flatMap((event) => (event.type === 'client.authentication_failed' ? [event.reason] : []));
  return { store, config, runtime, admin, clock, limiter, attempts, audit, failures };
}

/** How one authentication ended: the client, or the error it was answered with. */
export type Settled = { readonly client: AuthenticatedClient; readonly error?: undefined } | { readonly error: unknown; readonly client?: undefined };

/** Runs one authentication (`run` gets its `done` callback) and resolves with how it ended. */
export function settle(run: (done: AuthenticationDone) => void): Promise<Settled> {
  return new Promise((resolve) => run((error, client) => resolve(error ? { error } : { client: client! })));
}

/** What a test compares of an authenticated client: its client ID and the credential it used. */
export const authenticatedAs = (settled: Settled): { clientId: string; kind: string; id: string } | undefined =>
  settled.client && { clientId: settled.client.account.clientId, kind: settled.client.credential.kind, id: settled.client.credential.id };
