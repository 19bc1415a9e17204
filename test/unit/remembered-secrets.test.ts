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

  // Docs (security.md, "Paying bcrypt once per secret"): "10 minutes each".
  it.each([
    ['`ttl` milliseconds', { ttl: 60_000 }, 60_000],
    ['10 minutes by default', {}, 600_000],
  ])('remembers a value for %s', (_, options, ttl) => {
    let now = performance.now();
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const remembered = new RememberedSecrets(options);
    remembered.remember(one, 'hash-one');
    now += ttl;
    expect(remembered.matches(one, 'hash-one')).toBe(true);
    now += 1;
    expect(remembered.matches(one, 'hash-one')).toBe(false);
    expect(remembered.knows(one)).toBe(false);
  });
});
