/**
 * @module dpop-proof
 * The one DPoP proof check (RFC 9449 §4.3), shared by the token endpoint and `requireBearer()`:
 * exactly one `DPoP` header (read from the raw header list: Node joins repeats), at most 4 KiB; a JWT
 * typed `dpop+jwt`, signed with an accepted asymmetric algorithm by the public `jwk` of its header (no
 * private members); `htm` and `htu` naming this request; a `jti` of at most 128 characters; `ath` the
 * hash of the access token sent with it; `iat` within `dpop.proofMaxAge` back and the clock tolerance
 * ahead, or, with nonces on, a live server `nonce` instead. Single use is the caller's last step
 * (dpop-replay.ts, or the store at the token endpoint). Imported keys are cached by thumbprint: an
 * import costs more than the signature check. Framework-free.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { compactVerify, importJWK, type KeyLike } from 'jose';
import { InvalidDpopProofError, UseDpopNonceError } from '../errors.js';
import { jwkThumbprint } from '../keys/jwk-thumbprint.js';
import type { DpopNonces } from './dpop-nonces.js';
import type { ResolvedDpopConfig } from './dpop-options.js';
import { htuMatches } from './dpop-request-url.js';

/** Longest proof accepted, in characters. */
export const MAX_PROOF_LENGTH = 4096;
/** Longest `jti` accepted. */
export const MAX_JTI_LENGTH = 128;
/** Imported proof keys kept, by algorithm and thumbprint. */
const MAX_CACHED_KEYS = 10_000;
/** JWK members only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const JWS_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The `DPoP` header of a raw header list (name/value pairs): its value, `undefined` when there is none,
 * or `null` when there are several (refused: RFC 9449 §4.3 step 1, exactly one).
 *
 * @example
 * ```ts
 * readDpopHeader(['Host', 'api.example.com', 'DPoP', 'eyJ...']) // 'eyJ...'
 * readDpopHeader(['DPoP', 'a', 'dpop', 'b']) // null
 * ```
 */
export function readDpopHeader(rawHeaders: readonly string[]): string | null | undefined {
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'dpop') {
      if (value !== undefined) return null;
      value = rawHeaders[i + 1]!;
    }
  }
  return value;
}

/** RFC 9449 §4.3 step 11: `ath`, the base64url SHA-256 of the access token. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** A proof that passed every check but single use. */
export interface CheckedProof {
  /** RFC 7638 thumbprint of the proof's key: the `cnf.jkt` of tokens bound to it. */
  readonly jkt: string;
  readonly jti: string;
}

/** What a proof is checked against. */
export interface ProofContext {
  readonly req: IncomingMessage;
  /** The access token sent with the proof (resource requests): `ath` must be its hash. */
  readonly accessToken: string | undefined;
  readonly now: Date;
  /** 400 at the token endpoint, 401 at a protected route (RFC 9449 §7.1). */
  readonly status: 400 | 401;
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** Checks proofs for one instance (see the module description). */
export class DpopProofChecker {
  readonly #keys = new Map<string, KeyLike | Uint8Array>();

  constructor(
    private readonly settings: ResolvedDpopConfig,
    private readonly clockTolerance: number,
    private readonly nonces: DpopNonces | undefined,
  ) {}

  /** Seconds a used proof must be remembered: as long as it could be accepted again. */
  get replayWindowSeconds(): number {
    const byIat = this.settings.proofMaxAge + this.clockTolerance;
    return this.nonces ? Math.max(byIat, 120 + this.clockTolerance) : byIat;
  }

