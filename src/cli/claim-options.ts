/**
 * @module claim-options
 * `federated add --claim NAME=VALUE` (repeatable): the claim conditions of a new federated credential,
 * read from the command line. The admin API checks them; this only splits and gathers them.
 */
import { UsageError } from './usage-error.js';

/**
 * Commander's collector for a repeatable `--claim`: the texts given, in order.
 *
 * @example
 * ```ts
 * collectClaim('environment=production', ['repository_owner=acme']) // ['repository_owner=acme', 'environment=production']
 * ```
 */
export function collectClaim(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The conditions of `--claim` texts: each split at its first `=` (so a value may hold `=`, a name may
 * not). Throws a usage error (exit code 2) for a text without `=` or a name given twice.
 *
 * @example
 * ```ts
 * claimConditionsOf(['repository_owner=acme', '/kubernetes.io/namespace=payments'])
 * // { repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' }
 * ```
 */
export function claimConditionsOf(texts: readonly string[]): Record<string, string> {
  const entries: [string, string][] = [];
  for (const text of texts) {
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`--claim ${JSON.stringify(text)}: write NAME=VALUE, for example --claim repository_owner=acme`);
    const name = text.slice(0, at);
    if (entries.some(([seen]) => seen === name)) {
      throw new UsageError(`--claim ${name} is given twice: a claim has one required value (register one credential per value)`);
    }
    entries.push([name, text.slice(at + 1)]);
  }
  // Own data properties whatever the names (`__proto__` included).
  return Object.fromEntries(entries);
}
