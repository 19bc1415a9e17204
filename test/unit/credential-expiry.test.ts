/**
 * The one reader of durations (`90d`, `12h`, `30m`, `4s`) shared by the admin API, the admin router
 * and the CLI, and the stale-credential list: docs/cli.md, "a whole number of days, hours, minutes or
 * seconds (`90d`, `12h`, `30m`, `4s`)"; docs/rotation.md, `credentials stale`.
 */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/admin/credential-expiry.js';
import { findStaleCredentials } from '../../src/admin/stale-credentials.js';
import { AdminError, type AccountRecord } from '../../src/index.js';

describe('parseDuration', () => {
  it('reads days, hours, minutes and seconds, and whole seconds as a number', () => {
    expect(parseDuration('90d')).toBe(90 * 86_400);
    expect(parseDuration('12h')).toBe(12 * 3600);
    expect(parseDuration('30m')).toBe(1800);
    expect(parseDuration('4s')).toBe(4);
    expect(parseDuration(3600)).toBe(3600);
  });

  it('reads digits alone as seconds, as the CLI takes --token-lifetime 3600', () => {
    expect(parseDuration('90')).toBe(90);
    expect(parseDuration('3600')).toBe(3600);
  });

  it('refuses anything else: another unit, zero, negative, fractional, spaces inside, not text', () => {
    for (const value of ['1w', '0', '00', '0s', '-5s', '1.5h', '1 d', 'd', '', '01d', 0, -1, 1.5, null, undefined, {}]) {
      expect(parseDuration(value), String(value)).toBeUndefined();
    }
  });
});

describe('findStaleCredentials', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  const day = 86_400_000;
  const at = (days: number): Date => new Date(now.getTime() + days * day);
  const account: AccountRecord = {
    clientId: 'esa_4fT0example0000000000000',
    name: 'nightly-export',
    clientAccountId: 'acme',
    scopes: [],
    enabled: true,
    createdAt: at(-100),
    secrets: [
      { id: 'expired000000000', hash: 'h', createdAt: at(-100), lastUsedAt: at(-1), revokedAt: null, expiresAt: at(-1) },
      { id: 'soon000000000000', hash: 'h', createdAt: at(-80), lastUsedAt: at(0), revokedAt: null, expiresAt: at(10) },
      { id: 'later00000000000', hash: 'h', createdAt: at(-80), lastUsedAt: null, revokedAt: null, expiresAt: at(60) },
      { id: 'revoked000000000', hash: 'h', createdAt: at(-90), lastUsedAt: null, revokedAt: at(-5), expiresAt: at(1) },
      { id: 'never00000000000', hash: 'h', createdAt: at(-90), lastUsedAt: at(-40), revokedAt: null },
    ],
  };

  it('lists live credentials expiring within the period (or expired), and those unused for the other, with their reasons', () => {
    const found = findStaleCredentials([account], { expiringWithin: '14d', unusedFor: '30d' }, now);
    expect(found.map((c) => [c.id, c.reasons])).toEqual([
      ['expired000000000', ['expired']],
      ['soon000000000000', ['expiring']],
      ['later00000000000', ['unused']], // never used: counted from its creation, 80 days ago
      ['never00000000000', ['unused']],
    ]);
    expect(findStaleCredentials([account], { expiringWithin: '14d' }, now).map((c) => c.id)).toEqual(['expired000000000', 'soon000000000000']);
  });

  it('refuses no criterion and a malformed duration as invalid_input', () => {
    expect(() => findStaleCredentials([account], {}, now)).toThrow(AdminError);
    expect(() => findStaleCredentials([account], { unusedFor: 'a month' }, now)).toThrow(/unusedFor/);
  });
});