  /**
   * Checks a proof (the `DPoP` header's value) for a request; resolves with its key's thumbprint and
   * `jti`. Rejects with {@link InvalidDpopProofError}, or {@link UseDpopNonceError} when nonces are on
   * and the proof lacks a live one.
   */
  async check(proof: string, context: ProofContext): Promise<CheckedProof> {
    const status = context.status;
    const refuse = (message: string): InvalidDpopProofError => new InvalidDpopProofError(message, { status });
    if (proof.length > MAX_PROOF_LENGTH) throw refuse(`The DPoP proof is longer than ${MAX_PROOF_LENGTH} characters`);
    if (!JWS_SHAPE.test(proof)) throw refuse('The DPoP proof is not a JWT');
    const [encodedHeader, encodedPayload] = proof.split('.') as [string, string, string];
    const header = decodeJson(encodedHeader);
    const claims = decodeJson(encodedPayload);
    if (!header || !claims) throw refuse('The DPoP proof is not a JWT');
    // §4.3 steps 4-7: the type, an accepted asymmetric algorithm, a public key.
    if (header.typ !== 'dpop+jwt') throw refuse('The DPoP proof must have the typ header dpop+jwt');
    const alg = header.alg;
    if (typeof alg !== 'string' || !(this.settings.algorithms as readonly string[]).includes(alg)) {
      throw refuse(`The DPoP proof's alg must be one of ${this.settings.algs}`);
    }
    const jwk = header.jwk;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw refuse('The DPoP proof has no jwk header');
    for (const member of PRIVATE_MEMBERS) {
      if (Object.prototype.hasOwnProperty.call(jwk, member)) throw refuse('The DPoP proof\'s jwk must be a public key');
    }
    // §4.3 steps 8-12: the claims, checked before the signature (cheap first).
    const { jti, htm, htu, iat, ath, nonce } = claims;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw refuse(`The DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    if (htm !== context.req.method) throw refuse('The DPoP proof is for another HTTP method (htm)');
    if (typeof htu !== 'string' || !htuMatches(context.req, htu, this.settings)) throw refuse('The DPoP proof is for another URL (htu)');
    if (context.accessToken !== undefined) {
      if (typeof ath !== 'string') throw refuse('The DPoP proof has no ath (hash of the access token)');
      if (ath !== accessTokenHash(context.accessToken)) throw refuse('The DPoP proof\'s ath is not the hash of this access token');
    }
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('The DPoP proof has no iat');
    this.#checkFreshness(iat, nonce, context);

    let jkt: string;
    try {
      jkt = jwkThumbprint(jwk as Record<string, string>);
    } catch {
      throw refuse('The DPoP proof\'s jwk is not a usable public key');
    }
    const keyId = `${alg} ${jkt}`;
    let key = this.#keys.get(keyId);
    if (key === undefined) {
      try {
        key = await importJWK({ ...(jwk as Record<string, unknown>), ext: true } as Parameters<typeof importJWK>[0], alg);
      } catch {
        throw refuse('The DPoP proof\'s jwk is not a public key of its alg');
      }
      if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.delete(this.#keys.keys().next().value!);
      this.#keys.set(keyId, key);
    }
    try {
      await compactVerify(proof, key, { algorithms: [alg] });
    } catch {
      throw refuse('The DPoP proof\'s signature does not verify with its jwk');
    }
    return { jkt, jti };
  }

  /** `iat` within `proofMaxAge` back and the clock tolerance ahead; with nonces on, a live nonce instead (RFC 9449 §11.1). */
  #checkFreshness(iat: number, nonce: unknown, context: ProofContext): void {
    if (this.nonces) {
      if (this.nonces.validUntil(nonce, context.now) === undefined) throw new UseDpopNonceError(this.nonces.current(context.now), { status: context.status });
      return;
    }
    const now = context.now.getTime() / 1000;
    const { proofMaxAge } = this.settings;
    if (iat < now - proofMaxAge || iat > now + this.clockTolerance) {
      const where = iat < now ? `more than ${proofMaxAge} s before` : `more than ${this.clockTolerance} s after`;
      throw new InvalidDpopProofError(
        `The DPoP proof's iat (${isoSeconds(iat)}) is ${where} the server's time (${isoSeconds(Math.floor(now))}): make a fresh proof for every request and check the clock`,
        { status: context.status },
      );
    }
  }

  /** The nonce to send in `DPoP-Nonce` on a success, or `undefined` when nonces are off. */
  nextNonce(now: Date): string | undefined {
    return this.nonces?.current(now);
  }
}
