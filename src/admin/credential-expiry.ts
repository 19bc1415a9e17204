/**
 * @module credential-expiry
 * When a new credential expires: the one reader of durations (`90d`, `12h`, `30m`, `4s`) shared by the
 * admin API, the admin router and the CLI, and the one check of an expiry against the store (it must
 * keep it) and the server's `maxCredentialLifetime` (an expiry is then required and bounded).
 */
import type { AccountStore } from '../store/account-store.js';
import { supportsCredentialExpiry } from '../store/credential-kinds.js';
import { AdminError } from './admin-errors.js';

/**
 * When a new credential expires, as the admin API takes it: `expiresIn`, a duration from now (seconds,
 * or text such as `'90d'`, `'12h'`, `'30m'`, `'4s'`), or `expiresAt`, an instant (a `Date` or an RFC
 * 3339 text, with its offset). At most one of the two; neither: the credential never expires (unless the server's
 * `maxCredentialLifetime` requires an expiry).
 *
 * @example
 * ```ts
 * import type { CredentialExpiryInput } from 'express-service-accounts'
 *
 * const quarterly: CredentialExpiryInput = { expiresIn: '90d' }
 * const endOfYear: CredentialExpiryInput = { expiresAt: new Date('2027-12-31T23:59:59Z') }
 * const secret = await sa.admin.addSecret(clientId, quarterly)
 * ```
 */
export interface CredentialExpiryInput {
  /** How long from now: whole seconds (a number, or digits), or a whole number followed by `d`, `h`, `m` or `s`. */
  expiresIn?: number | string | null;
  /** When: a `Date`, or an RFC 3339 date and time with its offset (`2027-12-31T23:59:59Z`). */
  expiresAt?: Date | string | null;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { d: 86_400, h: 3600, m: 60, s: 1 };
/** The furthest ahead an expiry may lie: 3650 days, as `maxCredentialLifetime` at most. */
const MAX_EXPIRY_SECONDS = 3650 * 86_400;

/**
 * Reads a duration: a whole number of seconds (a number, or digits), or text of a whole number and a
 * unit, `d` (days), `h`, `m` or `s` (`'90d'`, `'12h'`, `'30m'`, `'4s'`). Returns seconds, or
 * `undefined` for anything else (zero, negative, fractional, another unit).
 *
 * @example
 * ```ts
 * parseDuration('90d') // 7776000
 * parseDuration('4s')  // 4
 * parseDuration('3600') // 3600
 * parseDuration('1w')  // undefined
 * ```
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^([1-9][0-9]{0,9})([dhms]?)$/.exec(value.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] || 's']!;
  return Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** Days, hours, minutes or seconds, whichever unit says it exactly: how messages show a lifetime. */
function durationText(seconds: number): string {
  for (const [unit, size] of Object.entries(UNIT_SECONDS)) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** RFC 3339 §5.6 `date-time`: the date, `T`, the time with optional fractions, and `Z` or an offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * The instant of an RFC 3339 date and time, in milliseconds, or `NaN`. Stricter than `Date.parse`, which
 * reads text without an offset (or in another format) in the server's own time zone, and rolls an
 * impossible date (`2027-02-30`) over into the next month.
 */
function parseDateTime(text: string): number {
  const match = DATE_TIME.exec(text);
  if (!match) return NaN;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = Number(match[9] ?? 0);
  const offsetMinutes = Number(match[10] ?? 0);
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!real || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return NaN;
  return Date.parse(text);
}

/** What {@link resolveExpiry} checks against. */
export interface ExpirySettings {
  readonly store: AccountStore;
  readonly maxCredentialLifetime: number | undefined;
  readonly now: () => Date;
}

/**
 * The `expiresAt` of a new credential, from what the caller gave (`undefined` input: none), checked:
 * an expiry must lie ahead and within 3650 days; with `maxCredentialLifetime`, one is required and may
 * lie at most that far ahead; and the store must keep it. Throws `invalid_input` naming `field` (for
 * example `expiresIn`, or `secret.expiresIn` for an account's first secret); a store that cannot keep
 * expiry rejects with an `Error` (a deployment problem, like a store without resources).
 *
 * @example
 * ```ts
 * const expiresAt = resolveExpiry({ expiresIn: '90d' }, config, 'expiresIn') // a Date 90 days ahead
 * const never = resolveExpiry(undefined, config, 'expiresIn') // null (without maxCredentialLifetime)
 * ```
 */
export function resolveExpiry(input: CredentialExpiryInput | undefined, settings: ExpirySettings, field: string): Date | null {
  const prefix = field.includes('.') ? field.slice(0, field.lastIndexOf('.') + 1) : '';
  const { expiresIn, expiresAt } = (typeof input === 'object' && input !== null ? input : {}) as CredentialExpiryInput;
  const hasIn = expiresIn !== undefined && expiresIn !== null;
  const hasAt = expiresAt !== undefined && expiresAt !== null;
  const max = settings.maxCredentialLifetime;
  if (hasIn && hasAt) throw new AdminError('invalid_input', `give ${prefix}expiresIn or ${prefix}expiresAt, not both`);
  if (!hasIn && !hasAt) {
    if (max === undefined) return null;
    throw new AdminError(
      'invalid_input',
      `${prefix}expiresIn is required: this server's maxCredentialLifetime makes every new credential expire within ${durationText(max)}`,
    );
  }
  const now = settings.now().getTime();
  let at: number;
  if (hasIn) {
    const seconds = parseDuration(expiresIn);
    if (seconds === undefined) {
      throw new AdminError('invalid_input', `${prefix}expiresIn must be a whole number of seconds, or of days, hours, minutes or seconds such as 90d, 12h, 30m or 4s`);
    }
    at = now + seconds * 1000;
  } else {
    at = expiresAt instanceof Date ? expiresAt.getTime() : typeof expiresAt === 'string' ? parseDateTime(expiresAt) : NaN;
    if (Number.isNaN(at)) {
      throw new AdminError('invalid_input', `${prefix}expiresAt must be a date and time with its offset (RFC 3339), such as 2027-01-01T00:00:00Z`);
    }
    if (at <= now) throw new AdminError('invalid_input', `${prefix}expiresAt must lie in the future`);
  }
  const name = hasIn ? `${prefix}expiresIn` : `${prefix}expiresAt`;
  if (max !== undefined && at - now > max * 1000) {
    throw new AdminError('invalid_input', `${name} lies beyond this server's maxCredentialLifetime: a new credential may live at most ${durationText(max)}`);
  }
  if (at - now > MAX_EXPIRY_SECONDS * 1000) throw new AdminError('invalid_input', `${name} must lie within 3650 days`);
  if (!supportsCredentialExpiry(settings.store)) {
    throw new AdminError('not_supported', 'This account store cannot keep credential expiry: it lacks keepsCredentialExpiry (see docs/writing-a-store.md)');
  }
  return new Date(at);
}
