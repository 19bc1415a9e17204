/**
 * Test app factory: an Express 5 (or 4) app with the token router at /oauth, protected routes, a
 * MemoryAccountStore (or any store), a fixed HS256 keyring and an injectable clock.
 */
import express5 from 'express';
// Express 4 installed side by side under the alias "express4" (devDependency).
import express4 from 'express4';
import { createServiceAccounts, MemoryAccountStore, type AuditEvent, type ServiceAccountsOptions } from '../../src/index.js';

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
  const sa = createServiceAccounts({
    store,
    issuer: TEST_ISSUER,
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
    secretHashRounds: 4,
    now: clock.now,
    onAudit: (event) => {
      events.push(event);
    },
    ...overrides,
  });
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
