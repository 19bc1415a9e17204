/**
 * @module describe-assertion-ids
 * The contract tests of `consumeAssertionId`, the replay protection of signed client assertions: the
 * first use of an (issuer, ID) pair succeeds and every later one fails until the assertion expires,
 * even when the uses race.
 */
import type { KeyCredentialStore } from '../store/credential-kinds.js';
import type { AccountStoreTestApi } from './account-store-test-api.js';
import type { IdFactory } from './contract-fixtures.js';
import { heldTest } from './store-holding.js';

const RACERS = 10;

/**
 * Registers the `consumeAssertionId` tests in the enclosing `describe`. `keyStore(arguments)` (the test
 * function's) returns the store when it holds keys, and otherwise marks the running test skipped.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest'
 * import { supportsKeyCredentials } from '../store/credential-kinds.js'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeAssertionIds(() => (supportsKeyCredentials(store) ? store : undefined), new IdFactory(), { it, expect })
 * ```
 */
export function describeAssertionIds(
  keyStore: (testArguments: IArguments) => KeyCredentialStore | undefined,
  ids: IdFactory,
  { it, expect }: Pick<AccountStoreTestApi, 'it' | 'expect'>,
): void {
  /** A new assertion's issuer and ID, issued now (the fixture clock) and valid for `lifetimeMs`. */
  const fresh = (lifetimeMs = 300_000) => {
    const now = ids.time();
    return { issuer: ids.clientId(), id: ids.keyId().replace('esak_', 'jti-'), now, expiresAt: new Date(now.getTime() + lifetimeMs) };
  };
  const at = (date: Date, ms: number): Date => new Date(date.getTime() + ms);

  // RFC 7523 §3: "The authorization server MAY ensure that JWTs are not replayed by maintaining the set
  // of used "jti" values for the length of time for which the JWT would be considered valid".
  it('consumeAssertionId resolves true for the first use of an assertion ID and false for a replay', heldTest(keyStore, async (store) => {
    const { issuer, id, now, expiresAt } = fresh();
    expect(await store.consumeAssertionId(issuer, id, expiresAt, now)).toBe(true);
    expect(await store.consumeAssertionId(issuer, id, expiresAt, at(now, 1000))).toBe(false);
    expect(await store.consumeAssertionId(issuer, id, at(expiresAt, 60_000), at(expiresAt, -1))).toBe(false);
  }));

  // RFC 7519 §4.1.7: the "jti" value is unique per issuer; another issuer may use the same one.
  it('consumeAssertionId keeps assertion IDs apart per issuer', heldTest(keyStore, async (store) => {
    const { id, now, expiresAt } = fresh();
    expect(await store.consumeAssertionId(ids.clientId(), id, expiresAt, now)).toBe(true);
    expect(await store.consumeAssertionId(ids.clientId(), id, expiresAt, now)).toBe(true);
    expect(await store.consumeAssertionId('https://issuer.example', id, expiresAt, now)).toBe(true);
  }));

  // AccountStore.consumeAssertionId: "An entry whose `expiresAt` is not after `now` counts as absent".
  it('consumeAssertionId forgets an assertion ID once it has expired', heldTest(keyStore, async (store) => {
    const { issuer, id, now, expiresAt } = fresh(120_000);
    expect(await store.consumeAssertionId(issuer, id, expiresAt, now)).toBe(true);
    expect(await store.consumeAssertionId(issuer, id, at(expiresAt, 120_000), expiresAt)).toBe(true);
    expect(await store.consumeAssertionId(issuer, id, at(expiresAt, 120_000), at(expiresAt, 1))).toBe(false);
  }));

  // RFC 7519 §4.1.7: "jti" is a case-sensitive string chosen by the client: any length, any character.
  it('consumeAssertionId takes any assertion ID, however long or strange', heldTest(keyStore, async (store) => {
    const { issuer, id, now, expiresAt } = fresh();
    const strange = [`${id}${'x'.repeat(8000)}`, `${id} ' " \\ ; -- % _ * 名前 😀`, `${id}\u0000nul`, id.toUpperCase()];
    for (const value of strange) expect(await store.consumeAssertionId(issuer, value, expiresAt, now)).toBe(true);
    for (const value of strange) expect(await store.consumeAssertionId(issuer, value, expiresAt, now)).toBe(false);
    expect(await store.consumeAssertionId(issuer, id, expiresAt, now)).toBe(true);
  }));

  it(`consumeAssertionId resolves true for exactly one of ${RACERS} concurrent uses of one assertion ID`, heldTest(keyStore, async (store) => {
    const { issuer, id, now, expiresAt } = fresh();
    const results = await Promise.all(Array.from({ length: RACERS }, () => store.consumeAssertionId(issuer, id, expiresAt, now)));
    expect(results.filter((first) => first).length).toBe(1);
  }));
}
