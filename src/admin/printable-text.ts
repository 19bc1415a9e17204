/**
 * @module printable-text
 * The one rule for text an admin sets (account names, client account IDs): what a terminal, a log
 * viewer or a web page could be tricked by is refused at input, and what an older store may still hold
 * is escaped wherever the CLI prints it for people.
 */

/**
 * Characters refused in admin-set text:
 * - C0 and C1 controls and DEL (U+0000–U+001F, U+007F–U+009F): U+001B and U+009B start terminal escape
 *   sequences, and a newline forges a log line;
 * - bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069): U+202E
 *   shows the rest of a line reversed, so a listing shows something else than what is stored;
 * - the line and paragraph separators U+2028 and U+2029, line breaks to JavaScript and many viewers;
 * - a lone surrogate, which is not text at all (UTF-8 cannot encode it; JSON encoders disagree on it).
 */
const UNSAFE = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029\p{Cs}]/u;

/** What the CLI escapes when it prints: the above, plus any other invisible format character or unassigned code point. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\\]/gu;

/**
 * The first character of `text` that admin-set text may not hold, as `U+XXXX`, or `undefined` when there is none.
 *
 * @example
 * ```ts
 * unsafeCharacter('billing\u202Etxt.exe') // 'U+202E'
 * unsafeCharacter('procurement-portal') // undefined
 * ```
 */
export function unsafeCharacter(text: string): string | undefined {
  const found = UNSAFE.exec(text)?.[0];
  return found === undefined ? undefined : codePoint(found);
}

/**
 * `text` with every invisible, control or unassigned character written as `\u{XXXX}` (and `\` as `\\`,
 * so the escape cannot be faked), for output read by people.
 *
 * @example
 * ```ts
 * escapeUnprintable('evil\u009B31mname') // 'evil\\u{009B}31mname'
 * ```
 */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => (c === '\\' ? '\\\\' : `\\u{${codePoint(c).slice(2)}}`));
}

function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
