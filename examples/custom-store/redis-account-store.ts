/**
 * A complete custom AccountStore over Redis, the kind of persistence a host may already run.
 * Copy it, rename the keys, and prove it with the shared contract suite:
 *
 *   import { afterEach, beforeEach, describe, expect, it } from 'vitest'
 *   import { describeAccountStore } from 'express-service-accounts/testing'
 *   describeAccountStore('RedisAccountStore', async () => { ... }, { describe, it, expect, beforeEach, afterEach })
 *
 * Layout: one JSON document per account (with its secrets, public keys and federated credentials)
 * under `<prefix>account:<clientId>`, a sorted set `<prefix>accounts` (score = createdAt) for listing,
 * one set per trusted issuer and subject, `<prefix>federated:<SHA-256 of issuer and subject>`, holding
 * the client IDs of the accounts with a live federated credential for them (`findFederatedClients`), a
 * pub/sub channel `<prefix>changes` that announces every change, so every instance drops its cached
 * status at once (`watch`), and one short-lived key per used client assertion ID,
 * `<prefix>assertion:<SHA-256 of issuer and ID>`, holding the assertion's expiry. The token deny-list:
 * one JSON document per revoked token under `<prefix>revoked-token:<tokenId>`, a sorted set
 * `<prefix>revoked-tokens` (score = expiresAt) to list and prune them, and one sorted set per client,
 * `<prefix>revoked-tokens:<clientId>`, that counts its live entries for the cap (`maxPerClient`) and
 * drops the expired ones on the client's next revocation.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  revokedTokenChangeKey,
  type AccountChangeListener,
  type AccountRecord,
  type AddKeyOptions,
  type AddKeyResult,
  type AddSecretOptions,
  type AddSecretResult,
  type AccountStore,
  type AddFederatedCredentialResult,
  type RevokeTokenOptions,
  type RevokeTokenResult,
  type FederatedCredentialRecord,
  type KeyRecord,
  type NewFederatedCredentialRecord,
  type NewAccountRecord,
  type NewKeyRecord,
  type NewSecretRecord,
  type PublicKeyJwk,
  type RevokedTokenRecord,
  type SecretRecord,
} from 'express-service-accounts';

/** What is stored: dates as epoch milliseconds. */
interface StoredSecret {
  id: string;
  hash: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** Absent until a value of it passed bcrypt (and in documents written before digests existed). */
  verifiedDigest?: string;
}
interface StoredKey {
  id: string;
  thumbprint: string;
  publicKey: PublicKeyJwk;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}
interface StoredFederated {
  id: string;
  issuer: string;
  subject: string;
  audience: string | null;
  jwksUri: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}
interface StoredAccount {
  clientId: string;
  name: string;
  clientAccountId: string | null;
  scopes: string[];
  enabled: boolean;
  createdAt: number;
  secrets: StoredSecret[];
  /** Absent in documents written before keys existed. */
  keys?: StoredKey[];
  /** Absent in documents written before federated credentials existed. */
  federated?: StoredFederated[];
}

const toKey = (k: StoredKey): KeyRecord => ({
  id: k.id,
  thumbprint: k.thumbprint,
  publicKey: { ...k.publicKey },
  createdAt: new Date(k.createdAt),
  lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt),
  revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt),
});

const toFederated = (f: StoredFederated): FederatedCredentialRecord => ({
  id: f.id,
  issuer: f.issuer,
  subject: f.subject,
  audience: f.audience,
  jwksUri: f.jwksUri,
  createdAt: new Date(f.createdAt),
  lastUsedAt: f.lastUsedAt === null ? null : new Date(f.lastUsedAt),
  revokedAt: f.revokedAt === null ? null : new Date(f.revokedAt),
});

/** Live secrets, keys and federated credentials together: what the cap counts. */
const liveCredentials = (a: StoredAccount): number =>
  [...a.secrets, ...(a.keys ?? []), ...(a.federated ?? [])].filter((c) => c.revokedAt === null).length;

