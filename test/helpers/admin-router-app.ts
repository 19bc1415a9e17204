/**
 * Test app for the admin router: Express 5 (or 4) with the router at /admin over a standalone admin
 * API on a MemoryAccountStore (or any store), an injectable clock, the audit events collected, and an
 * `authorize` that maps `Authorization: Bearer <token>` to the principal the test gave that token.
 */
import express5 from 'express';
import express4 from 'express4';
import { createAdminApi, createAdminRouter, MemoryAccountStore, type AccountStore, type AdminPrincipal, type AuditEvent } from '../../src/index.js';
import { TestClock, watchAdmin } from './create-app.js';

export interface AdminRouterAppOptions {
  express?: 4 | 5;
  /** Bearer token → who is acting (`false`: signed in, not an administrator). */
  tokens?: Readonly<Record<string, AdminPrincipal | false>>;
  store?: AccountStore;
  /** Mount express.json() and express.urlencoded() globally before the router, like many hosts do. */
  hostParsers?: boolean;
  challenge?: string;
  maxSecretsPerAccount?: number;
  /** The admin API's `maxAccessTokenLifetime`. */
  maxAccessTokenLifetime?: number;
  /** The admin API's `maxCredentialLifetime`, in seconds. */
  maxCredentialLifetime?: number;
  /** The router's `operatorOnlyScopes`. */
  operatorOnlyScopes?: readonly string[];
}

export const OPERATOR: AdminPrincipal = { actor: { id: 'op-1', name: 'Olive Operator' }, allClientAccounts: true };
export const ACME_ADMIN: AdminPrincipal = { actor: { id: 'u-acme', name: 'Ada of Acme' }, clientAccountId: 'acme' };
export const GLOBEX_ADMIN: AdminPrincipal = { actor: { id: 'u-globex', name: 'Grace of Globex' }, clientAccountId: 'globex' };

export const DEFAULT_TOKENS: Readonly<Record<string, AdminPrincipal | false>> = {
  operator: OPERATOR,
  acme: ACME_ADMIN,
  globex: GLOBEX_ADMIN,
  viewer: false,
};

export function createAdminRouterApp(options: AdminRouterAppOptions = {}) {
  const { express: version = 5, tokens = DEFAULT_TOKENS, hostParsers = false } = options;
  const clock = new TestClock();
  const events: AuditEvent[] = [];
  const store = options.store ?? new MemoryAccountStore();
  const admin = createAdminApi({
    store,
    secretHashRounds: 4,
    now: clock.now,
    onAudit: (event) => {
      events.push(event);
    },
    ...(options.maxSecretsPerAccount !== undefined && { maxSecretsPerAccount: options.maxSecretsPerAccount }),
    ...(options.maxAccessTokenLifetime !== undefined && { maxAccessTokenLifetime: options.maxAccessTokenLifetime }),
    ...(options.maxCredentialLifetime !== undefined && { maxCredentialLifetime: options.maxCredentialLifetime }),
  });
  watchAdmin(admin, 'in-its-response');
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const app = express();
  if (hostParsers) {
    app.use(express.json());
    app.use(express.urlencoded({ extended: true }));
  }
  const router = createAdminRouter({
    admin,
    authorize: (req) => {
      const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
      return match && Object.hasOwn(tokens, match[1]!) ? tokens[match[1]!] : undefined;
    },
    ...(options.challenge !== undefined && { challenge: options.challenge }),
    ...(options.operatorOnlyScopes !== undefined && { operatorOnlyScopes: options.operatorOnlyScopes }),
  });
  app.use('/admin', router);
  return { app, admin, store, clock, events };
}
