/**
 * @module contract-fixtures
 * Test data and waiting for the AccountStore contract suite: unique realistic IDs, increasing
 * timestamps, and a polling wait with a deadline instead of fixed sleeps.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { jwkThumbprint } from '../keys/jwk-thumbprint.js';
import type { NewAccountRecord, NewFederatedCredentialRecord, NewKeyRecord, NewSecretRecord } from '../store/account-store.js';

/**
 * Polls `condition` every 10 ms until it holds; fails after `timeoutMs` (2 s), naming what it waited for.
 *
 * @example
 * ```ts
 * const calls: string[] = [] // client IDs a store under test was asked for
 * await waitFor(() => calls.includes(clientId), 'createAccount')
 * ```
 */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`watch listener not called within ${timeoutMs} ms after ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The most turns {@link raceBookkeeping} keeps recording uses for: a few, like a small fleet, never a flood. */
const BOOKKEEPING_TURNS = 10;

/**
 * Runs `changes` while bookkeeping races it: `keepBooks` (which starts some use recordings) is called
 * before the changes start, as soon as they have started, then once a turn while they last (at most
 * {@link BOOKKEEPING_TURNS} turns), so that some recordings read before the changes are written and
 * write after them, whatever the database's latency. A store that retries a compare-and-set under
 * contention is not starved: that is a few writers, as from a small fleet. When the changes and those
 * recordings are done, `check` looks at the result; then `keepBooks` is called once more (recordings
 * that read after the changes) and `check` looks again. Looking before those last recordings matters:
 * they write the current state back and would hide a stale write that landed late. Rejects with the
 * first failure.
 *
 * @example
 * ```ts
 * await raceBookkeeping(
 *   () => [store.recordSecretUse(clientId, secretId, new Date())],
 *   () => store.revokeSecret(clientId, secretId, new Date()),
 *   async () => {
 *     if (!(await store.findAccount(clientId))?.secrets[0]?.revokedAt) throw new Error('the revocation was undone')
 *   },
 * )
 * ```
 */
export async function raceBookkeeping(keepBooks: () => Promise<unknown>[], changes: () => Promise<unknown>, check: () => Promise<void>): Promise<void> {
  // Handled from the start: a recording that fails while the changes still run is this race's failure,
  // reported below, not an unhandled rejection.
  const keep = (into: Promise<unknown>[]): void => {
    for (const recording of keepBooks()) {
      recording.catch(() => undefined);
      into.push(recording);
    }
  };
  const settle = async (all: Promise<unknown>[]): Promise<void> => {
    const failed = (await Promise.allSettled(all)).find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  };
  const during: Promise<unknown>[] = [];
  keep(during);
  let settled = false;
  const changed = changes();
  void changed.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let turn = 0; !settled && turn < BOOKKEEPING_TURNS; turn++) {
    await null;
    keep(during);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await settle([changed, ...during]);
  await check();
  const after: Promise<unknown>[] = [];
  keep(after);
  await settle(after);
  await check();
}

/**
 * Realistic, unique IDs and strictly increasing timestamps with milliseconds. The suite never depends
 * on their format.
 *
 * @example
 * ```ts
 * const ids = new IdFactory()
 * await store.createAccount(ids.account({ scopes: ['jobs:write'] }))
 * ```
 */
export class IdFactory {
  #clock = Date.parse('2025-01-15T09:30:00.123Z');

  clientId(): string {
    return `svc_${randomBytes(12).toString('hex')}`;
  }

  secretId(): string {
    return `sec_${randomBytes(9).toString('base64url')}`;
  }

  time(): Date {
    this.#clock += 61_007; // a minute and some milliseconds
    return new Date(this.#clock);
  }

  keyId(): string {
    return `esak_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
  }

  /** A fresh EC P-256 public key (a real one) with its RFC 7638 thumbprint. */
  key(): NewKeyRecord {
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const publicKey = { kty: 'EC', crv: 'P-256', x: String(jwk.x), y: String(jwk.y) } as const;
    return { id: this.keyId(), thumbprint: jwkThumbprint(publicKey), publicKey, createdAt: this.time() };
  }

  federatedId(): string {
    return `esaf_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x').slice(0, 16)}`;
  }

  /** A federated credential of an issuer of its own (so tests never see each other's), for a Kubernetes-shaped subject. */
  federated(overrides: Partial<NewFederatedCredentialRecord> = {}): NewFederatedCredentialRecord {
    const tag = randomBytes(4).toString('hex');
    return {
      id: this.federatedId(),
      issuer: `https://oidc.cluster-${tag}.example.com`,
      subject: `system:serviceaccount:payments:exporter-${tag}`,
      audience: null,
      jwksUri: null,
      createdAt: this.time(),
      ...overrides,
    };
  }

  secret(): NewSecretRecord {
    const hash = `$2b$12$${randomBytes(40).toString('base64').replace(/[+=]/g, '.').slice(0, 53)}`;
    return { id: this.secretId(), hash, createdAt: this.time() };
  }

  account(overrides: Partial<Omit<NewAccountRecord, 'secret'>> = {}): NewAccountRecord {
    const createdAt = this.time();
    return {
      clientId: this.clientId(),
      name: `Acme ATS sync ${randomBytes(3).toString('hex')}`,
      clientAccountId: `ca_${randomBytes(6).toString('hex')}`,
      scopes: ['jobs:write'],
      createdAt,
      ...overrides,
      secret: { ...this.secret(), createdAt },
    };
  }
}

/**
 * The cap options the library passes to `addSecret` and `addKey`: `n` live credentials, under both
 * names `addSecret` may read.
 *
 * @example
 * ```ts
 * const ids = new IdFactory()
 * await store.addSecret(clientId, ids.secret(), cap(2))
 * ```
 */
export function cap(n: number): { readonly maxLiveCredentials: number; readonly maxLiveSecrets: number } {
  return { maxLiveCredentials: n, maxLiveSecrets: n };
}