/** Whether the account has a live federated credential for exactly this issuer and subject (any audience). */
const trusts = (a: StoredAccount, issuer: string, subject: string): boolean =>
  (a.federated ?? []).some((f) => f.revokedAt === null && f.issuer === issuer && f.subject === subject);

const toSecret = (s: StoredSecret): SecretRecord => ({
  id: s.id,
  hash: s.hash,
  createdAt: new Date(s.createdAt),
  lastUsedAt: s.lastUsedAt === null ? null : new Date(s.lastUsedAt),
  revokedAt: s.revokedAt === null ? null : new Date(s.revokedAt),
  ...(s.verifiedDigest !== undefined && { verifiedDigest: s.verifiedDigest }),
});

const toAccount = (a: StoredAccount): AccountRecord => ({
  clientId: a.clientId,
  name: a.name,
  clientAccountId: a.clientAccountId,
  scopes: a.scopes,
  enabled: a.enabled,
  createdAt: new Date(a.createdAt),
  secrets: a.secrets.map(toSecret),
  keys: (a.keys ?? []).map(toKey),
  federated: (a.federated ?? []).map(toFederated),
});

const newSecret = (s: NewSecretRecord): StoredSecret => ({
  id: s.id,
  hash: s.hash,
  createdAt: s.createdAt.getTime(),
  lastUsedAt: null,
  revokedAt: null,
});

interface StoredRevokedToken {
  tokenId: string;
  clientId: string | null;
  revokedAt: number;
  expiresAt: number;
}

const toRevokedToken = (t: StoredRevokedToken): RevokedTokenRecord => ({
  tokenId: t.tokenId,
  clientId: t.clientId,
  revokedAt: new Date(t.revokedAt),
  expiresAt: new Date(t.expiresAt),
});

/**
 * KEYS[1] = account key, ARGV[1] = the document read, ARGV[2] = the document to write. With KEYS[2]
 * (an index set), ARGV[3] = 'add' or 'remove' and ARGV[4] = the member: the index changes in the same
 * atomic step as the document, so it never lags behind it.
 */
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  if ARGV[3] == 'add' then redis.call('SADD', KEYS[2], ARGV[4]) end
  if ARGV[3] == 'remove' then redis.call('SREM', KEYS[2], ARGV[4]) end
  return 1
