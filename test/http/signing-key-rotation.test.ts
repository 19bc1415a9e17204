/**
 * Rotating the signing key across several instances, step by step as docs/rotation.md ("Rotating the
 * signing key") lays it out: during each rolling deploy, instances of the step before and of the step
 * after serve side by side over one store, and neither refuses a token the other issued (CONTRACT §6:
 * "keys rotate without rejecting live tokens"). At the end, a token of the removed key is refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, type SigningKeyOptions } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';

/** The keyring of each deploy the runbook asks for, in order, as the key names it uses (`old`, `new`). */
function documentedSteps(): string[][] {
  const text = readFileSync(join(__dirname, '..', '..', 'docs', 'rotation.md'), 'utf8');
  const section = /## Rotating the signing key\n([\s\S]*?)(?=\n## |$)/.exec(text)?.[1] ?? '';
  return [...section.matchAll(/`signingKeys: \[([a-z, ]+)\]`/g)].map((match) => match[1]!.split(',').map((name) => name.trim()));
}

const es256 = (): SigningKeyOptions => ({ alg: 'ES256', key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
const hs256 = (label: string): SigningKeyOptions => ({ alg: 'HS256', key: `rotation test key ${label} 0123456789abcdef` });

describe.each([
  ['ES256', () => ({ old: es256(), new: es256() })],
  ['HS256', () => ({ old: hs256('old'), new: hs256('new') })],
] as const)('rotating an %s signing key as docs/rotation.md says', (_alg, makeKeys) => {
  it('refuses no token during any rolling deploy, and refuses the old key once it is removed', async () => {
    const steps = documentedSteps();
    expect(steps.length, 'the runbook names each deploy as `signingKeys: [...]`').toBeGreaterThanOrEqual(2);
    expect(steps.at(-1)).toEqual(['new']);
    const keys = makeKeys();
    const store = new MemoryAccountStore();
    const instance = (names: readonly string[]) => createTestApp({ store, signingKeys: names.map((name) => keys[name as 'old' | 'new']) });
    const running = instance(['old']);
    const gateway = await running.sa.admin.createAccount({ name: 'gateway', scopes: ['token:introspect'] });
    const client = await running.sa.admin.createAccount({ name: 'client' });
    const accepted = async (by: ReturnType<typeof instance>, token: string) => {
      const whoami = await request(by.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
      const introspection = await request(by.app).post('/oauth/introspect').set('Authorization', basicHeader(gateway.clientId, gateway.secret.value)).type('form').send({ token });
      return { status: whoami.status, active: introspection.body.active as boolean };
    };

    let before = running;
    let oldToken = await issueToken(before.app, client.clientId, client.secret.value);
    for (const names of steps) {
      const after = instance(names);
      // Mid-deploy: a client gets its token from one instance and calls another.
      for (const [issuer, checker] of [[before, after], [after, before]] as const) {
        const token = await issueToken(issuer.app, client.clientId, client.secret.value);
        expect(await accepted(checker, token), `step ${names.join(', ')}`).toEqual({ status: 200, active: true });
      }
      if (names.includes('old')) expect(await accepted(after, oldToken)).toEqual({ status: 200, active: true });
      before = after;
      if (names[0] === 'old') oldToken = await issueToken(after.app, client.clientId, client.secret.value);
    }
    // The old key is gone: its tokens are refused, 401 invalid_token, and introspected as inactive.
    expect(await accepted(before, oldToken)).toEqual({ status: 401, active: false });
  });
});
