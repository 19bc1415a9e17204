/**
 * The fuzz suites' failure report (fuzz-report.ts): short whatever the counterexample holds, and still
 * enough to replay the failure (FUZZ_SEED, batch, fast-check's seed and path).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatFailure, printShort } from './fuzz-report.js';

/** A request as the fuzz suites generate them at their largest: a 20 KB header and a 40 KB binary body. */
const hugeRequest = fc.record({
  method: fc.constant('POST'),
  path: fc.constant('/oauth/token'),
  headers: fc.constant({ authorization: `Basic ${'QUFB'.repeat(5000)}`, 'content-type': '\u0000\u0001'.repeat(3000) }),
  body: fc.constant(Buffer.alloc(40_000, 1)),
  text: fc.constant('{"a":'.repeat(5000)),
});

function failingRun() {
  return fc.check(
    fc.asyncProperty(hugeRequest, async () => {
      expect(431).toBe(200);
    }),
    { seed: 42, numRuns: 5, endOnFailure: true },
  );
}

describe('the fuzz failure report', () => {
  it('stays under 2 KB for a counterexample of ~100 KB, and names the seeds and the path to replay it', async () => {
    const details = await failingRun();
    expect(details.failed).toBe(true);
    const report = formatFailure(details, { name: 'token endpoint fuzz', fuzzSeed: 522601287, batch: 3 });
    expect(report.length).toBeLessThan(2000);
    expect(report).toContain('FUZZ_SEED=522601287');
    expect(report).toContain('batch 3');
    expect(report).toContain(`fast-check seed ${details.seed}`);
    expect(report).toContain(`path "${details.counterexamplePath}"`);
    expect(report).toContain('expected 431 to be 200');
    // What fast-check itself prints for the same failure (the report this one replaces).
    const native = await fc.assert(
      fc.asyncProperty(hugeRequest, async () => {
        expect(431).toBe(200);
      }),
      { seed: 42, numRuns: 5, endOnFailure: true },
    ).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(native.length).toBeGreaterThan(50_000);
  });

  it('prints long strings by their ends and length, buffers by their size, and caps entries', () => {
    expect(printShort('short')).toBe('"short"');
    expect(printShort('x'.repeat(10_000))).toMatch(/^"x{49}…\(10000 chars\)…x{19}"$/);
    expect(printShort(Buffer.alloc(1000))).toBe(`<Buffer 1000 bytes: ${'00'.repeat(16)}…>`);
    expect(printShort(Array.from({ length: 50 }, (_, i) => i))).toBe('[0,1,2,3,4,5,6,7,8,9,…40 more]');
    expect(printShort({ a: { b: { c: { d: { e: 1 } } } } })).toBe('{"a":{"b":{"c":{"d":{…}}}}}');
    expect(printShort([undefined, null, true])).toBe('[undefined,null,true]');
  });
});
