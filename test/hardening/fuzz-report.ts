/**
 * A short failure report for the fuzz suites. fast-check's own report prints the whole counterexample,
 * and a generated request can hold 40 KB of body and a 20 KB header: one failure printed ~100 KB. This
 * report keeps what reproduces the failure (FUZZ_SEED, the batch, fast-check's seed and counterexample
 * path) and a counterexample whose long strings and buffers are cut down to their length and ends.
 */
import type fc from 'fast-check';

/** Longest string (as printed, escapes included) kept whole in a report; longer ones keep their ends. */
const MAX_STRING = 100;
/** Longest the error message of the failing check may take in a report. */
const MAX_MESSAGE = 500;
/** Most items or keys printed per array or object. */
const MAX_ITEMS = 10;

/** A string as a JSON literal, cut to its ends and its length when long (escapes count: binary text grows sixfold). */
function printString(text: string): string {
  const literal = JSON.stringify(text);
  if (literal.length <= MAX_STRING) return literal;
  return `${literal.slice(0, 50)}…(${text.length} chars)…${literal.slice(-20)}`;
}

/**
 * Prints a value like JSON, with long strings and buffers cut down and at most MAX_ITEMS entries per
 * array or object, so a counterexample takes a few hundred bytes whatever it holds.
 */
export function printShort(value: unknown, depth = 0): string {
  if (typeof value === 'string') return printString(value);
  if (Buffer.isBuffer(value)) return `<Buffer ${value.length} bytes: ${value.subarray(0, 16).toString('hex')}${value.length > 16 ? '…' : ''}>`;
  if (typeof value !== 'object' || value === null) return String(value);
  if (depth >= 4) return Array.isArray(value) ? `[…${value.length} items]` : '{…}';
  const entries = Array.isArray(value)
    ? value.map((v) => printShort(v, depth + 1))
    : Object.entries(value).map(([k, v]) => `${printString(k)}:${printShort(v, depth + 1)}`);
  const shown = entries.slice(0, MAX_ITEMS);
  if (entries.length > MAX_ITEMS) shown.push(`…${entries.length - MAX_ITEMS} more`);
  return Array.isArray(value) ? `[${shown.join(',')}]` : `{${shown.join(',')}}`;
}

/** The failing check's message, cut to MAX_MESSAGE, plus the first stack frame in a test file. */
function describeError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const short = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…(${message.length} chars)` : message;
  const frame = err instanceof Error ? err.stack?.split('\n').find((line) => /\/test\/.*\.ts:\d+/.test(line)) : undefined;
  return frame ? `${short}\n${frame.trim()}` : short;
}

/** Where a failure happened: the suite, the base seed and the batch. */
export interface FailureContext {
  readonly name: string;
  readonly fuzzSeed: number;
  readonly batch: number;
}

/** A report of a failed run of {@link fc.check}, a few hundred bytes whatever the counterexample. */
export function formatFailure<T>(details: fc.RunDetails<T>, context: FailureContext): string {
  const replay = `rerun with FUZZ_SEED=${context.fuzzSeed} (batch ${context.batch}, fast-check seed ${details.seed}, path "${details.counterexamplePath ?? ''}")`;
  const counterexample = details.counterexample === null ? 'none' : printShort(details.counterexample);
  return [
    `${context.name} failed after ${details.numRuns} run(s): ${replay}.`,
    `Counterexample (long values shortened): ${counterexample}`,
    `Error: ${describeError(details.errorInstance)}`,
  ].join('\n');
}
