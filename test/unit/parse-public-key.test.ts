/**
 * Reading the public key an operator registers (docs/private-key-jwt.md): which keys and formats are
 * accepted, the RFC 7638 thumbprint, and the refusals, none of which repeats the input.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, CompactSign, compactVerify, exportJWK, importJWK } from 'jose';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePublicKey, PUBLIC_KEY_REFUSALS, type ParsedPublicKey } from '../../src/keys/parse-public-key.js';

const spki = (key: KeyObject): string => key.export({ format: 'pem', type: 'spki' }).toString();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ed = generateKeyPairSync('ed25519');

async function accepted(input: unknown): Promise<ParsedPublicKey> {
  const result = await parsePublicKey(input);
  if ('refused' in result) throw new Error(`refused: ${result.refused}`);
  return result;
}

async function refused(input: unknown): Promise<string> {
  const result = await parsePublicKey(input);
  if (!('refused' in result)) throw new Error('accepted');
  return result.refused;
}

describe('parsePublicKey', () => {
  // RFC 7638 §3.1: the example RSA key's SHA-256 thumbprint is "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs".
  it('computes the RFC 7638 SHA-256 thumbprint (the RFC example key)', async () => {
    const jwk = {
      kty: 'RSA',
      n:
        '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs' +
        'tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5' +
        'hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    const parsed = await accepted(jwk);
    expect(parsed.thumbprint).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
    // Only the members that make the key are kept.
    expect(parsed.publicKey).toEqual({ kty: 'RSA', n: jwk.n, e: 'AQAB' });
  });

  // The accepted key types: EC P-256, RSA of 2048 bits or more, Ed25519.
  it('accepts EC P-256, RSA 2048 and Ed25519 public keys as SPKI PEM, with the thumbprint jose computes', async () => {
    for (const pair of [ec, rsa, ed]) {
      const parsed = await accepted(spki(pair.publicKey));
      const jwk = await exportJWK(pair.publicKey);
      expect(parsed.thumbprint).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
      expect(Object.keys(parsed.publicKey).sort()).toEqual(Object.keys(jwk).sort());
    }
    expect((await accepted(spki(ec.publicKey))).publicKey).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect((await accepted(spki(ed.publicKey))).publicKey).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
  });

  // RFC 7515 / RFC 8037: the stored JWK verifies a JWS signed with the private half, with the algorithm
  // of its type (ES256, RS256, EdDSA), as the token endpoint will verify client assertions.
  it('returns a JWK that jose imports and verifies signatures of the private half with', async () => {
    const cases = [
      { pair: ec, alg: 'ES256' },
      { pair: rsa, alg: 'RS256' },
      { pair: ed, alg: 'EdDSA' },
    ];
    for (const { pair, alg } of cases) {
      const { publicKey } = await accepted(spki(pair.publicKey));
      const jws = await new CompactSign(new TextEncoder().encode('assertion')).setProtectedHeader({ alg }).sign(pair.privateKey);
      const verified = await compactVerify(jws, await importJWK(publicKey, alg));
      expect(new TextDecoder().decode(verified.payload)).toBe('assertion');
    }
  });

  // The same key in every accepted form is one key: one thumbprint.
  it('reads PKCS#1 "RSA PUBLIC KEY", a JWK object, JWK JSON text and a one-key JWK Set as the same key', async () => {
    const { thumbprint } = await accepted(spki(rsa.publicKey));
    const jwk = await exportJWK(rsa.publicKey);
    const forms: unknown[] = [
      rsa.publicKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      jwk,
      JSON.stringify(jwk),
      `\n  ${JSON.stringify({ keys: [{ ...jwk, use: 'sig', kid: 'mine' }] })}\n`,
      { keys: [{ ...jwk, key_ops: ['verify'] }] },
    ];
    for (const form of forms) expect((await accepted(form)).thumbprint).toBe(thumbprint);
  });

  it('reads the public key of a certificate, and of the first certificate of a chain', async () => {
    const certificate = readFileSync(join(__dirname, 'fixtures', 'p256-certificate.pem'), 'utf8');
    const publicKey = readFileSync(join(__dirname, 'fixtures', 'p256-certificate-public.pem'), 'utf8');
    const { thumbprint } = await accepted(publicKey);
    expect((await accepted(certificate)).thumbprint).toBe(thumbprint);
    const issuer = readFileSync(join(__dirname, 'fixtures', 'p256-certificate.pem'), 'utf8');
    expect((await accepted(`${certificate}\n${issuer}`)).thumbprint).toBe(thumbprint);
  });

  // A private key must never be registered or stored: it stays with the client. The message names the
  // mistake and how to get the public half, and never repeats any of the key.
  it('refuses a private key in every form with one message that repeats nothing of it', async () => {
    const forms: string[] = [
      ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      ec.privateKey.export({ format: 'pem', type: 'sec1' }).toString(),
      rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      ed.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString(),
      `${spki(ec.publicKey)}${ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()}`,
      JSON.stringify(await exportJWK(ec.privateKey)),
      JSON.stringify({ keys: [await exportJWK(rsa.privateKey)] }),
    ];
    for (const form of forms) {
      const message = await refused(form);
      expect(message).toMatch(/private key.*public half/);
      for (const chunk of form.match(/[A-Za-z0-9+/_-]{12,}/g) ?? []) expect(message).not.toContain(chunk);
    }
    const { d } = await exportJWK(ed.privateKey);
    const message = await refused({ ...(await exportJWK(ed.publicKey)), d });
    expect(message).not.toContain(d);
  });

  // A symmetric key (JWK "kty": "oct", RFC 7518 §6.4) is a shared secret: an HMAC "assertion" signed
  // with it proves nothing a password does not.
  it('refuses a symmetric key without repeating it', async () => {
    const k = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';
    const message = await refused({ kty: 'oct', k });
    expect(message).toMatch(/symmetric/);
    expect(message).not.toContain(k);
  });

  it('refuses other curves, short RSA keys, key-agreement keys and keys meant for encryption', async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey;
    expect(await refused(spki(p384))).toMatch(/P-256/);
    expect(await refused(spki(k1))).toMatch(/P-256/);
    expect(await refused(spki(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey))).toMatch(/2048/);
    expect(await refused(spki(generateKeyPairSync('x25519').publicKey))).toMatch(/only EC P-256, RSA .* and Ed25519/);
    expect(await refused({ ...(await exportJWK(ec.publicKey)), use: 'enc' })).toMatch(/another use/);
    expect(await refused({ ...(await exportJWK(ec.publicKey)), key_ops: ['encrypt'] })).toMatch(/another use/);
  });

  // `openssl genpkey -algorithm RSA-PSS` makes an RSA key whose SPKI restricts it to PSS
  // (id-RSASSA-PSS, RFC 4055). It is refused, but not as "not RSA": the refusal names the form and the
  // plain RSA key to generate instead, which signs PS256 as well.
  it('refuses an RSA-PSS-only key, saying to generate a plain RSA key for PS256', async () => {
    const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).publicKey;
    const message = await refused(spki(pss));
    expect(message).toBe(PUBLIC_KEY_REFUSALS.rsaPss);
    expect(message).toMatch(/RSA-PSS.*-algorithm RSA.*PS256/);
  });

  it('refuses what is not one readable public key', async () => {
    const unreadable = [
      '',
      'hello',
      '{not json',
      '[]',
      42,
      null,
      { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' },
      { kty: 'EC', crv: 'P-256', x: 1, y: 2 },
      '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
    ];
    for (const input of unreadable) expect(await refused(input)).toMatch(/expected a public key/);
    const jwk = await exportJWK(ec.publicKey);
    expect(await refused({ keys: [jwk, jwk] })).toMatch(/exactly one key/);
    expect(await refused({ keys: [] })).toMatch(/exactly one key/);
    expect(await refused(`${spki(ec.publicKey)}${spki(rsa.publicKey)}`)).toMatch(/several blocks/);
    expect(await refused(`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1 me@laptop`)).toMatch(/ssh-keygen -e -m PKCS8/);
    expect(await refused(`${spki(ec.publicKey)}${' '.repeat(70_000)}`)).toMatch(/at most 64 KiB/);
  });

  // Whatever it is given, the answer is an accepted public key or one of the fixed refusals: no
  // refusal can repeat any of the input (a private key pasted by mistake stays out of every message).
  it('answers any input with a public key or a fixed refusal (property)', async () => {
    const privatePem = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const publicJwk = await exportJWK(ec.publicKey);
    const privateJwk = await exportJWK(ec.privateKey);
    const mutated = (text: string) =>
      fc.tuple(fc.nat(text.length), fc.nat(text.length), fc.string()).map(([a, b, insert]) => text.slice(0, Math.min(a, b)) + insert + text.slice(Math.max(a, b)));
    const input = fc.oneof(
      fc.string(),
      fc.json(),
      fc.jsonValue(),
      mutated(privatePem),
      mutated(spki(rsa.publicKey)),
      mutated(JSON.stringify(privateJwk)),
      fc.record({ kty: fc.constantFrom('EC', 'RSA', 'OKP', 'oct', 'x'), crv: fc.string(), x: fc.string(), y: fc.string(), n: fc.string(), e: fc.string() }, { requiredKeys: ['kty'] }),
      fc.dictionary(fc.constantFrom('use', 'key_ops', 'd', 'alg', 'kid', 'k'), fc.jsonValue()).map((extra) => ({ ...publicJwk, ...extra })),
    );
    const fixed = new Set<string>(Object.values(PUBLIC_KEY_REFUSALS));
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        const result = await parsePublicKey(value);
        if ('refused' in result) expect(fixed.has(result.refused), result.refused).toBe(true);
        else expect(['EC', 'RSA', 'OKP']).toContain(result.publicKey.kty);
      }),
      { numRuns: 300 },
    );
  });
});
