/**
 * @module key-pair-method
 * The key-pair method (`private_key_jwt`, RFC 7523 §2.2 and §3, with the audience rule of the update
 * to RFC 7523 on client authentication audiences), decided wholly here: a client assertion whose `iss`
 * and `sub` are the client ID, whose `aud` is this server's issuer identifier and nothing else (or the
 * token endpoint URL, when `acceptTokenEndpointAudience` allows it for an untyped assertion), with
 * `exp` (at most `maxLifetime` seconds ahead, plus the clock tolerance), a `jti`, `iat` and `nbf` when
 * present not in the future (assertion-rules.ts), signed by one of the account's registered public
 * keys with an algorithm of that key's type (at most `MAX_CANDIDATE_KEYS` of them tried: the bounded
 * key-try loop of key-tries.ts). `none`, HMAC and every other symmetric algorithm, and any `crit` header,
 * are refused. Then the account must be enabled, and the `jti` is recorded once in the store: a
 * replay, on this instance or any other sharing the store, is refused. A refusal names the rule that
 * failed (assertion-rules.ts), for the audit only.
 *
 * Checked against the failure limiter, not counted in advance: a signature cannot be guessed, and
 * checking one costs no bcrypt, so a burst gains nothing by passing together. A failure is counted
 * when it is decided, and answered 429 once past the limit.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord, KeyRecord, PublicKeyJwk } from '../store/account-store.js';
import { hasExpired } from '../store/credential-kinds.js';
import {
  claimRefusalOf,
  firstUse,
  hasUsableJti,
  isAcceptedAudience,
  timesRefusalOf,
  tokenEndpointAudienceOf,
  unverifiedRefusal,
  type AssertionReplayParts,
} from './assertion-rules.js';
import { keyAttemptOf, tryCandidateKeys, type KeyAttempt } from './key-tries.js';
import type { AssertionRefusal } from '../errors.js';
import type { TokenEndpointAudienceSetting } from '../token-endpoint-audience.js';
import type { Attempt, Attempts } from './client-authenticator.js';
import { isClientIdLookup, type AuthenticationDone, type KeyPairCredentials } from './presented-credentials.js';

const EC_ALGORITHMS = ['ES256'] as const;
const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
// RFC 9864 §2: `Ed25519` is the fully specified name of EdDSA with an Ed25519 key (openid-client 6 and
// oauth4webapi sign with it); `EdDSA` is the older, polymorphic one. Both are accepted, for Ed25519 keys only.
const OKP_ALGORITHMS = ['EdDSA', 'Ed25519'] as const;

/** Every algorithm an assertion may be signed with, for the RFC 8414 metadata (asymmetric only). */
export const ASSERTION_SIGNING_ALGORITHMS: readonly string[] = [...EC_ALGORITHMS, ...RSA_ALGORITHMS, ...OKP_ALGORITHMS];

// RFC 7518 §3.4: an ES256 signature is R and S, 32 bytes each, concatenated: 86 base64url characters.
const ES256_SIGNATURE_CHARACTERS = 86;

/**
 * Whether an ES256 assertion's signature has the JWS form. The ASN.1 DER form (70 to 72 bytes), which
 * OpenSSL, Go's `ecdsa.SignASN1` and Java's `SHA256withECDSA` produce, is refused as malformed before
 * any key is tried: no key could verify it, and trying them would audit it as an unknown key.
 */
function hasJwsSignatureForm(assertion: string, alg: string): boolean {
  return alg !== 'ES256' || assertion.length - assertion.lastIndexOf('.') - 1 === ES256_SIGNATURE_CHARACTERS;
}

/** The algorithms a key of this type may sign with: its type pins them, so an attacker cannot pick another. */
function algorithmsOf(key: PublicKeyJwk): readonly string[] {
  return key.kty === 'EC' ? EC_ALGORITHMS : key.kty === 'RSA' ? RSA_ALGORITHMS : OKP_ALGORITHMS;
}

/**
 * The client a key-pair assertion names (its `iss`, equal to its `sub`), from its unverified claims:
 * whose keys to try, and what the failure limiter counts under. `undefined` when it names none.
 *
 * @example
 * ```ts
 * import { decodeJwt } from 'jose'
 *
 * declare const clientAssertion: string // the `client_assertion` parameter of a token request
 * const claims = decodeJwt(clientAssertion)
 * const clientId = assertionClientId(claims) // such as 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k'; else undefined
 * ```
 */
export function assertionClientId(payload: { readonly iss?: unknown; readonly sub?: unknown }): string | undefined {
  const { iss, sub } = payload;
  return typeof iss === 'string' && iss === sub && isClientIdLookup(iss) ? iss : undefined;
}

