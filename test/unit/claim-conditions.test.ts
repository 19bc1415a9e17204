/**
 * Claim conditions of federated credentials (src/client-auth/claim-conditions.ts): how a name reaches
 * a claim ("a top-level claim, or a JSON Pointer (RFC 6901) into nested objects") and how a value
 * compares ("a string exactly, a boolean as true or false; anything else never matches"), on
 * verified claims as the token endpoint passes them.
 */
import { describe, expect, it } from 'vitest';
import { claimKey, claimNameProblem, unmetClaimCondition } from '../../src/client-auth/claim-conditions.js';

describe('claim condition names', () => {
  it('decodes ~1 and ~0 in a JSON Pointer (RFC 6901 §4: ~1 first, then ~0)', () => {
    const payload = { 'a/b': { 'c~d': 'x' }, '~1': 'tilde-one' };
    expect(unmetClaimCondition({ '/a~1b/c~0d': 'x' }, payload)).toBeUndefined();
    expect(unmetClaimCondition({ '/~01': 'tilde-one' }, payload)).toBeUndefined();
  });

  it('never reads inherited members, array elements or a value under a non-object', () => {
    expect(unmetClaimCondition({ '/constructor/name': 'Object' }, {})).toBe('/constructor/name');
    expect(unmetClaimCondition({ toString: 'x' }, {})).toBe('toString');
    expect(unmetClaimCondition({ '/groups/0': 'admins' }, { groups: ['admins'] })).toBe('/groups/0');
    expect(unmetClaimCondition({ '/env/name': 'prod' }, { env: 'prod' })).toBe('/env/name');
  });

  it('a top-level name and its one-step pointer are the same claim; a decided claim is refused either way', () => {
    expect(claimKey('environment')).toBe(claimKey('/environment'));
    expect(claimKey('kubernetes.io')).not.toBe(claimKey('/kubernetes.io/namespace'));
    expect(claimNameProblem('/iat')).toMatch(/own rule/);
    expect(claimNameProblem('/kubernetes.io/namespace')).toBeUndefined();
    expect(claimNameProblem('/')).toMatch(/empty member name/);
  });

  it('a name stored damaged (not a well-formed pointer) never holds', () => {
    expect(unmetClaimCondition({ '/a~2': 'x' }, { 'a~2': 'x' })).toBe('/a~2');
  });
});

describe('claim condition values', () => {
  it('checks every condition, in order, and names the first that fails', () => {
    const conditions = { a: '1', b: '2', c: '3' };
    expect(unmetClaimCondition(conditions, { a: '1', b: '2', c: '3' })).toBeUndefined();
    expect(unmetClaimCondition(conditions, { a: '1', b: 'x', c: 'y' })).toBe('b');
    expect(unmetClaimCondition(undefined, {})).toBeUndefined();
    expect(unmetClaimCondition({}, {})).toBeUndefined();
  });

  it('compares strings exactly (case, white space and Unicode forms count)', () => {
    expect(unmetClaimCondition({ env: 'Production' }, { env: 'production' })).toBe('env');
    expect(unmetClaimCondition({ env: 'prod' }, { env: 'prod ' })).toBe('env');
    expect(unmetClaimCondition({ env: 'caf\u00e9' }, { env: 'cafe\u0301' })).toBe('env');
  });
});
