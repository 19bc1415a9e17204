/**
 * @module dpop-nonces
 * Server nonces for DPoP proofs (RFC 9449 §8, §9), stateless: a nonce is a 60-second step and an HMAC
 * of it under `dpop.nonceSecret`, so every instance with the same secret issues and accepts the same
 * nonces with no shared state. A nonce is accepted during its step and the next one; each successful
 * answer carries the current step's nonce, so a busy client always holds a live one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seconds per nonce step. */
export const NONCE_STEP_SECONDS = 60;

/** Issues and checks the nonces of one secret. */
export class DpopNonces {
  #step = -1;
  #nonce = '';

  constructor(private readonly secret: string) {}

  #of(step: number): string {
    const mac = createHmac('sha256', this.secret).update(`express-service-accounts dpop nonce ${step}`).digest('base64url').slice(0, 22);
    return `${step.toString(36)}.${mac}`;
  }

  /** The nonce of the current step, to send in `DPoP-Nonce`. */
  current(now: Date): string {
    const step = Math.floor(now.getTime() / 1000 / NONCE_STEP_SECONDS);
    if (step !== this.#step) {
      this.#step = step;
      this.#nonce = this.#of(step);
    }
    return this.#nonce;
  }

  /**
   * When `nonce` stops being accepted (ms since the epoch), or `undefined` when it is not a live nonce
   * of this secret: one of the current step or the one before.
   */
  validUntil(nonce: unknown, now: Date): number | undefined {
    if (typeof nonce !== 'string' || nonce.length > 40) return undefined;
    const dot = nonce.indexOf('.');
    const step = parseInt(nonce.slice(0, dot), 36);
    const current = Math.floor(now.getTime() / 1000 / NONCE_STEP_SECONDS);
    if (dot < 1 || !Number.isSafeInteger(step) || (step !== current && step !== current - 1)) return undefined;
    const expected = Buffer.from(this.#of(step));
    const given = Buffer.from(nonce);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return (step + 2) * NONCE_STEP_SECONDS * 1000;
  }
}
