/**
 * @module dpop-proof
 * The one DPoP proof check (RFC 9449 §4.3), shared by the token endpoint and `requireBearer()`:
 * exactly one `DPoP` header (Node joins repeats: a joined value sends us to the raw header list), at most 4 KiB; a JWT
 * typed `dpop+jwt`, signed with an accepted asymmetric algorithm by the public `jwk` of its header (no
 * private members); `htm` and `htu` naming this request; a `jti` of at most 128 characters; `ath` the
 * hash of the access token sent with it; `iat` within `dpop.proofMaxAge` back and the clock tolerance
 * ahead, or, where nonces are required (`dpop.nonceAt`), a live server `nonce` instead. Single use is the caller's last step
 * (dpop-replay.ts, or the store at the token endpoint). Imported keys are cached by proof header
 * (which holds the key), with how to verify their signatures: an import costs more than the signature
 * check. The per-request work is kept small (the last header and the last token's `ath` remembered,
 * small functions), as one signature check is already most of a request's cost. The signature is checked with
 * node:crypto, synchronously: jose's `compactVerify` would add a promise and a second parse of the
 * header per request, on a path whose budget is one signature check. Framework-free.
 */
import { constants, createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { InvalidDpopProofError, UseDpopNonceError } from '../errors.js';
import { jwkThumbprint } from '../keys/jwk-thumbprint.js';
import { rsaKeyProblem } from '../keys/parse-public-key.js';
import type { DpopNonces } from './dpop-nonces.js';
import type { ResolvedDpopConfig } from './dpop-options.js';
import { htuMatches } from './dpop-request-url.js';

/**
 * The largest RSA modulus a proof's key may have, in bits, checked before any signature like the
 * exponent: a verify's cost grows about with the square of the modulus (8192 bits: some ten times the
 * work of 2048, measured; the ~10,000 bits a 4 KiB proof could carry, half as much again).
 */
const MAX_RSA_BITS = 8192;

/** Longest proof accepted, in characters. */
export const MAX_PROOF_LENGTH = 4096;
/** Longest `jti` accepted. */
export const MAX_JTI_LENGTH = 128;
/** Proof headers (with their imported keys) kept. */
const MAX_CACHED_KEYS = 10_000;
/** JWK members only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
/**
 * Scratch bytes of the proof being checked, written again for every proof: a check is synchronous
 * and node:crypto's verify copies what it is given, so nothing outlives it. Writing into them costs
 * no allocation, where `Buffer.from` and `TextEncoder` make new bytes per part.
 * The signing input (RFC 7515 §5.2 step 8) in UTF-8, as jose makes it: up to 3 bytes a character.
 */
const SIGNING_INPUT = Buffer.alloc(3 * MAX_PROOF_LENGTH);
/** A base64url part, decoded: at most 3 bytes per 4 characters. */
const DECODED = Buffer.alloc(MAX_PROOF_LENGTH);
/** The signature, decoded. */
const SIGNATURE = Buffer.alloc(MAX_PROOF_LENGTH);
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
    // Any case (RFC 9110 §5.1); the first letter sorts out Host, Date and the like without lower-casing.
    if (name.length === 4 && (name.charCodeAt(0) | 0x20) === 0x64 && name.toLowerCase() === 'dpop') {
      if (value !== undefined) return null;
      value = rawHeaders[i + 1]!;
    }
  }
  return value;
}

/**
 * The `DPoP` header of a request, as {@link readDpopHeader} reads it, without a walk through the raw
 * list when Node's header object settles it: no `dpop` there means none; a value without a comma is
 * the one header (Node joins repeats with ", ", and a proof has no comma).
 */