/** What the check needs besides the assertion and the account. */
export interface KeyAssertionOptions {
  /** This server's issuer identifier: the audience required (see `tokenEndpoint` for the one other). */
  readonly issuer: string;
  /** Seconds of clock skew allowed on `exp`, `nbf` and `iat`. */
  readonly clockTolerance: number;
  /** Most seconds `exp` may lie ahead of now, beyond the clock tolerance. */
  readonly maxLifetime: number;
  /** The token endpoint URL, also accepted as the sole audience of an untyped assertion (`acceptTokenEndpointAudience`); else absent. */
  readonly tokenEndpoint?: string | undefined;
  readonly now: Date;
}

/** A verified assertion: the key that signed it, and its claims (its `jti` is then recorded once). */
export interface VerifiedAssertion {
  readonly key: KeyRecord;
  readonly payload: JWTPayload;
}

/**
 * The signature and claims of a key-pair assertion, checked against an account's public keys.
 * Imported public keys are kept (bounded) by thumbprint, so a repeat client's key is parsed once.
 *
 * @example
 * ```ts
 * declare const assertion: string // the `client_assertion` parameter of a token request
 * const checker = new KeyAssertionChecker()
 * const outcome = await checker.verify(assertion, account, { issuer, clockTolerance: 5, maxLifetime: 300, now: new Date() })
 * if ('failure' in outcome) console.log(outcome.failure)
 * ```
 */
export class KeyAssertionChecker {
  readonly #imported = new LRUCache<string, KeyObject>({ max: 10_000 });

  #keyObject(key: KeyRecord): KeyObject {
    let imported = this.#imported.get(key.thumbprint);
    if (!imported) {
      imported = createPublicKey({ key: key.publicKey as unknown as import('node:crypto').JsonWebKey, format: 'jwk' });
      this.#imported.set(key.thumbprint, imported);
    }
    return imported;
  }

  /**
   * Verifies `assertion` against the account's keys whose type allows its `alg`, under the bounded
   * key-try loop (key-tries.ts): the key its `kid` names (by key ID or thumbprint) when it names one, else
   * every such key, refused untried when more than `MAX_CANDIDATE_KEYS` live keys would be tried.
   * Live keys first; a revoked key only to tell the audit why (`revoked_key`), within the same budget.
   */
  async verify(assertion: string, account: AccountRecord, options: KeyAssertionOptions): Promise<VerifiedAssertion | { failure: AssertionRefusal }> {
    let alg: unknown;
    let kid: unknown;
    let crit: unknown;
    let typ: unknown;
    try {
      ({ alg, kid, crit, typ } = decodeProtectedHeader(assertion));
    } catch {
      return { failure: 'invalid_assertion' };
    }
    // RFC 7515 §4.1.11: this server understands no header extension, so any `crit` is refused.
    if (typeof alg !== 'string' || crit !== undefined || !ASSERTION_SIGNING_ALGORITHMS.includes(alg)) return { failure: 'invalid_assertion' };
    if (!hasJwsSignatureForm(assertion, alg)) return { failure: 'invalid_assertion' };
    const keys = (account.keys ?? []).filter((key) => algorithmsOf(key.publicKey).includes(alg));
    const named = (key: KeyRecord, id: string): boolean => key.id === id || key.thumbprint === id;
    // The rule a key that made the signature found broken (the search ends there): for the audit reason.
    let refusal: AssertionRefusal = 'invalid_assertion';
    const outcome = await tryCandidateKeys(
      keys,
      {
        kid,
        named,
        // A client may name its key by an ID of its own: then every key of the account is a candidate.
        unnamedFallsBack: true,
        counts: (key) => key.revokedAt === null,
      },
      (key) => this.#attempt(assertion, key, { alg, typ }, account.clientId, options, (reason) => (refusal = reason)),
    );
    if (!('key' in outcome)) {
      if (outcome.failure === 'too_many_keys') return { failure: 'invalid_assertion' };
      if (outcome.failure === 'not_verified' && outcome.signed) return { failure: refusal };
      return { failure: unverifiedRefusal(typeof kid === 'string' && keys.some((key) => named(key, kid))) };
    }
    if (outcome.key.revokedAt !== null) return { failure: 'revoked_key' };
    return { key: outcome.key, payload: outcome.verified };
  }

  /**
   * What `key` says of the assertion: its payload when it verifies the signature and every claim holds;
   * when the signature verifies and a claim does not, `refuse` is told which rule it broke.
   */
  async #attempt(
    assertion: string,
    key: KeyRecord,
    header: { readonly alg: string; readonly typ: unknown },
    clientId: string,
    options: KeyAssertionOptions,
    refuse: (reason: AssertionRefusal) => void,
  ): Promise<KeyAttempt<JWTPayload>> {
    // A revoked key that made the signature says so first: fixing a claim would only meet that refusal.
    const refused = (reason: AssertionRefusal): 'refused' => (refuse(key.revokedAt !== null ? 'revoked_key' : reason), 'refused');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(assertion, this.#keyObject(key), {
        algorithms: [header.alg],
        issuer: clientId,
        subject: clientId,
        requiredClaims: ['exp', 'jti'],
        currentDate: options.now,
        clockTolerance: options.clockTolerance,
      }));
    } catch (error) {
      const attempt = keyAttemptOf(error);
      return attempt === 'refused' ? refused(claimRefusalOf(error)) : attempt;
    }
    const { aud, exp, iat, jti } = payload;
    // The issuer identifier as the sole audience, never a list with others; the token endpoint's URL
    // only when allowed, and never for an explicitly typed assertion.
    if (!isAcceptedAudience(aud, header.typ, options)) return refused('wrong_audience');
    if (!hasUsableJti(jti, true)) return refused('invalid_assertion');
    const times = timesRefusalOf({ exp, iat }, options);
    if (times) return refused(times);
    return { verified: payload };
  }
}

