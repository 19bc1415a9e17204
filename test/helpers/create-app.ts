/**
 * Test app factory: an Express 5 (or 4) app with the token router at /oauth, protected routes, a
 * MemoryAccountStore (or any store), a fixed HS256 keyring and an injectable clock.
 */
import express5 from 'express';
// Express 4 installed side by side under the alias "express4" (devDependency).
import express4 from 'express4';
import { createServiceAccounts, MemoryAccountStore, type AuditEvent, type ServiceAccountsOptions } from '../../src/index.js';
import { captureText, leakGuard } from './leak-guard.js';

export const TEST_ISSUER = 'https://api.test';
export const TEST_HS256_KEY = 'test-signing-key-0123456789abcdef-0123456789';

/** A clock the test moves by hand. */
export class TestClock {
  constructor(private ms = Date.parse('2026-11-22T10:00:00Z')) {}
  now = (): Date => new Date(this.ms);
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export interface TestAppOptions extends Partial<ServiceAccountsOptions> {
  express?: 4 | 5;
  /** Mount express.json() and express.urlencoded() globally before the token router, like many hosts do. */
  hostParsers?: boolean;
}

export function createTestApp(options: TestAppOptions = {}) {
  const { express: version = 5, hostParsers = false, ...overrides } = options;
  const clock = new TestClock();
  const events: AuditEvent[] = [];
  const store = overrides.store ?? new MemoryAccountStore();
  const resolved: ServiceAccountsOptions = {
    store,
    issuer: TEST_ISSUER,
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
    secretHashRounds: 4,
    now: clock.now,
    onAudit: (event) => {
      events.push(event);
    },
    ...overrides,
  };
  // The secret-leak guard (test/helpers/leak-guard.ts) sees every audit event, looks for the signing
  // key, and learns every secret value the admin API creates.
  const onAudit = resolved.onAudit;
  if (onAudit) {
    resolved.onAudit = (event) => {
      leakGuard().capture('audit event', captureText(event));
      return onAudit(event);
    };
  }
  leakGuard().recordNeedle(TEST_HS256_KEY, 'signing key');
  const sa = createServiceAccounts(resolved);
  watchAdmin(sa.admin);
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const app = express();
  if (hostParsers) {
    app.use(express.json());
    app.use(express.urlencoded({ extended: true }));
  }
  app.use('/oauth', sa.tokenRouter);
  app.get('/api/whoami', sa.requireBearer(), (req, res) => {
    res.json(req.serviceAccount);
  });
  app.post('/api/jobs', sa.requireBearer({ scope: 'jobs:write' }), (req, res) => {
    res.status(201).json({ createdBy: req.serviceAccount?.name });
  });
  return { app, sa, store, clock, events };
}

/**
 * Pass-through wrappers on the admin API for the leak guard: created secret values are recorded, and
 * error messages (which end up in logs and on the CLI's stderr) are scanned.
 */
export function watchAdmin(admin: object, showsSecrets: 'nowhere' | 'in-its-response' = 'nowhere'): void {
  if (Object.isFrozen(admin)) return;
  const methods = admin as Record<string, unknown>;
  for (const name of Object.keys(methods)) {
    const method = methods[name];
    if (typeof method !== 'function') continue;
    // `withActor` returns the same API acting for a person: watched the same way.
    if (name === 'withActor') {
      methods[name] = (...args: unknown[]) => {
        const acting = (method as (...a: unknown[]) => object).apply(admin, args);
        watchAdmin(acting, showsSecrets);
        return acting;
      };
      continue;
    }
    methods[name] = async (...args: unknown[]) => {
      try {
        const result: unknown = await (method as (...a: unknown[]) => Promise<unknown>).apply(admin, args);
        const created = result as { secret?: { value?: unknown }; value?: unknown } | undefined;
        const value = created?.secret?.value ?? created?.value;
        // Through the admin router, the HTTP response that creates a secret shows it, once.
        if (typeof value === 'string' && showsSecrets === 'in-its-response') leakGuard().expectShownByResponse(value, `admin ${name}`);
        else if (typeof value === 'string') leakGuard().recordSecret(value, `admin ${name}`);
        else if (result !== undefined) leakGuard().capture(`admin ${name} result`, captureText(result));
        return result;
      } catch (err) {
        leakGuard().capture(`admin ${name} error`, err instanceof Error ? `${err.name}: ${err.message} ${captureText(err)}` : String(err));
        throw err;
      }
    };
  }
}