end
return 0`;

/** How an update changes an index set with the document: add or remove the account's client ID. */
interface IndexChange {
  key: string;
  op: 'add' | 'remove';
}

/** KEYS[1] = assertion key, ARGV = expiresAt, now, milliseconds to keep it. A live entry is a replay. */
const CONSUME_ONCE = `
local expiry = redis.call('GET', KEYS[1])
if expiry and tonumber(expiry) > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`;

/**
 * Adds a deny-list entry once, within its client's cap, in one atomic step. KEYS: the entry, the index,
 * the client's set. ARGV: the JSON, expiresAt, revokedAt, tokenId, the cap ('' for none), '1' when a
 * client is named. Returns the first entry's JSON when the token is already listed, 0 at the cap, 1 when stored.
 */
const REVOKE_ONCE = `
local first = redis.call('GET', KEYS[1])
if first then return first end
if ARGV[6] == '1' then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
  if ARGV[5] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 0 end
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
return 1`;

export interface RedisAccountStoreOptions {
  /** The host's Redis connection (ioredis). Not closed by the store. */
  redis: Redis;
  /** Prefix of every key, e.g. 'myapp:sa:'. */
  prefix?: string;
}

export class RedisAccountStore implements AccountStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  #subscriber: Redis | undefined;

  constructor(options: RedisAccountStoreOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'service-accounts:';
  }

  #key(clientId: string): string {
    return `${this.#prefix}account:${clientId}`;
  }

  async #read(clientId: string): Promise<StoredAccount | undefined> {
    const json = await this.#redis.get(this.#key(clientId));
    return json === null ? undefined : (JSON.parse(json) as StoredAccount);
  }

  /**
   * Read-modify-write as compare-and-set: the Lua script writes the new document only if the key still
   * holds the one `change` saw (Redis runs a script atomically), else the update is retried. Unlike
   * WATCH/MULTI, this stays correct when concurrent calls share one connection. `change` returns
   * `undefined` to write nothing.
   */
  async #update(
    clientId: string,
    change: (account: StoredAccount) => StoredAccount | undefined,
    index?: (before: StoredAccount, after: StoredAccount) => IndexChange | undefined,
  ): Promise<{ before: StoredAccount; after: StoredAccount | undefined } | undefined> {
    const key = this.#key(clientId);
    for (let attempt = 0; attempt < 50; attempt++) {
      const json = await this.#redis.get(key);
      if (json === null) return undefined;
      const before = JSON.parse(json) as StoredAccount;
      const after = change(before);
      if (after === undefined) return { before, after };
      const indexChange = index?.(before, after);
      const written = indexChange
        ? await this.#redis.eval(COMPARE_AND_SET, 2, key, indexChange.key, json, JSON.stringify(after), indexChange.op, clientId)
        : await this.#redis.eval(COMPARE_AND_SET, 1, key, json, JSON.stringify(after));
      if (written === 1) return { before, after };
    }
    throw new Error(`RedisAccountStore: too much contention updating ${clientId}`);
  }

  async #announce(clientId: string): Promise<void> {
    await this.#redis.publish(`${this.#prefix}changes`, clientId);
  }

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    const account: StoredAccount = {
      clientId: input.clientId,
      name: input.name,
      clientAccountId: input.clientAccountId,
      scopes: [...input.scopes],
      enabled: true,
      createdAt: input.createdAt.getTime(),
      secrets: [newSecret(input.secret)],
      keys: [],
      federated: [],
    };
    // SET NX: creating an existing client ID fails instead of overwriting it.
    const created = await this.#redis.set(this.#key(input.clientId), JSON.stringify(account), 'NX');
    if (created !== 'OK') throw new Error(`Account ${input.clientId} already exists`);
    await this.#redis.zadd(`${this.#prefix}accounts`, account.createdAt, account.clientId);
    await this.#announce(account.clientId);
    return toAccount(account);
  }

  async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    const account = await this.#read(clientId);
    return account && toAccount(account);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const ids = await this.#redis.zrange(`${this.#prefix}accounts`, 0, '-1');
    if (ids.length === 0) return [];
    const docs = await this.#redis.mget(ids.map((id) => this.#key(id)));
    return docs.filter((doc): doc is string => doc !== null).map((doc) => toAccount(JSON.parse(doc) as StoredAccount));
  }

  async setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    const updated = (await this.#update(clientId, (a) => ({ ...a, enabled })))?.after;
    if (updated) await this.#announce(clientId);
    return updated && toAccount(updated);
  }

  /** The count and the insert are one compare-and-set: a concurrent add makes this one re-read and recount. */
  async addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    const stored = newSecret(secret);
    const updated = await this.#update(clientId, (a) =>
      liveCredentials(a) >= options.maxLiveCredentials
        ? undefined
        : { ...a, secrets: [...a.secrets, stored] },
    );
    if (!updated) return undefined;
    if (!updated.after) return 'limit_reached';
    await this.#announce(clientId);
    return toSecret(stored);
  }

  async revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    let revoked: StoredSecret | undefined;
    await this.#update(clientId, (a) => {
      revoked = undefined; // a retried update starts over
      return {
        ...a,
        secrets: a.secrets.map((s) => {
          if (s.id !== secretId) return s;
          revoked = { ...s, revokedAt: s.revokedAt ?? at.getTime() };
          return revoked;
        }),
      };
    });
    if (!revoked) return undefined;
    await this.#announce(clientId);
    return toSecret(revoked);
  }

  async recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    await this.#update(clientId, (a) => ({
      ...a,
      secrets: a.secrets.map((s) => (s.id === secretId ? { ...s, lastUsedAt: at.getTime() } : s)),
    }));
  }

  /** Bookkeeping, like recordSecretUse: not announced. */
  async recordSecretDigest(clientId: string, secretId: string, digest: string): Promise<void> {
    await this.#update(clientId, (a) => ({
      ...a,
      secrets: a.secrets.map((s) => (s.id === secretId ? { ...s, verifiedDigest: digest } : s)),
    }));
  }

  /** Like addSecret: the twin check, the count and the insert are one compare-and-set. */
  async addKey(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult> {
    const stored: StoredKey = { ...key, createdAt: key.createdAt.getTime(), lastUsedAt: null, revokedAt: null };
    let refusal: 'duplicate' | 'limit_reached' | undefined;
    const updated = await this.#update(clientId, (a) => {
      const keys = a.keys ?? [];
      refusal = keys.some((k) => k.revokedAt === null && k.thumbprint === key.thumbprint)
        ? 'duplicate'
        : liveCredentials(a) >= options.maxLiveCredentials
          ? 'limit_reached'
          : undefined;
      return refusal ? undefined : { ...a, keys: [...keys, stored] };
    });
    if (!updated) return undefined;
    if (!updated.after) return refusal;
    await this.#announce(clientId);
    return toKey(stored);
  }

  async revokeKey(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined> {
    let revoked: StoredKey | undefined;
    await this.#update(clientId, (a) => {
      revoked = undefined; // a retried update starts over
      return {
        ...a,
        keys: (a.keys ?? []).map((k) => {
          if (k.id !== keyId) return k;
          revoked = { ...k, revokedAt: k.revokedAt ?? at.getTime() };
          return revoked;
        }),
      };
    });
    if (!revoked) return undefined;
    await this.#announce(clientId);
    return toKey(revoked);
  }

  async recordKeyUse(clientId: string, keyId: string, at: Date): Promise<void> {
    await this.#update(clientId, (a) => ({
      ...a,
      keys: (a.keys ?? []).map((k) => (k.id === keyId ? { ...k, lastUsedAt: at.getTime() } : k)),
    }));
  }

  /** The index set of the accounts that trust this issuer for this subject. */
  #trustKey(issuer: string, subject: string): string {
    return `${this.#prefix}federated:${createHash('sha256').update(JSON.stringify([issuer, subject])).digest('base64url')}`;
  }

  /** Like addKey: the twin check, the count, the insert and the index entry are one compare-and-set. */
  async addFederatedCredential(
    clientId: string,
    credential: NewFederatedCredentialRecord,
    options: AddKeyOptions,
  ): Promise<AddFederatedCredentialResult> {
    const stored: StoredFederated = { ...credential, createdAt: credential.createdAt.getTime(), lastUsedAt: null, revokedAt: null };
    let refusal: 'duplicate' | 'limit_reached' | undefined;
    const updated = await this.#update(
      clientId,
      (a) => {
        const federated = a.federated ?? [];
        const twin = federated.some(
          (f) => f.revokedAt === null && f.issuer === credential.issuer && f.subject === credential.subject && f.audience === credential.audience,
        );
        refusal = twin ? 'duplicate' : liveCredentials(a) >= options.maxLiveCredentials ? 'limit_reached' : undefined;
        return refusal ? undefined : { ...a, federated: [...federated, stored] };
      },
      () => ({ key: this.#trustKey(credential.issuer, credential.subject), op: 'add' }),
    );
    if (!updated) return undefined;
    if (!updated.after) return refusal;
    await this.#announce(clientId);
    return toFederated(stored);
  }

  /** Leaves the index when no other live credential of the account trusts the same issuer and subject. */
  async revokeFederatedCredential(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined> {
    let revoked: StoredFederated | undefined;
    await this.#update(
      clientId,
      (a) => {
        revoked = undefined; // a retried update starts over
        return {
          ...a,
          federated: (a.federated ?? []).map((f) => {
            if (f.id !== credentialId) return f;
            revoked = { ...f, revokedAt: f.revokedAt ?? at.getTime() };
            return revoked;
          }),
        };
      },
      (_before, after) =>
        revoked && !trusts(after, revoked.issuer, revoked.subject) ? { key: this.#trustKey(revoked.issuer, revoked.subject), op: 'remove' } : undefined,
    );
    if (!revoked) return undefined;
    await this.#announce(clientId);
    return toFederated(revoked);
  }

  async recordFederatedCredentialUse(clientId: string, credentialId: string, at: Date): Promise<void> {
    await this.#update(clientId, (a) => ({
      ...a,
      federated: (a.federated ?? []).map((f) => (f.id === credentialId ? { ...f, lastUsedAt: at.getTime() } : f)),
    }));
  }

  /** The index set names the candidates; each account's own document has the last word (exact match, live). */
  async findFederatedClients(issuer: string, subject: string, limit: number): Promise<string[]> {
    const ids = await this.#redis.smembers(this.#trustKey(issuer, subject));
    if (ids.length === 0 || limit <= 0) return [];
    const docs = await this.#redis.mget(ids.map((id) => this.#key(id)));
    return docs
      .flatMap((doc) => (doc === null ? [] : [JSON.parse(doc) as StoredAccount]))
      .filter((a) => trusts(a, issuer, subject))
      .sort((x, y) => x.createdAt - y.createdAt || (x.clientId < y.clientId ? -1 : x.clientId > y.clientId ? 1 : 0))
      .slice(0, limit)
      .map((a) => a.clientId);
  }

  /** One script, atomic in Redis; the key expires with the assertion, so nothing needs sweeping. */
  async consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    const digest = createHash('sha256').update(JSON.stringify([issuer, jti])).digest('base64url');
    const keep = Math.max(1, expiresAt.getTime() - now.getTime());
    const args = [String(expiresAt.getTime()), String(now.getTime()), String(keep)];
    return (await this.#redis.eval(CONSUME_ONCE, 1, `${this.#prefix}assertion:${digest}`, ...args)) === 1;
  }

  async revokeToken(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult> {
    const index = `${this.#prefix}revoked-tokens`;
    const stored: StoredRevokedToken = { ...record, revokedAt: record.revokedAt.getTime(), expiresAt: record.expiresAt.getTime() };
    const keys = [`${this.#prefix}revoked-token:${record.tokenId}`, index, `${index}:${record.clientId ?? ''}`];
    const args = [JSON.stringify(stored), String(stored.expiresAt), String(stored.revokedAt), record.tokenId];
    args.push(options?.maxPerClient === undefined ? '' : String(options.maxPerClient), record.clientId === null ? '0' : '1');
    const outcome = (await this.#redis.eval(REVOKE_ONCE, keys.length, ...keys, ...args)) as string | number;
    // A token already listed keeps its first record; at the cap nothing is stored.
    if (typeof outcome === 'string') return toRevokedToken(JSON.parse(outcome) as StoredRevokedToken);
    if (outcome === 0) return 'limit_reached';
    // Entries whose token has expired are forgotten on each revocation.
    const expired = (await this.#redis.zrangebyscore(index, '-inf', stored.revokedAt)).filter((id) => id !== record.tokenId);
    if (expired.length > 0) {
      await this.#redis.del(...expired.map((id) => `${this.#prefix}revoked-token:${id}`));
      await this.#redis.zrem(index, ...expired);
    }
    await this.#announce(revokedTokenChangeKey(record));
    return { ...record };
  }

  async listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    const ids = await this.#redis.zrangebyscore(`${this.#prefix}revoked-tokens`, `(${now.getTime()}`, '+inf');
    if (ids.length === 0) return [];
    const documents = await this.#redis.mget(...ids.map((id) => `${this.#prefix}revoked-token:${id}`));
    return documents.flatMap((json) => (json === null ? [] : [toRevokedToken(JSON.parse(json) as StoredRevokedToken)]));
  }

  async watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
    // A subscribed connection can do nothing else: use a dedicated duplicate.
    const subscriber = (this.#subscriber ??= this.#redis.duplicate());
    const channel = `${this.#prefix}changes`;
    const onMessage = (from: string, clientId: string): void => {
      if (from === channel) listener(clientId);
    };
    // After a reconnect, messages sent meanwhile are lost: tell the core anything may have changed.
    const onReady = (): void => listener('*');
    subscriber.on('message', onMessage);
    subscriber.on('ready', onReady);
    await subscriber.subscribe(channel);
    return async () => {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
    };
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber) await subscriber.quit();
  }
}
