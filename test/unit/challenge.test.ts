/**
 * `formatChallenge` (src/challenge.ts), the one builder of `WWW-Authenticate` values.
 */
import { describe, expect, it } from 'vitest';
import { formatChallenge } from '../../src/challenge.js';

describe('formatChallenge', () => {
  // RFC 6750 §3: `WWW-Authenticate: Bearer realm="example", error="invalid_token", error_description="The access token expired"`.
  it('builds the RFC 6750 §3 example', () => {
    expect(formatChallenge('Bearer', { realm: 'example', error: 'invalid_token', error_description: 'The access token expired' })).toBe(
      'Bearer realm="example", error="invalid_token", error_description="The access token expired"',
    );
  });

  // RFC 6749 §5.2 / RFC 7617 §2: `WWW-Authenticate: Basic realm="..."`.
  it('builds a Basic challenge', () => {
    expect(formatChallenge('Basic', { realm: 'service-accounts' })).toBe('Basic realm="service-accounts"');
  });

  // RFC 7230 §3.2.6: quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ): '"' and '\' are escaped.
  it('escapes double quotes and backslashes', () => {
    expect(formatChallenge('Bearer', { realm: 'a "quoted" realm' })).toBe('Bearer realm="a \\"quoted\\" realm"');
    expect(formatChallenge('Bearer', { realm: 'back\\slash' })).toBe('Bearer realm="back\\\\slash"');
    expect(formatChallenge('Bearer', { realm: '\\"' })).toBe('Bearer realm="\\\\\\""');
  });

  it('leaves out undefined parameters, keeps order, and gives the bare scheme with none', () => {
    expect(formatChallenge('Bearer', { realm: 'r', error: undefined, scope: 'jobs:write' })).toBe('Bearer realm="r", scope="jobs:write"');
    expect(formatChallenge('Bearer', {})).toBe('Bearer');
    expect(formatChallenge('Bearer', { realm: '' })).toBe('Bearer realm=""');
  });
});
