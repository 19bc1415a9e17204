/**
 * What Node's HTTP server answers by itself, before Express, the host or this library runs: a request
 * head (URL and headers) over `http.maxHeaderSize` (16 KB by default) gets `431 Request Header Fields
 * Too Large` (RFC 6585 §5) with no body, and the connection is closed. The fuzz oracles ask here first
 * and judge the rest themselves: the rule is exact away from the limit, and either answer is allowed
 * within a small margin of it (the HTTP agent adds its own `Host` and `Connection` headers).
 */
import http from 'node:http';
import { expect } from 'vitest';
import type { LiveServer, RawRequest, RawResponse } from './helpers.js';

/** A response, or a connection the server reset before answering. */
export type FuzzOutcome = RawResponse | { readonly reset: string };

/** Sends a fuzz request. A reset connection is an outcome for the oracle to judge, not a test error. */
export async function sendFuzzRequest(server: LiveServer, req: RawRequest): Promise<FuzzOutcome> {
  try {
    return await server.request(req);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || code === 'EPIPE') return { reset: code };
    throw err;
  }
}

/** The bytes Node counts against `maxHeaderSize`: the URL and each header's name and value. */
export function headSize(req: RawRequest): number {
  let size = Buffer.byteLength(req.path, 'latin1');
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) size += name.length + Buffer.byteLength(v, 'latin1');
  }
  return size;
}

/** Room for what the agent adds (`Host`, `Connection`, `Content-Length`) and for the limit's exact accounting. */
const MARGIN = 512;

/**
 * Checks the outcome against Node's own limit on the request head. Returns the response when the app
 * answered it (the caller's oracle applies), or `undefined` when Node did (checked here).
 */
export function appResponse(req: RawRequest, outcome: FuzzOutcome): RawResponse | undefined {
  const size = headSize(req);
  const byNode = 'reset' in outcome || outcome.status === 431;
  if (size > http.maxHeaderSize + MARGIN) {
    // Over the limit: Node's 431, which has no body (or the connection it closed, already reset).
    expect(byNode, `a ${size}-byte request head must be refused by Node`).toBe(true);
    if (!('reset' in outcome)) expect(outcome.text).toBe('');
    return undefined;
  }
  if (size < http.maxHeaderSize - MARGIN) {
    expect(byNode, `a ${size}-byte request head is under Node's limit: the app must answer it`).toBe(false);
    return outcome as RawResponse;
  }
  return byNode ? undefined : (outcome as RawResponse);
}
