/**
 * @module client-credentials-check
 * Checks a presented client ID and secret against the account cache and the secret verifier.
 * Unknown client, wrong secret, revoked secret and disabled account give one timing path: exactly one
 * bcrypt compare each (against a dummy hash when nothing matches). Framework-free: the client
 * authentication step and the passport strategies call it.
 */
import { LRUCache } from 'lru-cache';
import type { ClientAuthenticationFailure, SecretChecksBusyError } from '../errors.js';
import { parseSecret } from '../secrets/generate-credentials.js';
import type { SecretVerifier } from '../secrets/secret-verifier.js';
import type { AccountCache } from '../store/account-cache.js';
import type { AccountRecord, SecretRecord } from '../store/account-store.js';

const MAX_CLIENT_ID_LENGTH = 256;

/** A client that authenticated: its account and the secret it used. */
export interface AuthenticatedClient {
  readonly account: AccountRecord;
  readonly secret: SecretRecord;
}

/** Why client authentication failed, and the account when the client ID was known (for the audit event). */
export interface ClientFailure {
  readonly reason: ClientAuthenticationFailure;
  readonly account?: AccountRecord;
}

/** A presented pair that could be ours (so checking it costs a bcrypt compare): parsed once. */
export interface SecretCandidate {
  readonly clientId: string;
  readonly value: string;
  /** The secret ID the value names. */
  readonly secretId: string;
}

/** The candidate, or `undefined` when the value fails its own format or checksum (it cannot be ours). */
export function secretCandidate(clientId: string, value: string): SecretCandidate | undefined {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) return undefined;
  const parsed = parseSecret(value);
  return parsed ? { clientId, value, secretId: parsed.secretId } : undefined;
}

/** What a check decided. */
export type CheckOutcome = { readonly ok: true; readonly client: AuthenticatedClient } | ({ readonly ok: false } & ClientFailure);

const isLive = (account: AccountRecord | undefined, secret: SecretRecord | undefined): account is AccountRecord =>
  account !== undefined && account.enabled && secret !== undefined && secret.revokedAt === null;

function findSecret(account: AccountRecord | undefined, id: string): SecretRecord | undefined {
  if (account) for (const secret of account.secrets) if (secret.id === id) return secret;
  return undefined;
}

/** Most secrets {@link ClientCredentialsCheck.isKnownSecret} can recognise (as many as the verifier remembers). */
const MAX_KNOWN_SECRETS = 10_000;

const knownKey = (candidate: SecretCandidate): string => `${candidate.clientId}\u0000${candidate.secretId}`;

/** See the module description. One per token endpoint. */
export class ClientCredentialsCheck {
  /** The stored hash of each secret that passed bcrypt here, by client ID and secret ID (a secret's hash never changes). */
  readonly #verifiedHashes = new LRUCache<string, string>({ max: MAX_KNOWN_SECRETS });

  constructor(
    private readonly accounts: AccountCache,
    private readonly secrets: SecretVerifier,
  ) {}

  /**
   * The fast path of a repeat client: the account is in the cache, the secret is live and this exact
   * value passed bcrypt here recently. Synchronous; `undefined` when it cannot decide, and then
   * {@link verify} decides. It never answers a failure, so every failure keeps the timing of one bcrypt compare.
   */
  remembered(candidate: SecretCandidate): AuthenticatedClient | undefined {
    const account = this.accounts.peek(candidate.clientId)?.account;
    const secret = findSecret(account, candidate.secretId);
    if (!isLive(account, secret) || !this.secrets.isRemembered(candidate.value, secret!.hash)) return undefined;
    return { account, secret: secret! };
  }

  /**
   * Whether this exact value passed bcrypt here recently as this client's secret, even when the account
   * is not in the cache (its entry expired, or a change to the account dropped it). Such a value is not
   * a guess; whether the secret is still live is decided once the account is read. Synchronous.
   */
  isKnownSecret(candidate: SecretCandidate): boolean {
    const hash = this.#verifiedHashes.get(knownKey(candidate));
    return hash !== undefined && this.secrets.isRemembered(candidate.value, hash);
  }

  /**
   * Reads the candidate's account into the cache: one store call, shared by concurrent requests.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503)
   */
  async load(candidate: SecretCandidate): Promise<void> {
    await this.accounts.get(candidate.clientId);
  }

  /**
   * The refusal {@link verify} would meet in the bcrypt gate now, or `undefined`. Asked before the store
   * read, so a flooding address or client ID whose share of the queue is full costs the least work.
   */
  busy(candidate: SecretCandidate, address: string | undefined): SecretChecksBusyError | undefined {
    return this.secrets.refusal({ address, clientId: candidate.clientId });
  }

  /**
   * Checks the pair against the store. `address` is the client's address, for the bcrypt gate's fair
   * share per address and per client ID.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503)
   * @throws {SecretChecksBusyError} the gate is full for this address or client ID (→ 503)
   */
  async verify(candidate: SecretCandidate, address: string | undefined): Promise<CheckOutcome> {
    const account = await this.accounts.get(candidate.clientId);
    const secret = findSecret(account, candidate.secretId);
    const keys = { address, clientId: candidate.clientId, known: account !== undefined };
    const matches = await this.secrets.verify(candidate.value, secret?.hash, isLive(account, secret), keys);
    if (!account) return { ok: false, reason: 'unknown_client' };
    if (!secret || !matches) return { ok: false, reason: 'wrong_secret', account };
    if (secret.revokedAt !== null) return { ok: false, reason: 'revoked_secret', account };
    if (!account.enabled) return { ok: false, reason: 'disabled_account', account };
    this.#verifiedHashes.set(knownKey(candidate), secret.hash);
    return { ok: true, client: { account, secret } };
  }
}