/** What the key-pair method works with, built once per token endpoint. */
export interface KeyPairMethodParts {
  readonly attempts: Attempts;
  readonly accounts: AccountCache;
  /** Where each `jti` is recorded once; a store without key credentials accepts no assertion. */
  readonly replays: AssertionReplayParts;
  /**
   * The issuer identifier (the audience of client assertions), the clock tolerance, the longest
   * assertion lifetime accepted, in seconds, and whether the token endpoint URL is accepted as an
   * audience too.
   */
  readonly rules: { readonly issuer: string; readonly clockTolerance: number; readonly maxLifetime: number; readonly tokenEndpointAudience: TokenEndpointAudienceSetting };
  readonly now: () => Date;
}

/** See the module description. */
export class KeyPairMethod {
  readonly #parts: KeyPairMethodParts;
  readonly #checker = new KeyAssertionChecker();
  /**
   * The issuer identifier's origin, from which the token endpoint URL is derived: only with
   * `acceptTokenEndpointAudience: true`, which the configuration accepts only for an issuer that is a
   * URL. Any other issuer is a plain string (docs/configuration.md) and is never parsed.
   */
  readonly #issuerOrigin: string;

  constructor(parts: KeyPairMethodParts) {
    this.#parts = parts;
    this.#issuerOrigin = parts.rules.tokenEndpointAudience === true ? new URL(parts.rules.issuer).origin : '';
  }

  /**
   * Authenticates a request that presented a key-pair assertion. `mountPath` is where the token router
   * is mounted (`req.baseUrl`): the token endpoint URL is derived from it.
   */
  authenticate(credentials: KeyPairCredentials, address: string | undefined, done: AuthenticationDone, mountPath?: string): void {
    const asserted = credentials.claims && assertionClientId(credentials.claims);
    const attempt: Attempt = { credentials, clientId: credentials.clientId ?? asserted, address, done };
    const { attempts } = this.#parts;
    attempts.checked(attempt, () => {
      // The client_id sent beside an assertion must name the same client (RFC 7521 §4.2).
      if (asserted === undefined || (credentials.clientId !== undefined && credentials.clientId !== asserted)) return attempts.fail(attempt, 'invalid_assertion');
      const { replays, rules } = this.#parts;
      const undecided = (err: unknown): void => attempts.undecided(attempt, err);
      this.#parts.accounts.get(asserted).then((account) => {
        if (!account) return attempts.fail(attempt, 'unknown_client');
        const now = this.#parts.now();
        const { issuer, clockTolerance, maxLifetime, tokenEndpointAudience } = rules;
        const tokenEndpoint = tokenEndpointAudienceOf(tokenEndpointAudience, this.#issuerOrigin, mountPath);
        this.#checker.verify(credentials.assertion, account, { issuer, clockTolerance, maxLifetime, tokenEndpoint, now }).then((outcome) => {
          if ('failure' in outcome) return attempts.fail(attempt, outcome.failure, account);
          // Past its expiresAt, the key that made the signature is refused like a revoked one.
          if (hasExpired(outcome.key, now.getTime())) return attempts.fail(attempt, 'expired_credential', account);
          if (!account.enabled) return attempts.fail(attempt, 'disabled_account', account);
          // A store without key credentials cannot make an assertion single-use: it accepts none.
          if (!replays.store.consumeAssertionId) return attempts.fail(attempt, 'invalid_assertion', account);
          firstUse(replays, asserted, outcome.payload, now).then((first) => {
            if (!first) return attempts.fail(attempt, 'replayed_assertion', account);
            attempts.succeed({ account, credential: { kind: 'key', id: outcome.key.id } }, done, attempt);
          }, undecided);
        }, undecided);
      }, undecided);
    });
  }
}
