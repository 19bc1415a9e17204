/**
 * @module claim-condition-input
 * The admin API's check of a federated credential's claim conditions: at most
 * `CLAIM_CONDITION_LIMITS.conditions` names, each a claim the federated check does not already decide,
 * each with one exact value. The rules for names, values and their comparison are in
 * client-auth/claim-conditions.ts.
 */
import { CLAIM_CONDITION_LIMITS, claimKey, claimNameProblem } from '../client-auth/claim-conditions.js';
import { AdminError } from './admin-errors.js';
import { unsafeCharacter } from './printable-text.js';

function checkText(what: string, value: unknown, maxBytes: number): string {
  const rule = `${what} must be 1 to ${maxBytes} bytes (UTF-8) of printable characters`;
  if (typeof value !== 'string' || value.trim() === '' || Buffer.byteLength(value) > maxBytes) throw new AdminError('invalid_input', rule);
  const unsafe = unsafeCharacter(value);
  if (unsafe !== undefined) throw new AdminError('invalid_input', `${rule}: no control or bidirectional formatting characters (found ${unsafe})`);
  // Compared exactly with the token's claim, so a space copied along would make it never match.
  if (value.trim() !== value) throw new AdminError('invalid_input', `${what} must not begin or end with white space: it is compared exactly`);
  return value;
}

/**
 * Checks the `claims` of a federated credential input: `undefined` when there are none (left out,
 * `null` or `{}`), else the conditions in the order given. Throws `invalid_input` naming the claim.
 *
 * @example
 * ```ts
 * checkClaimConditions({ repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' }) // both kept
 * checkClaimConditions({ environment: 'prod*' }) // throws invalid_input: patterns are not supported
 * ```
 */
export function checkClaimConditions(claims: unknown): Readonly<Record<string, string>> | undefined {
  if (claims === undefined || claims === null) return undefined;
  if (typeof claims !== 'object' || Array.isArray(claims)) {
    throw new AdminError('invalid_input', 'claims must be an object of claim names and the exact values the outside token must carry');
  }
  const entries = Object.entries(claims);
  if (entries.length > CLAIM_CONDITION_LIMITS.conditions) {
    throw new AdminError('invalid_input', `claims may hold at most ${CLAIM_CONDITION_LIMITS.conditions} conditions`);
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    checkText('a claim name', name, CLAIM_CONDITION_LIMITS.nameBytes);
    const problem = claimNameProblem(name);
    if (problem !== undefined) throw new AdminError('invalid_input', `claim ${name}: ${problem}`);
    const key = claimKey(name);
    if (seen.has(key)) throw new AdminError('invalid_input', `claim ${name} is named twice (a top-level name and its JSON Pointer name the same claim)`);
    seen.add(key);
    checkText(`the value of claim ${name}`, value, CLAIM_CONDITION_LIMITS.valueBytes);
    if ((value as string).includes('*')) {
      throw new AdminError(
        'invalid_input',
        `the value of claim ${name} must be one exact value: patterns (*) are not supported, since a pattern would trust every workload it matches, ` +
          'including ones created later by anyone who can choose that claim; register one credential per value',
      );
    }
  }
  // Own data properties only, whatever the names (`__proto__` included).
  return entries.length === 0 ? undefined : Object.freeze(Object.fromEntries(entries) as Record<string, string>);
}

/**
 * Whether a store gave back the conditions it was given (a store from before claim conditions drops
 * them, and would then trust more than was asked).
 *
 * @example
 * ```ts
 * sameClaimConditions({ environment: 'production' }, { environment: 'production' }) // true
 * sameClaimConditions({ environment: 'production' }, undefined) // false
 * ```
 */
export function sameClaimConditions(
  asked: Readonly<Record<string, string>> | undefined,
  stored: Readonly<Record<string, string>> | undefined,
): boolean {
  const a = Object.entries(asked ?? {});
  const b = stored ?? {};
  return a.length === Object.keys(b).length && a.every(([name, value]) => Object.hasOwn(b, name) && b[name] === value);
}
