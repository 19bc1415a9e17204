/**
 * @module claim-conditions
 * Claim conditions of federated credentials: exact values that other claims of an outside token must
 * have, beside its issuer and subject (GitHub's `repository_owner`, `environment`, `job_workflow_ref`;
 * a Kubernetes token's namespace). Every condition must hold. How a condition names its claim, how it
 * compares, and the limits are decided here once, for the admin API that checks new conditions and for
 * the token endpoint that applies them.
 *
 * A name is a top-level claim (`repository_owner`), or, beginning with `/`, a JSON Pointer (RFC 6901)
 * into nested objects (`/kubernetes.io/namespace`): a dotted path could not tell the claim
 * `kubernetes.io` from a claim `kubernetes` holding `io`. A value is compared exactly with a string
 * claim; a boolean claim matches `true` or `false`; a number, an array, an object, `null` or a missing
 * claim never matches (a number has several spellings, `1`, `1.0`, `1e0`, so an exact comparison of
 * its text would depend on how the issuer wrote it).
 */

/**
 * The most conditions one credential holds, and the longest name and value (bytes of UTF-8). Real
 * ones are a handful of short names and values; the bounds keep a stored credential, and the work
 * done for each outside token, small.
 *
 * @example
 * ```ts
 * const fits = Object.keys({ repository_owner: 'acme', environment: 'production' }).length <= CLAIM_CONDITION_LIMITS.conditions
 * ```
 */
export const CLAIM_CONDITION_LIMITS = Object.freeze({ conditions: 16, nameBytes: 200, valueBytes: 1000 });

/**
 * Claims a condition may not name: the ones the federated check already decides by its own rules
 * (`iss` and `sub` exactly, `aud` as the sole audience, the times, `jti` used once).
 */
const DECIDED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);

/** A name's path: one member name per level (a top-level name is a path of one). */
type ClaimPath = readonly string[];

function pathOf(name: string): ClaimPath | string {
  if (!name.startsWith('/')) return [name];
  const path: string[] = [];
  for (const token of name.slice(1).split('/')) {
    if (/~(?![01])/.test(token)) return 'a JSON Pointer may use ~ only as ~0 (for ~) or ~1 (for /)';
    if (token === '') return 'a JSON Pointer must not have an empty member name (no // and no / at the end)';
    path.push(token.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return path;
}

/**
 * Why `name` cannot name a claim condition's claim (after the text rules the admin API applies to any
 * name), or `undefined` when it can: a JSON Pointer that is not well formed, or a claim the federated
 * check already decides by its own rules.
 *
 * @example
 * ```ts
 * claimNameProblem('repository_owner') // undefined
 * claimNameProblem('/kubernetes.io/namespace') // undefined
 * claimNameProblem('sub') // '... sub is checked by its own rule ...'
 * ```
 */
export function claimNameProblem(name: string): string | undefined {
  const path = pathOf(name);
  if (typeof path === 'string') return path;
  if (path.length === 1 && DECIDED_CLAIMS.has(path[0]!)) {
    return `${path[0]} is checked by its own rule (iss and sub exactly, aud as the sole audience, exp, nbf and iat as times, jti once): name another claim`;
  }
  return undefined;
}

/**
 * One key per claim, whatever the spelling: `repository_owner` and `/repository_owner` name the same
 * claim, so a credential cannot hold both.
 *
 * @example
 * ```ts
 * claimKey('environment') === claimKey('/environment') // true
 * ```
 */
export function claimKey(name: string): string {
  return JSON.stringify(pathOf(name));
}

function claimAt(payload: Readonly<Record<string, unknown>>, path: ClaimPath): unknown {
  let value: unknown = payload;
  for (const member of path) {
    // Own members of JSON objects only: never an array index, never Object.prototype.
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, member)) return undefined;
    value = (value as Record<string, unknown>)[member];
  }
  return value;
}

/** Whether the claim's value is the condition's: a string exactly, a boolean as `true` or `false`. */
function holds(claim: unknown, expected: string): boolean {
  if (typeof claim === 'string') return claim === expected;
  if (typeof claim === 'boolean') return String(claim) === expected;
  return false;
}

/**
 * The name of the first condition `payload` (an outside token's verified claims) does not meet, or
 * `undefined` when every one holds (or there are none).
 *
 * @example
 * ```ts
 * const conditions = { repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' }
 * unmetClaimCondition(conditions, { repository_owner: 'acme', 'kubernetes.io': { namespace: 'payments' } }) // undefined
 * unmetClaimCondition(conditions, { repository_owner: 'evil' }) // 'repository_owner'
 * ```
 */
export function unmetClaimCondition(
  conditions: Readonly<Record<string, string>> | undefined,
  payload: Readonly<Record<string, unknown>>,
): string | undefined {
  if (conditions === undefined) return undefined;
  for (const [name, expected] of Object.entries(conditions)) {
    const path = pathOf(name);
    // A name the admin API would refuse never holds (a store edited by hand fails closed).
    if (typeof path === 'string' || !holds(claimAt(payload, path), expected)) return name;
  }
  return undefined;
}
