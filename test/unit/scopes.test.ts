/**
 * The scope grammar (src/scopes.ts) shared by the admin API, the token endpoint and requireBearer.
 */
import { describe, expect, it } from 'vitest';
import { InvalidScopeError } from '../../src/errors.js';
import { grantScopes, isScopeToken, parseScopeList } from '../../src/token-grant.js';

class BadScope extends Error {
  constructor(readonly item: unknown) {
    super('bad scope');
  }
}
const bad = (item: unknown): BadScope => new BadScope(item);

/** The error `fn` throws (fails the test when it throws nothing). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('isScopeToken', () => {
  // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
  it('accepts every character of the grammar, and only those', () => {
    const allowed: string[] = [];
    for (let code = 0; code < 0x80; code++) {
      if (isScopeToken(String.fromCharCode(code))) allowed.push(String.fromCharCode(code));
    }
    const expected = [0x21, ...range(0x23, 0x5b), ...range(0x5d, 0x7e)].map((c) => String.fromCharCode(c));
    expect(allowed).toEqual(expected);
    expect(isScopeToken(expected.join(''))).toBe(true);
  });

  it('refuses the empty string, spaces, quotes, backslashes, non-ASCII and non-strings', () => {
    for (const value of ['', 'jobs read', ' jobs', 'jobs"', 'jobs\\read', 'jobs\tread', 'jobs\nread', 'tâches', 'jobs\u007f']) {
      expect(isScopeToken(value), JSON.stringify(value)).toBe(false);
    }
    for (const value of [undefined, null, 42, ['jobs'], { toString: () => 'jobs' }]) {
      expect(isScopeToken(value)).toBe(false);
    }
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('parseScopeList', () => {
  it('splits a space-separated string, dropping empty items and keeping order and duplicates', () => {
    expect(parseScopeList('jobs:read  jobs:write jobs:read ', bad)).toEqual(['jobs:read', 'jobs:write', 'jobs:read']);
    expect(parseScopeList('', bad)).toEqual([]);
    expect(parseScopeList('   ', bad)).toEqual([]);
  });

  it('takes a list (any iterable), dropping empty items', () => {
    expect(parseScopeList(['jobs:read', '', 'jobs:write'], bad)).toEqual(['jobs:read', 'jobs:write']);
    expect(parseScopeList(new Set(['jobs:read']), bad)).toEqual(['jobs:read']);
    expect(parseScopeList([], bad)).toEqual([]);
  });

  it('throws the caller’s error for the first item that is not a scope token', () => {
    const fromString = thrown(() => parseScopeList('jobs:read jobs"write "x"', bad));
    expect(fromString).toBeInstanceOf(BadScope);
    expect((fromString as BadScope).item).toBe('jobs"write');
    // In a list, an item with a space is not split: it is refused whole.
    expect((thrown(() => parseScopeList(['jobs:read', 'jobs write'], bad)) as BadScope).item).toBe('jobs write');
    expect((thrown(() => parseScopeList(['jobs:read', 42], bad)) as BadScope).item).toBe(42);
  });
});

describe('grantScopes', () => {
  const allowed = ['jobs:read', 'jobs:write'];

  // RFC 6749 §3.3: "If the client omits the scope parameter when requesting authorization, the
  // authorization server MUST either process the request using a pre-defined default value or fail".
  it('grants every allowed scope when none is requested', () => {
    expect(grantScopes(allowed, undefined)).toEqual(allowed);
  });

  it('grants the requested scopes, once each, in the order requested', () => {
    expect(grantScopes(allowed, 'jobs:write')).toEqual(['jobs:write']);
    expect(grantScopes(allowed, 'jobs:write jobs:read  jobs:write')).toEqual(['jobs:write', 'jobs:read']);
  });

  it('grants no scope list (unrestricted) to an account without scopes, whatever is requested', () => {
    expect(grantScopes([], undefined)).toBeUndefined();
    expect(grantScopes([], 'anything:at-all')).toBeUndefined();
  });

  // RFC 6749 §5.2: "invalid_scope: The requested scope is invalid, unknown, malformed, or exceeds the
  // scope granted by the resource owner."
  it.each([
    ['an empty scope', ''],
    ['only spaces', '   '],
    ['a quote', 'jobs:"read"'],
    ['a backslash', 'jobs\\read'],
    ['a tab', 'jobs:read\tjobs:write'],
  ])('refuses a malformed scope parameter (%s), even for an unrestricted account', (_name, requested) => {
    for (const account of [allowed, []]) {
      const err = thrown(() => grantScopes(account, requested));
      expect(err).toBeInstanceOf(InvalidScopeError);
      expect((err as InvalidScopeError).message).toBe('The scope parameter is malformed');
    }
  });

  it('refuses a request for a scope the account is not allowed', () => {
    const err = thrown(() => grantScopes(allowed, 'jobs:read admin:everything'));
    expect(err).toBeInstanceOf(InvalidScopeError);
    expect((err as InvalidScopeError).message).toBe('A requested scope is not allowed for this client');
  });
});