export function dpopHeaderOf(req: IncomingMessage): string | null | undefined {
  const joined = req.headers.dpop;
  if (joined === undefined || (typeof joined === 'string' && !joined.includes(','))) return joined;
  return readDpopHeader(req.rawHeaders);
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

/** A refusal of the proof: 400 at the token endpoint, 401 at a protected route. */
function invalid(message: string, status: 400 | 401): InvalidDpopProofError {
  return new InvalidDpopProofError(message, { status });
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    // The same bytes as Buffer.from(part, 'base64url'), written into the scratch bytes.
    const length = DECODED.write(part, 'base64url');
    const value: unknown = JSON.parse(DECODED.toString('utf8', 0, length));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A time in seconds as an ISO date, or as the number itself when no date can hold it (beyond ±275,760 years). */
function isoSeconds(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? `${seconds} s since 1970` : date.toISOString().replace('.000Z', 'Z');
}

/** A proof header seen before: its key's thumbprint, and its signature check, resolved once. */
interface KnownHeader {
  readonly jkt: string;
  /** Whether `signature` signs `data` with the header's `alg` and `jwk`. */
  readonly verify: (data: Uint8Array, signature: Uint8Array) => boolean;
}

/**
 * The signature check of one algorithm and public key with node:crypto (RFC 7518 §3.3-3.5, RFC 8037
 * §3.1), built when the key is imported: a request pays the verify alone.
 */
function verifierOf(alg: string, key: KeyObject): KnownHeader['verify'] {
  const hash = alg === 'EdDSA' || alg === 'Ed25519' ? null : `sha${alg.slice(2)}`;
  const options = alg.startsWith('ES')
    ? { key, dsaEncoding: 'ieee-p1363' as const }
    : alg.startsWith('PS')
      ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
      : key;
  return (data, signature) => {
    try {
      return verify(hash, data, options, signature);
    } catch {
      return false; // a signature of the wrong size for its key
    }
  };
}

/** The key type and curve each algorithm needs (RFC 7518 §3.1, RFC 8037). */
function keyFits(alg: string, jwk: Record<string, unknown>): boolean {
  if (alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  if (alg === 'ES384') return jwk.kty === 'EC' && jwk.crv === 'P-384';
  if (alg === 'ES512') return jwk.kty === 'EC' && jwk.crv === 'P-521';
  if (alg === 'EdDSA' || alg === 'Ed25519') return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  return jwk.kty === 'RSA';
}

/** The proof's signature (its last part) over its first two parts, by the header's key. */
function checkSignature(known: KnownHeader, proof: string, secondDot: number, status: 400 | 401): void {
  // UTF-8, as TextEncoder makes it (the scratch bytes hold any proof's signing input whole).
  const signed = new Uint8Array(SIGNING_INPUT.buffer, SIGNING_INPUT.byteOffset, SIGNING_INPUT.write(proof.slice(0, secondDot)));
  const signature = new Uint8Array(SIGNATURE.buffer, SIGNATURE.byteOffset, SIGNATURE.write(proof.slice(secondDot + 1), 'base64url'));
  if (!known.verify(signed, signature)) throw invalid('The DPoP proof\'s signature does not verify with its jwk', status);
}

/**
 * Checks proofs for one instance (see the module description). Synchronous: the signature is checked
 * with node:crypto on a public key imported once per proof header (a client sends the same header,
 * `typ`, `alg` and `jwk`, with every proof), so a known client costs one verify and no import, no
 * thumbprint, no header parsing.
 */
export class DpopProofChecker {
  /** By the proof's encoded header. */
  readonly #headers = new Map<string, KnownHeader>();
  /** The last proof header and what it holds (see #knownHeader). */
  #lastHeader = '';
  #lastKnown: KnownHeader | undefined;
  /** The last access token's `ath`: a client sends the same token with many proofs. */
  #lastToken = '';
  #lastAth = '';

  /** The nonces required at the token endpoint (400) and at protected routes (401), as `nonceAt` says. */
  readonly #tokenNonces: DpopNonces | undefined;
  readonly #routeNonces: DpopNonces | undefined;
  /** {@link replayWindowSeconds} of the token endpoint (400) and of protected routes (401), worked out once. */
  readonly #replayWindows: Readonly<Record<400 | 401, number>>;

  constructor(
    private readonly settings: ResolvedDpopConfig,
    private readonly clockTolerance: number,
    nonces: DpopNonces | undefined,
  ) {
    this.#tokenNonces = settings.nonceAt === 'protected-routes' ? undefined : nonces;
    this.#routeNonces = settings.nonceAt === 'token-endpoint' ? undefined : nonces;
    // One second more than the iat window: a proof exactly proofMaxAge old is still accepted (#checkFreshness),
    // while a record that expires at that instant is already gone (the stores keep an entry until before its expiry).
    const byIat = settings.proofMaxAge + clockTolerance + 1;
    const windowOf = (status: 400 | 401): number => (this.#noncesAt(status) ? Math.max(byIat, 120 + clockTolerance) : byIat);
    this.#replayWindows = { 400: windowOf(400), 401: windowOf(401) };
  }

  /**
   * Seconds a proof used at the token endpoint (400) or a protected route (401) must be remembered:
   * as long as it could be accepted there again (by its `iat`, or by its nonce where nonces are required).
   */
  replayWindowSeconds(status: 400 | 401): number {
    return this.#replayWindows[status];
  }

  /** The nonces required at the token endpoint (400) or at protected routes (401), if any. */
  #noncesAt(status: 400 | 401): DpopNonces | undefined {
    return status === 400 ? this.#tokenNonces : this.#routeNonces;
  }

  /** §4.3 steps 4-7 for a header not seen before: the type, an accepted asymmetric algorithm, a public key of its type. */
  #readHeader(encodedHeader: string, status: 400 | 401): KnownHeader {
    const refuse = (message: string): InvalidDpopProofError => invalid(message, status);
    const header = decodeJson(encodedHeader);
    if (!header) throw refuse('The DPoP proof is not a JWT');
    if (header.typ !== 'dpop+jwt') throw refuse('The DPoP proof must have the typ header dpop+jwt');
    const alg = header.alg;
    if (typeof alg !== 'string' || !(this.settings.algorithms as readonly string[]).includes(alg)) {
      throw refuse(`The DPoP proof's alg must be one of ${this.settings.algs}`);
    }
    // RFC 7515 §4.1.11: no extension is understood here.
    if (header.crit !== undefined || header.b64 !== undefined) throw refuse('The DPoP proof may not carry crit or b64 headers');
    const jwk = header.jwk;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw refuse('The DPoP proof has no jwk header');
    for (const member of PRIVATE_MEMBERS) {
      if (Object.prototype.hasOwnProperty.call(jwk, member)) throw refuse('The DPoP proof\'s jwk must be a public key');
    }
    const publicJwk = jwk as Record<string, unknown>;
    if (!keyFits(alg, publicJwk)) throw refuse('The DPoP proof\'s jwk is not a key of its alg');
    let key: KeyObject;
    let jkt: string;
    try {
      jkt = jwkThumbprint(publicJwk as Record<string, string>);
      key = createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw refuse('The DPoP proof\'s jwk is not a usable public key');
    }
    // Checked before any signature: a long modulus or exponent makes each verify many times dearer.
    const problem = rsaKeyProblem(key, MAX_RSA_BITS);
    if (problem === 'size') throw refuse(`The DPoP proof's RSA key must have at least 2048 and at most ${MAX_RSA_BITS} bits`);
    if (problem === 'exponent') throw refuse('The DPoP proof\'s RSA key must have a public exponent from 3 to 2^32 - 1 (usually 65537)');
    const known = { jkt, verify: verifierOf(alg, key) };
    if (this.#headers.size >= MAX_CACHED_KEYS) this.#headers.delete(this.#headers.keys().next().value!);
    this.#headers.set(encodedHeader, known);
    return known;
  }

  /**
   * Checks a proof (the `DPoP` header's value) for a request and returns its key's thumbprint and
   * `jti`. Throws {@link InvalidDpopProofError}, or {@link UseDpopNonceError} when nonces are required
   * there and the proof lacks a live one.
   */
  check(proof: string, context: ProofContext): CheckedProof {
    const status = context.status;
    if (proof.length > MAX_PROOF_LENGTH) throw invalid(`The DPoP proof is longer than ${MAX_PROOF_LENGTH} characters`, status);
    const firstDot = proof.indexOf('.');
    const secondDot = proof.indexOf('.', firstDot + 1);
    if (firstDot < 1 || secondDot < 0 || proof.indexOf('.', secondDot + 1) >= 0) throw invalid('The DPoP proof is not a JWT', status);
    const known = this.#knownHeader(proof, firstDot, status);
    const claims = decodeJson(proof.slice(firstDot + 1, secondDot));
    if (!claims) throw invalid('The DPoP proof is not a JWT', status);
    // The claims before the signature: cheap first.
    const jti = this.#checkClaims(claims, context);
    checkSignature(known, proof, secondDot, status);
    return { jkt: known.jkt, jti };
  }

  /**
   * The proof's header, from the cache or checked and imported (§4.3 steps 1-7); a header not seen
   * before is checked with the whole proof's JWS shape. A client sends the same header with every
   * proof: the last one is compared before the cache is looked up.
   */
  #knownHeader(proof: string, firstDot: number, status: 400 | 401): KnownHeader {
    const encodedHeader = proof.slice(0, firstDot);
    if (encodedHeader === this.#lastHeader) return this.#lastKnown!;
    let known = this.#headers.get(encodedHeader);
    if (known === undefined) {
      if (!JWS_SHAPE.test(proof)) throw invalid('The DPoP proof is not a JWT', status);
      known = this.#readHeader(encodedHeader, status);
    }
    this.#lastHeader = encodedHeader;
    this.#lastKnown = known;
    return known;
  }

  /** §4.3 steps 8-12 but the key: `jti`, `htm`, `htu`, `ath`, and `iat` or `nonce`. Returns the `jti`. */
  #checkClaims(claims: Record<string, unknown>, context: ProofContext): string {
    const { status, req, accessToken } = context;
    const { jti, htm, htu, iat, ath } = claims;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw invalid(`The DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`, status);
    if (htm !== req.method) throw invalid('The DPoP proof is for another HTTP method (htm)', status);
    if (typeof htu !== 'string' || !htuMatches(req, htu, this.settings)) throw invalid('The DPoP proof is for another URL (htu)', status);
    if (accessToken !== undefined) {
      if (typeof ath !== 'string') throw invalid('The DPoP proof has no ath (hash of the access token)', status);
      if (accessToken !== this.#lastToken) {
        this.#lastAth = accessTokenHash(accessToken);
        this.#lastToken = accessToken;
      }
      if (ath !== this.#lastAth) throw invalid('The DPoP proof\'s ath is not the hash of this access token', status);
    }
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('The DPoP proof has no iat', status);
    this.#checkFreshness(iat, claims.nonce, context);
    return jti;
  }

  /** `iat` within `proofMaxAge` back and the clock tolerance ahead; where nonces are required, a live nonce instead (RFC 9449 §11.1). */
  #checkFreshness(iat: number, nonce: unknown, context: ProofContext): void {
    const nonces = this.#noncesAt(context.status);
    if (nonces) {
      if (nonces.validUntil(nonce, context.now) === undefined) throw new UseDpopNonceError(nonces.current(context.now), { status: context.status });
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

  /** The nonce to send in `DPoP-Nonce` on a success at the token endpoint (400) or a protected route (401), or `undefined` where none is required. */
  nextNonce(now: Date, status: 400 | 401): string | undefined {
    return this.#noncesAt(status)?.current(now);
  }
}
