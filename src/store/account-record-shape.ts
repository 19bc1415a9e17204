/**
 * @module account-record-shape
 * What every account record a store hands back must look like at the least, checked where the runtime
 * reads it: a host's own store that returns a record of another shape (a column read as `null`, a list
 * stored as text) makes the read fail like an outage (503), instead of a 500 from deep inside a check,
 * a hung request or a crash.
 */

const isList = (value: unknown): boolean => Array.isArray(value);
const isOptionalList = (value: unknown): boolean => value === undefined || Array.isArray(value);
const isText = (value: unknown): boolean => typeof value === 'string';

/** Each field the checks read, and the types it may have. */
const FIELDS: ReadonlyArray<readonly [string, (field: unknown) => boolean]> = [
  ['clientId', isText],
  ['name', isText],
  ['clientAccountId', (field) => field === null || typeof field === 'string'],
  ['scopes', isList],
  ['resources', isOptionalList],
  ['enabled', (field) => typeof field === 'boolean'],
  ['secrets', isList],
  ['keys', isOptionalList],
  ['federated', isOptionalList],
];

/**
 * Why `value` cannot be an account record (the first field of the wrong type), or `undefined` when its
 * fields have the types the token checks rely on. Only types are checked, once per store read.
 *
 * @example
 * ```ts
 * accountShapeProblem(account) // undefined: a record as the store interface describes it
 * accountShapeProblem({ ...account, scopes: null }) // 'an account record whose scopes is null'
 * ```
 */
export function accountShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'something that is not an account record';
  const account = value as Record<string, unknown>;
  for (const [name, valid] of FIELDS) {
    if (!valid(account[name])) return `an account record whose ${name} is ${account[name] === null ? 'null' : typeof account[name]}`;
  }
  return undefined;
}
