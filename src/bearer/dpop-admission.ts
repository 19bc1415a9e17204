/**
 * @module dpop-admission
 * `requireBearer()` for a request with `Authorization: DPoP <token>` (RFC 9449 §7): exactly one `DPoP`
 * header, the token good as for a Bearer request and bound to a key (`cnf.jkt`; an unbound token is
 * refused, §7.2), the proof checked (dpop-proof.ts, with `ath` for this token) and signed by that key,
 * the route's audience and scope, and last the proof's single use. Every refusal carries the DPoP
 * challenge; where nonces are required, a success carries the next nonce (`DPoP-Nonce`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessTokenClaims } from '../access-tokens/access-token.js';
import type { Runtime } from '../create-runtime.js';
import type { DpopRuntime } from '../dpop/dpop-runtime.js';
import { dpopHeaderOf, type CheckedProof } from '../dpop/dpop-proof.js';
import { replayOwnerOf } from '../dpop/dpop-replay.js';
import { InsufficientScopeError, InvalidDpopProofError, InvalidTokenError, type DpopChallenge } from '../errors.js';
import type { AccountRecord } from '../store/account-store.js';
import { checkToken, type TokenCheckReceiver, type TokenCredential } from '../token-check/token-check.js';
import { extractDpopToken } from './extract-bearer-token.js';

type NodeNext = (err?: unknown) => void;

/** What one route's DPoP admission needs; `P` is the principal put on `req.serviceAccount`. */
export interface DpopAdmissionParts<P> {
  readonly runtime: Runtime;
  readonly dpop: DpopRuntime;
  /** The route's principal of a good token (its audience and scope checked), or the route's refusal. */
  readonly grant: (claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential) => P | InvalidTokenError | InsufficientScopeError;
  /** Names the account of a good token that lacks the route's scope on `req.serviceAccount` (see require-bearer.ts). */
  readonly identifyForbidden: (req: IncomingMessage, claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential) => void;
  /** The route's renderer of refusals. */
  readonly refuse: (res: ServerResponse, error: unknown, claims?: AccessTokenClaims, account?: AccountRecord, challenge?: DpopChallenge) => void;
}

/** One DPoP request, handed through the token check. */
interface DpopRequest {
  readonly req: IncomingMessage;
  readonly token: string;
  readonly proof: string;
}

/** Returns the admission of DPoP requests for one route. */
export function createDpopAdmission<P extends object>(parts: DpopAdmissionParts<P>): (header: string, req: IncomingMessage, res: ServerResponse, next: NodeNext) => void {
  const { runtime, dpop, grant, refuse } = parts;
  const used = dpop.challenges.used;
  const now = runtime.config.now;

  const admitted = (request: DpopRequest, res: ServerResponse, next: NodeNext, principal: P, at: Date): void => {
    const nonce = dpop.proofs.nextNonce(at, 401);
    if (nonce !== undefined) res.setHeader('DPoP-Nonce', nonce);
    (request.req as IncomingMessage & { serviceAccount?: P }).serviceAccount = principal;
    next();
  };
  const replayed = (): InvalidDpopProofError =>
    new InvalidDpopProofError('The DPoP proof was already used: make a fresh proof, with a new jti, for every request', { status: 401 });
  /** The replay guard's answer other than a synchronous first use: a replay, or the answer of strict mode's Redis. */
  const firstUseAnswered = (
    first: false | Promise<boolean>,
    claims: AccessTokenClaims,
    account: AccountRecord,
    request: DpopRequest,
    res: ServerResponse,
    next: NodeNext,
    principal: P,
    at: Date,
  ): void => {
    if (first === false) return refuse(res, replayed(), claims, account, used);
    first.then(
      (ok) => (ok ? admitted(request, res, next, principal, at) : refuse(res, replayed(), claims, account, used)),
      (err: unknown) => refuse(res, err, claims, account, used),
    );
  };

  /** The request's proof, checked (dpop-proof.ts), of the key the token is bound to. */
  const boundProof = (claims: AccessTokenClaims, request: DpopRequest, at: Date): CheckedProof => {
    const jkt = claims.cnf?.jkt;
    // RFC 9449 §7.2: an unbound token is not a DPoP token.
    if (jkt === undefined) throw new InvalidTokenError('not_dpop_bound');
    const proof = dpop.proofs.check(request.proof, { req: request.req, accessToken: request.token, now: at, status: 401 });
    // §4.3 step 12: the proof's key is the one the token is bound to.
    if (proof.jkt !== jkt) throw new InvalidTokenError('dpop_bound');
    return proof;
  };

  const outcome: TokenCheckReceiver<DpopRequest, ServerResponse, NodeNext> = {
    good(claims, account, credential, request, res, next) {
      const at = now();
      let principal: P;
      let first: boolean | Promise<boolean>;
      try {
        const proof = boundProof(claims, request, at);
        const granted = grant(claims, account, credential);
        if (granted instanceof Error) {
          if (granted instanceof InsufficientScopeError) parts.identifyForbidden(request.req, claims, account, credential);
          throw granted;
        }
        principal = granted;
        // Written after every other check, so a refused request never uses up a proof (§11.1).
        first = dpop.replay.firstUse(replayOwnerOf(account), proof.jkt, proof.jti, at.getTime());
      } catch (err) {
        return refuse(res, err, claims, account, used);
      }
      if (first === true) return admitted(request, res, next, principal, at);
      firstUseAnswered(first, claims, account, request, res, next, principal, at);
    },
    refused(error, claims, account, _request, res) {
      refuse(res, error, claims, account, used);
    },
    failed(error, claims, _request, res) {
      refuse(res, error, claims, undefined, used);
    },
  };

  return (header, req, res, next) => {
    let token: string;
    let proof: string;
    try {
      token = extractDpopToken(header);
      const value = dpopHeaderOf(req);
      if (value === undefined) throw new InvalidDpopProofError('A DPoP access token must come with a DPoP proof header', { status: 401 });
      if (value === null) throw new InvalidDpopProofError('The request must carry exactly one DPoP header', { status: 401 });
      proof = value;
    } catch (err) {
      return refuse(res, err, undefined, undefined, used);
    }
    checkToken(runtime, token, outcome, { req, token, proof }, res, next);
  };
}
