/**
 * The rule for trying keys on a signed token (the bounded key-try loop of
 * src/client-auth/key-tries.ts), counted by the calls of the attempt it is given: each call is
 * one signature check. The rule: "try at most a small number of
 * candidate keys per token, and refuse a kid-less token when more than that match its algorithm".
 */
import { describe, expect, it } from 'vitest';
import { MAX_CANDIDATE_KEYS, tryCandidateKeys, type CandidateRules, type KeyAttempt } from '../../src/client-auth/key-tries.js';

interface Key {
  readonly id: string;
  readonly live: boolean;
}

const keys = (count: number, live = true, prefix = 'k'): Key[] => Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, live }));

/** Runs the rule; `signer` is the key that made the signature (`refused`: it did, but a claim fails). */
async function run(all: readonly Key[], rules: Partial<CandidateRules<Key>>, signer?: string, refused = false) {
  const tried: string[] = [];
  const outcome = await tryCandidateKeys(
    all,
    { kid: undefined, named: (key, kid) => key.id === kid, unnamedFallsBack: false, ...rules },
    async (key): Promise<KeyAttempt<string>> => {
      tried.push(key.id);
      if (key.id !== signer) return 'other_key';
      return refused ? 'refused' : { verified: key.id };
    },
  );
  return { outcome, tried };
}

describe('tryCandidateKeys', () => {
  it('tries at most three keys per token', () => {
    expect(MAX_CANDIDATE_KEYS).toBe(3);
  });

  // "refuse a kid-less token when more than that match its algorithm": no key is tried at all.
  it('refuses a token without kid when more keys than the cap would be tried, without a single signature check', async () => {
    const { outcome, tried } = await run(keys(1000), {}, 'k999');
    expect(outcome).toEqual({ failure: 'too_many_keys' });
    expect(tried).toEqual([]);
  });

  it('tries every key of a small set on a token without kid, and stops at the one that verifies', async () => {
    const { outcome, tried } = await run(keys(3), {}, 'k1');
    expect(outcome).toEqual({ key: { id: 'k1', live: true }, verified: 'k1' });
    expect(tried).toEqual(['k0', 'k1']);
  });

  it('tries only the key the kid names, however many keys there are', async () => {
    const { outcome, tried } = await run(keys(1000), { kid: 'k500' }, 'k500');
    expect(outcome).toMatchObject({ verified: 'k500' });
    expect(tried).toEqual(['k500']);
  });

  // jose's local key sets try every key holding a kid served twice; the cap holds there too.
  it('refuses a kid that more keys than the cap hold, untried', async () => {
    const twins = Array.from({ length: 4 }, () => ({ id: 'same', live: true }));
    const { outcome, tried } = await run(twins, { kid: 'same' }, 'same');
    expect(outcome).toEqual({ failure: 'too_many_keys' });
    expect(tried).toEqual([]);
  });

  it('tries no key for a kid the set lacks, unless told to fall back to every key', async () => {
    expect(await run(keys(2), { kid: 'unknown' }, 'k1')).toEqual({ outcome: { failure: 'no_key' }, tried: [] });
    const fallback = await run(keys(2), { kid: 'a-kid-of-the-client', unnamedFallsBack: true }, 'k1');
    expect(fallback.tried).toEqual(['k0', 'k1']);
    expect((await run(keys(4), { kid: 'a-kid-of-the-client', unnamedFallsBack: true }, 'k1')).outcome).toEqual({ failure: 'too_many_keys' });
  });

  it('stops at a key that made the signature over claims that fail: no other key could make them hold', async () => {
    const { outcome, tried } = await run(keys(3), {}, 'k0', true);
    expect(outcome).toEqual({ failure: 'not_verified', signed: true });
    expect(tried).toEqual(['k0']);
    expect((await run(keys(3), {}, 'none')).outcome).toEqual({ failure: 'not_verified', signed: false });
  });

  // An account's revoked keys are tried only to tell the audit why, and never beyond the cap.
  it('counts only the keys that count (live ones), tries them first, and the others within the cap', async () => {
    const account = [...keys(20, false, 'revoked'), ...keys(2, true, 'live')];
    const counts = (key: Key): boolean => key.live;
    const revokedSigner = await run(account, { counts }, 'revoked0');
    expect(revokedSigner.tried).toEqual(['live0', 'live1', 'revoked0']);
    expect(revokedSigner.outcome).toMatchObject({ key: { id: 'revoked0', live: false } });
    const beyond = await run(account, { counts }, 'revoked5');
    expect(beyond.tried).toHaveLength(MAX_CANDIDATE_KEYS);
    expect(beyond.outcome).toEqual({ failure: 'not_verified', signed: false });
    expect((await run([...account, ...keys(2, true, 'more')], { counts }, 'live0')).outcome).toEqual({ failure: 'too_many_keys' });
  });
});
