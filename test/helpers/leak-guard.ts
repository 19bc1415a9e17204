/**
 * The secret-leak guard of the whole test run (issue 6 point 6: "a test scans every log line, audit
 * event and response produced by a full test run for secret values and hashes and finds none").
 *
 * `test/setup/leak-guard.ts` (a vitest setup file, so it runs in every test file) installs the hooks
 * that feed this guard:
 * - what it looks for: every secret value created through a test app's admin API (and its random
 *   part), every bcrypt hash made in the process and the SHA-256 pre-hash it was made from, the test
 *   signing key, secrets the CLI or the example server printed at creation; plus anything shaped like a
 *   secret (`esas_…`, the documented SECRET_PATTERN) or a bcrypt hash (`$2b$…`), known or not;
 * - where it looks: console.* calls, process.stdout/stderr writes, every response an in-process HTTP
 *   server sends (status line, headers, body: supertest, fetch, raw http and curl alike), every audit
 *   event of a createTestApp() app, admin API error messages, and the output of every CLI run and
 *   example server the helpers spawn.
 *
 * The one place a secret may legitimately appear is the output that creates it (CLI `create` /
 * `secret add`, the example server's demo account): there each value may appear once; a second
 * appearance, anywhere, is a leak. Text is scanned as it is captured, and the last 256 chunks are kept
 * (each cut to 16 KB) so a secret recorded just after it was printed is still caught: memory stays
 * bounded whatever the run produces. The setup file fails the test file, naming the channel and the
 * offending line (with the secret itself masked), when anything was found.
 *
 * State lives on globalThis, so the setup file and the helpers share one guard per test file.
 */
import { createHash } from 'node:crypto';

/** docs/security.md "The secret format": the pattern secret scanners use. */
const SECRET_SHAPE = /\besas_[0-9A-Za-z]{16}_[0-9A-Za-z]{50}\b/g;
/** A bcrypt hash in modular crypt format. */
const BCRYPT_SHAPE = /\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}/g;

const MAX_CHUNK = 16 * 1024;
const MAX_SCAN = 64 * 1024;
const RING_SIZE = 256;
const MAX_NEEDLES = 100_000;
const MAX_FINDINGS = 20;

export interface LeakFinding {
  /** What leaked: "secret value", "bcrypt hash", "SHA-256 pre-hash"... */
  readonly what: string;
  /** Where: "response", "console.log", "audit event", "service-accounts create (stderr)"... */
  readonly channel: string;
  /** The offending line, with the secret replaced by `[what]`. */
  readonly line: string;
}

interface ChildOutput {
  readonly channel: string;
  /** Lines, from a new secret's first occurrence, that belong to the message creating it (default: its first occurrence only). */
  readonly creationBlockLines?: number;
  readonly text: () => string;
  readonly closed: Promise<void>;
}

class LeakGuard {
  readonly #needles = new Map<string, string>();
  readonly #ring: Array<{ channel: string; text: string }> = [];
  readonly #findings: LeakFinding[] = [];
  readonly #children = new Set<ChildOutput>();
  /** Secrets an in-process HTTP response is about to create and show (value → origin). */
  readonly #shownByResponse = new Map<string, string>();
  /** Chunks captured per channel family (for the guard's own test: the hooks are live). */
  readonly captured: Record<string, number> = {};

  /** Everything a secret value gives away: the value, its random part, its SHA-256 pre-hash. */
  recordSecret(value: string, origin: string): void {
    if (typeof value !== 'string' || value.length < 22) return;
    this.#add(value, `secret value (${origin})`);
    this.#add(value.slice(22), `random part of a secret (${origin})`);
    this.#add(createHash('sha256').update(value, 'utf8').digest('base64'), `SHA-256 pre-hash of a secret (${origin})`);
  }

  /** A bcrypt hash made in this process and the pre-hash it was made from. */
  recordHash(input: string, hash: string): void {
    if (typeof input === 'string' && input.length >= 20) this.#add(input, 'bcrypt input (SHA-256 pre-hash)');
    if (typeof hash === 'string' && hash.length >= 60) {
      this.#add(hash, 'bcrypt hash');
      this.#add(hash.slice(29), 'bcrypt digest');
    }
  }

  /** Any other value that must never be output (a signing key). */
  recordNeedle(value: string, what: string): void {
    if (typeof value === 'string' && value.length >= 16) this.#add(value, what);
  }

  /** Whether a value is among those looked for. */
  knows(value: string): boolean {
    return this.#needles.has(value);
  }

  /**
   * A secret that the HTTP response being sent creates (the admin router's create and add-secret
   * answers): its first appearance in a response is that creation, allowed once; from then on it is
   * looked for everywhere like any other secret.
   */
  expectShownByResponse(value: string, origin: string): void {
    if (typeof value === 'string' && value.length >= 22) this.#shownByResponse.set(value, origin);
  }

