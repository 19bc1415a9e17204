/**
 * VerifiedSecretDigests (docs/security.md, "Paying bcrypt once per secret"): the digest that lets every
 * instance of a deployment skip bcrypt for a value one of them verified. It is "made only for values of
 * the generated format with a valid checksum"; it proves only that exact value, for that client ID,
 * secret ID and bcrypt hash; it is recognised by every instance holding the same signing keys (HS256
 * or a private ES256/RS256 key), and by no other; and a digest already recognised is not written again.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyring, type SigningKeyOptions } from '../../src/access-tokens/keyring.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { MemoryAccountStore, type SecretRecord } from '../../src/index.js';
import { VerifiedSecretDigests } from '../../src/secrets/remembered-secrets.js';
import { secretWithId } from '../helpers/secret-values.js';

const fail = (name: string, problem: string): never => {
  throw new TypeError(`${name} ${problem}`);
};
const HS256: SigningKeyOptions = { alg: 'HS256', key: 'unit-test-signing-key-0123456789abcdef-0123' };
const ES256: SigningKeyOptions = {
  alg: 'ES256',
  key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
};

/** A store that records the digests written to it. */
class RecordingStore extends MemoryAccountStore {
  readonly written: Array<[string, string, string]> = [];
  override async recordSecretDigest(clientId: string, secretId: string, digest: string): Promise<void> {
    this.written.push([clientId, secretId, digest]);
  }
}

function digestsFor(keys: SigningKeyOptions[], store = new RecordingStore()) {
  return { store, digests: new VerifiedSecretDigests(createKeyring(keys, fail), { store, storeTimeout: 1000 }) };
}

const generated = generateSecret();
const presented = { clientId: 'esa_0123456789abcdefghijklmn', secretId: generated.id, value: generated.value };
const record: SecretRecord = { id: generated.id, hash: '$2b$10$' + 'h'.repeat(53), createdAt: new Date(), lastUsedAt: null, revokedAt: null };

/** The digest `digests` writes for `presented`, as the store would return it. */
async function written(keys: SigningKeyOptions[], secret = presented): Promise<SecretRecord> {
  const { store, digests } = digestsFor(keys);
  digests.record(secret, record);
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.written).toHaveLength(1);
  const [clientId, secretId, digest] = store.written[0]!;
  expect([clientId, secretId]).toEqual([secret.clientId, secret.secretId]);
  return { ...record, verifiedDigest: digest };
}

describe('VerifiedSecretDigests', () => {
  it.each([
    ['HS256', HS256],
    ['ES256', ES256],
  ])('a digest made under an %s key is short and recognised by another instance with the same key', async (_alg, key) => {
    const stored = await written([key]);
    expect(stored.verifiedDigest).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(digestsFor([key]).digests.matches(presented, stored)).toBe(true);
  });

  it('proves only that exact value, for that client ID, secret ID and hash', async () => {
    const stored = await written([HS256]);
    const { digests } = digestsFor([HS256]);
    expect(digests.matches({ ...presented, value: secretWithId(presented.secretId) }, stored)).toBe(false);
    expect(digests.matches({ ...presented, clientId: 'esa_ZZZZZZZZZZZZZZZZZZZZZZZZ' }, stored)).toBe(false);
    expect(digests.matches(presented, { ...stored, hash: '$2b$10$' + 'x'.repeat(53) })).toBe(false);
    // Another MAC of the same length: the first character after the key ID changed ('A' ↔ 'B').
    const digest = stored.verifiedDigest!;
    const at = digest.lastIndexOf('.') + 1;
    const tampered = `${digest.slice(0, at)}${digest[at] === 'A' ? 'B' : 'A'}${digest.slice(at + 1)}`;
    expect(tampered).not.toBe(digest);
    expect(digests.matches(presented, { ...stored, verifiedDigest: tampered })).toBe(false);
    expect(digests.matches(presented, { ...stored, verifiedDigest: undefined })).toBe(false);
  });

  it('is recognised under any key of the keyring that can sign, and under no other key', async () => {
    const stored = await written([HS256]);
    expect(digestsFor([ES256, HS256]).digests.matches(presented, stored)).toBe(true); // a rotation: the old key still verifies
    expect(digestsFor([ES256]).digests.matches(presented, stored)).toBe(false);
  });

  it('is never made for a value outside the generated format, whose entropy nothing guarantees', async () => {
    const { store, digests } = digestsFor([HS256]);
    digests.record({ ...presented, value: 'correct horse battery staple' }, record);
    digests.record({ ...presented, value: generated.value.slice(0, -1) + (generated.value.endsWith('0') ? '1' : '0') }, record); // a wrong checksum
    digests.record({ ...presented, secretId: 'AAAAAAAAAAAAAAAA' }, record); // a value naming another secret
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.written).toEqual([]);
  });

  it('does not write a digest the record already holds', async () => {
    const stored = await written([HS256]);
    const { store, digests } = digestsFor([HS256]);
    digests.record(presented, stored);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.written).toEqual([]);
  });
});
