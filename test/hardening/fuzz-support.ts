/**
 * Shared pieces of the fuzz suites: the seed (env FUZZ_SEED, printed on failure with fast-check's
 * own `seed` and `path` in a short report), batched runs that check the server still serves after each batch, header
 * sanitising for Node's HTTP client, and a request counter for the 10,000-request floor.
 */
import fc from 'fast-check';
import { formatFailure } from './fuzz-report.js';
import type { FuzzOutcome } from './fuzz-node-limits.js';

/** The base seed of this run: FUZZ_SEED, or a fresh one. */
export const FUZZ_SEED: number = (() => {
  const fromEnv = process.env.FUZZ_SEED;
  if (fromEnv !== undefined && fromEnv !== '') {
    const n = Number(fromEnv);
    if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${fromEnv}`);
    return n;
  }
  return (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
})();

/**
 * Issue 6 point 2: "At least 10,000 generated requests per CI run". Vitest runs each test file in its
 * own process, so the floor is split between the two fuzz files and each asserts its own share
 * (counted from the requests it actually sent); the shares add up to the floor.
 */
export const FUZZ_TOTAL_FLOOR = 10_000;
export const FUZZ_FLOORS = { tokenEndpoint: 6000, requireBearer: 4000 } as const;
if (FUZZ_FLOORS.tokenEndpoint + FUZZ_FLOORS.requireBearer < FUZZ_TOTAL_FLOOR) {
  throw new Error('the fuzz floors must add up to at least FUZZ_TOTAL_FLOOR');
}

/** Requests sent by the fuzz suites of this process (each file checks its share of the floor). */
export const fuzzCounter = { requests: 0, statuses: {} as Record<number, number> };

/** Counts one fuzz request and its status (0 for a connection the server reset). */
export function countResponse(outcome: FuzzOutcome): void {
  const status = 'reset' in outcome ? 0 : outcome.status;
  fuzzCounter.requests++;
  fuzzCounter.statuses[status] = (fuzzCounter.statuses[status] ?? 0) + 1;
}

/**
 * Runs `property` in `batches` of `runsPerBatch`, calling `afterBatch` (a valid request that must
 * succeed) after each. A failure names FUZZ_SEED and fast-check's own seed and counterexample path,
 * with a shortened counterexample (see fuzz-report.ts).
 */
export async function runBatches<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  options: { batches: number; runsPerBatch: number; afterBatch: () => Promise<void> },
): Promise<void> {
  for (let batch = 0; batch < options.batches; batch++) {
    const seed = (FUZZ_SEED + batch * 7919) | 0;
    const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed, numRuns: options.runsPerBatch, endOnFailure: true });
    if (details.failed) throw new Error(formatFailure(details, { name, fuzzSeed: FUZZ_SEED, batch }));
    await options.afterBatch();
  }
}

/** Node's HTTP client refuses header values outside tab, 0x20-0x7e and 0x80-0xff: keep the rest as latin1 bytes. */
export function headerValue(text: string): string {
  return Buffer.from(text, 'utf8')
    .toString('latin1')
    .replace(/[^\t\x20-\x7e\x80-\xff]/g, '')
    .slice(0, 8000);
}

/** Strings that stress parsers: unicode, prototype keys, encodings, separators. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '',
    ' ',
    '\u0000',
    '%00',
    '%E0%A4%A',
    '%',
    '+',
    '&',
    '=',
    ':',
    '\\',
    '"',
    '\ud800',
    '\u202e',
    '💥',
    'client_credentials',
    'esa_',
    'esas_',
    'Basic',
    'Bearer',
    'null',
    '[]',
    '{}',
  ),
  fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => s.repeat(50)),
);

/** encodeURIComponent that survives lone surrogates (they become U+FFFD, as a browser would send them). */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

/** Content-Type headers for token and API requests: the two we accept, their odd spellings and charsets, others, junk, none. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('application/x-www-form-urlencoded', 'application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'application/x-www-form-urlencoded; charset=iso-8859-1',
      'application/x-www-form-urlencoded; charset=bogus',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'application/xml',
      '*/*',
      '',
    ),
  },
  { weight: 1, arbitrary: nastyString.map(headerValue) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