  /** Scans one chunk of output now, and keeps it for a while. */
  capture(channel: string, input: string): void {
    if (!input) return;
    let text = input;
    const shown: [string, string][] = [];
    if (channel === 'response') {
      for (const [value, origin] of this.#shownByResponse) {
        const at = text.indexOf(value);
        if (at < 0) continue;
        text = `${text.slice(0, at)}[created secret]${text.slice(at + value.length)}`;
        this.#shownByResponse.delete(value);
        shown.push([value, origin]);
      }
    }
    const family = channel.split(/[ .(]/)[0] ?? channel;
    this.captured[family] = (this.captured[family] ?? 0) + 1;
    const scanned = text.length > MAX_SCAN ? text.slice(0, MAX_SCAN) : text;
    this.#scan(channel, scanned);
    this.#ring.push({ channel, text: scanned.length > MAX_CHUNK ? scanned.slice(0, MAX_CHUNK) : scanned });
    if (this.#ring.length > RING_SIZE) this.#ring.shift();
    for (const [value, origin] of shown) this.recordSecret(value, `${origin}, shown by its creating response`);
  }

  /**
   * Scans a child process's output. With `createsSecrets`, each new secret-shaped value may appear in
   * the message that creates it, and is then looked for everywhere else; without, none may appear.
   * The creation message is its first occurrence, or with `creationBlockLines` the lines from its
   * first occurrence on (the example server's banner shows it on a `client secret:` line and in a
   * ready-made curl command a few lines below).
   */
  checkChildOutput(channel: string, stdout: string, stderr: string, options: { createsSecrets: boolean; creationBlockLines?: number }): void {
    let out = stdout;
    if (options.createsSecrets) {
      // A value this run already knew was not created by this output: showing it again is a leak.
      const created = new Set((stdout.match(SECRET_SHAPE) ?? []).filter((value) => !this.#needles.has(value)));
      for (const value of created) {
        const first = out.indexOf(value);
        let blockEnd = first + value.length;
        // The rest of the first occurrence's line and the lines after it, `creationBlockLines` in all.
        for (let line = 0; line < (options.creationBlockLines ?? 0); line++) {
          const next = out.indexOf('\n', blockEnd);
          if (next < 0) {
            blockEnd = out.length;
            break;
          }
          blockEnd = next + 1;
        }
        out = `${out.slice(0, first)}${out.slice(first, blockEnd).split(value).join('[created secret]')}${out.slice(blockEnd)}`;
      }
      this.#scan(`${channel} (stdout)`, out);
      for (const value of created) this.recordSecret(value, `printed by ${channel}`);
    } else {
      this.#scan(`${channel} (stdout)`, out);
    }
    this.#scan(`${channel} (stderr)`, stderr);
  }

  /** Registers a long-running child (the example server): its output is checked once it has closed. */
  watchChild(child: ChildOutput): void {
    this.#children.add(child);
  }

  /** Checks the registered children (waiting at most `waitMs` for each to close). */
  async settleChildren(waitMs = 3000): Promise<void> {
    for (const child of [...this.#children]) {
      this.#children.delete(child);
      await Promise.race([child.closed, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
      this.checkChildOutput(child.channel, child.text(), '', { createsSecrets: true, ...(child.creationBlockLines ? { creationBlockLines: child.creationBlockLines } : {}) });
    }
  }

  /** The findings so far, and forgets them (the guard's own test uses this to clear its planted leaks). */
  takeFindings(): LeakFinding[] {
    return this.#findings.splice(0);
  }

  #add(needle: string, what: string): void {
    if (this.#needles.has(needle) || this.#needles.size >= MAX_NEEDLES) return;
    this.#needles.set(needle, what);
    // It may have been printed before it was recorded (an event emitted while it was being created).
    for (const { channel, text } of this.#ring) if (text.includes(needle)) this.#report(what, channel, text, needle);
  }

  #scan(channel: string, text: string): void {
    if (!text) return;
    // Each leak is reported once: what a shape matched is masked before looking for known values
    // (a secret's random part is inside the secret, a hash's digest inside the hash).
    let rest = text;
    for (const shape of [SECRET_SHAPE, BCRYPT_SHAPE]) {
      for (const match of text.matchAll(shape)) {
        if (!rest.includes(match[0])) continue;
        this.#report(this.#needles.get(match[0]) ?? (shape === SECRET_SHAPE ? 'something shaped like a secret' : 'something shaped like a bcrypt hash'), channel, rest, match[0]);
        rest = rest.split(match[0]).join('[reported]');
      }
    }
    for (const [needle, what] of this.#needles) {
      if (!rest.includes(needle)) continue;
      this.#report(what, channel, rest, needle);
      rest = rest.split(needle).join('[reported]');
    }
  }

  #report(what: string, channel: string, text: string, needle: string): void {
    if (this.#findings.length >= MAX_FINDINGS) return;
    const at = text.indexOf(needle);
    const start = Math.max(text.lastIndexOf('\n', at) + 1, at - 160);
    const endOfLine = text.indexOf('\n', at + needle.length);
    const end = Math.min(endOfLine < 0 ? text.length : endOfLine, at + needle.length + 160);
    const line = text.slice(start, end).split(needle).join(`[${what}]`);
    this.#findings.push({ what, channel, line });
  }
}

const KEY = Symbol.for('express-service-accounts.test.leak-guard');

/** The guard of the current test file. */
export function leakGuard(): LeakGuard {
  const holder = globalThis as unknown as Record<symbol, LeakGuard | undefined>;
  return (holder[KEY] ??= new LeakGuard());
}

/** JSON for captured values: Dates as ISO strings, errors with their message and cause. */
export function captureText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) =>
        v instanceof Error ? { name: v.name, message: v.message, cause: v.cause instanceof Error ? v.cause.message : v.cause } : typeof v === 'bigint' ? String(v) : v,
      ) ?? String(value)
    );
  } catch {
    return String(value);
  }
}
