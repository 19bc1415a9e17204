/**
 * RememberedSecrets (docs/security.md, "Paying bcrypt once per secret"): a secret that passed bcrypt is
 * remembered by client ID and secret ID, as the stored hash it matched and an HMAC of the value; only
 * that exact value, for that exact stored hash, is recognised. Liveness is not its business (the
 * account record decides it), so it has nothing to forget when accounts change. Where time matters,
 * the `performance` clock is held still by a spy and moved by hand: no sleeping.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RememberedSecrets } from '../../src/secrets/remembered-secrets.js';

const one = { clientId: 'esa_one', secretId: 'secret-one', value: 'value-one' };
const two = { clientId: 'esa_two', secretId: 'secret-two', value: 'value-two' };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RememberedSecrets', () => {
  it('recognises a remembered value for its stored hash, and knows it whatever the hash', () => {
    const remembered = new RememberedSecrets();
    expect(remembered.matches(one, 'hash-one')).toBe(false);
    expect(remembered.knows(one)).toBe(false);
    remembered.remember(one, 'hash-one');
    expect(remembered.matches(one, 'hash-one')).toBe(true);
    expect(remembered.knows(one)).toBe(true);
  });

  it('recognises only that exact value, of that client and secret ID, for that stored hash', () => {
    const remembered = new RememberedSecrets();
    remembered.remember(one, 'hash-one');
    expect(remembered.matches({ ...one, value: 'value-one ' }, 'hash-one')).toBe(false);
    expect(remembered.matches({ ...one, value: 'Value-one' }, 'hash-one')).toBe(false);
    expect(remembered.knows({ ...one, value: 'value-on' })).toBe(false);
    expect(remembered.matches(one, 'another-hash')).toBe(false); // another stored secret
    expect(remembered.matches({ ...one, clientId: 'esa_other' }, 'hash-one')).toBe(false);
    expect(remembered.matches({ ...one, secretId: 'secret-other' }, 'hash-one')).toBe(false);
  });

  it('remembers at most `max` secrets, dropping the least recently used', () => {
    const remembered = new RememberedSecrets({ max: 2 });
    const three = { clientId: 'esa_three', secretId: 'secret-three', value: 'value-three' };
    remembered.remember(one, 'hash-one');
    remembered.remember(two, 'hash-two');
    expect(remembered.matches(one, 'hash-one')).toBe(true); // now the most recently used
    remembered.remember(three, 'hash-three');
    expect(remembered.knows(two)).toBe(false);
    expect(remembered.knows(one)).toBe(true);
    expect(remembered.knows(three)).toBe(true);
  });

  // Docs (security.md, "Paying bcrypt once per secret"): an entry is forgotten after 10 minutes
  // without a use that matched it.
  it.each([
    ['`ttl` milliseconds', { ttl: 60_000 }, 60_000],
    ['10 minutes by default', {}, 600_000],
  ])('forgets a value unused for %s', (_, options, ttl) => {
    let now = 1_000_000; // whole milliseconds: with a fraction, (t + ms) - t need not be ms exactly
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const remembered = new RememberedSecrets(options);
    remembered.remember(one, 'hash-one');
    remembered.remember(two, 'hash-two');
    now += ttl;
    expect(remembered.matches(one, 'hash-one')).toBe(true);
    now += 1;
    expect(remembered.knows(two)).toBe(false); // unused for ttl + 1 ms
    expect(remembered.matches(one, 'hash-one')).toBe(true); // used 1 ms ago
  });

  // Docs (security.md, "Paying bcrypt once per secret"): "each use that matches extends it, up to a
  // hard end drawn between 45 and 60 minutes after the check", so clients checked together are not
  // checked again together.
  it('keeps a value in use past its idle time, until its hard end, however often it is used', () => {
    let now = 1_000_000; // whole milliseconds: with a fraction, (t + ms) - t need not be ms exactly
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const remembered = new RememberedSecrets({ random: () => 0 }); // hard end: the full hour
    remembered.remember(one, 'hash-one');
    for (let minute = 5; minute < 60; minute += 5) {
      now += 5 * 60_000;
      expect(remembered.matches(one, 'hash-one'), `minute ${minute}`).toBe(true);
    }
    now += 5 * 60_000 - 1; // 60 minutes after the check, less 1 ms
    expect(remembered.matches(one, 'hash-one')).toBe(true);
    now += 2;
    expect(remembered.matches(one, 'hash-one')).toBe(false);
    expect(remembered.knows(one)).toBe(false);
  });

  it('draws each hard end at random, between three quarters of `maxTtl` and `maxTtl`', () => {
    let now = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const draws = [0, 0.5, 0.999];
    const remembered = new RememberedSecrets({ ttl: 60 * 60_000, maxTtl: 40 * 60_000, random: () => draws.shift() ?? 0 });
    const secrets = [one, two, { clientId: 'esa_three', secretId: 'secret-three', value: 'value-three' }];
    for (const secret of secrets) remembered.remember(secret, 'hash');
    const endsAt = (secret: (typeof secrets)[number]): number => {
      const start = now;
      let minutes = 0;
      while (remembered.knows(secret)) now = start + ++minutes * 60_000;
      now = start;
      return minutes;
    };
    // Remembering a remembered value again (a concurrent first request) does not move its hard end.
    now += 20 * 60_000;
    remembered.remember(one, 'hash');
    // Checked once a minute from there: the first minute at which each is forgotten (40, 35 and 30
    // minutes after the check: 40 × (1 - 0.25 × draw)).
    expect(secrets.map(endsAt)).toEqual([21, 16, 11]);
  });

  it('a wrong value does not keep an entry alive', () => {
    let now = 1_000_000; // whole milliseconds: with a fraction, (t + ms) - t need not be ms exactly
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const remembered = new RememberedSecrets({ ttl: 60_000 });
    remembered.remember(one, 'hash-one');
    now += 40_000;
    expect(remembered.knows({ ...one, value: 'wrong' })).toBe(false);
    now += 40_000;
    expect(remembered.knows(one)).toBe(false);
  });
});
