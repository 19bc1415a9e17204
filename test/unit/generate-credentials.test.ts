/**
 * Client IDs and secrets (src/secrets/generate-credentials.ts): format, checksum, entropy, URL safety.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_ID_PREFIX, SECRET_PATTERN, SECRET_PREFIX } from '../../src/index.js';
import { generateClientId, generateSecret, isSecretId, parseSecret } from '../../src/credentials/generate-credentials.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('generateClientId', () => {
  it('is esa_ + 24 base62 characters, URL-safe and unique', () => {
    const ids = Array.from({ length: 200 }, generateClientId);
    for (const id of ids) {
      expect(id).toMatch(/^esa_[0-9A-Za-z]{24}$/);
      expect(id.startsWith(CLIENT_ID_PREFIX)).toBe(true);
      expect(encodeURIComponent(id)).toBe(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('generateSecret', () => {
  it('matches the documented format and the scanner regex', () => {
    const { id, value } = generateSecret();
    expect(value).toMatch(/^esas_[0-9A-Za-z]{16}_[0-9A-Za-z]{50}$/);
    expect(value).toMatch(SECRET_PATTERN);
    expect(value.startsWith(`${SECRET_PREFIX}${id}_`)).toBe(true);
    expect(isSecretId(id)).toBe(true);
    expect(SECRET_PATTERN.exec(`token=${value}; next`)?.[0]).toBe(value);
  });

  // SPEC §2.1: "client secret ... Treated like a password": at least 256 random bits.
  it('carries at least 256 random bits: 44 base62 characters after the secret ID', () => {
    const { value } = generateSecret();
    const random = value.split('_')[2]!.slice(0, 44);
    expect(random).toHaveLength(44);
    expect(44 * Math.log2(62)).toBeGreaterThanOrEqual(256);
    // Uniformity sanity check over many secrets: every base62 character shows up.
    const seen = new Set(Array.from({ length: 100 }, () => generateSecret().value.split('_')[2]!.slice(0, 44)).join(''));
    expect(seen.size).toBe(62);
  });

  it('is URL-safe (the same bytes form-encoded or not, RFC 6749 §2.3.1) and unique', () => {
    const values = Array.from({ length: 200 }, () => generateSecret().value);
    for (const v of values) expect(encodeURIComponent(v)).toBe(v);
    expect(new Set(values).size).toBe(values.length);
  });

  it('parseSecret returns the secret ID of a valid secret', () => {
    const { id, value } = generateSecret();
    expect(parseSecret(value)).toEqual({ secretId: id });
  });

  // CRC-32 detects every single-character change; the checksum refuses typos without a lookup.
  it('the checksum detects a one-character change at every position', () => {
    const { value } = generateSecret();
    const start = SECRET_PREFIX.length;
    for (let i = start; i < value.length; i++) {
      if (value[i] === '_') continue;
      const other = BASE62[(BASE62.indexOf(value[i]!) + 1 + (i % 61)) % 62]!;
      const changed = value.slice(0, i) + other + value.slice(i + 1);
      expect(parseSecret(changed), `position ${i}`).toBeUndefined();
    }
  });

  it('parseSecret refuses anything of another shape', () => {
    const { value } = generateSecret();
    for (const bad of ['', 'esas_', value.slice(0, -1), `${value}A`, value.replace('esas_', 'esa_'), value.replace(/_/g, '-'), ` ${value}`]) {
      expect(parseSecret(bad)).toBeUndefined();
    }
  });
});
