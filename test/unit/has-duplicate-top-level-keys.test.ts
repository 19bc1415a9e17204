/**
 * hasDuplicateTopLevelKeys: the scan that lets the token endpoint refuse a JSON body with a repeated
 * parameter, which JSON.parse would silently resolve to its last value. RFC 6749 §3.2: "Request and
 * response parameters MUST NOT be included more than once." Keys are compared as JSON.parse decodes
 * them; only the keys of a top-level object are parameters.
 *
 * The cases are JSON texts written as JavaScript strings: `'"\\u0061"'` is the JSON text "\u0061".
 */
import { describe, expect, it } from 'vitest';
import { hasDuplicateTopLevelKeys } from '../../src/token-endpoint/token-request-body.js';

describe('hasDuplicateTopLevelKeys', () => {
  it.each([
    ['a key twice', '{"a":1,"a":2}'],
    ['a key twice with another between', '{"a":1,"b":2,"a":3}'],
    ['a key twice with the same value', '{"grant_type":"client_credentials","grant_type":"client_credentials"}'],
    ['the empty key twice', '{"":1,"":2}'],
    ['a key after an object value', '{"a":{"b":1},"a":2}'],
    ['a key after an array value holding the same key', '{"a":[1,{"a":2}],"a":3}'],
    ['whitespace everywhere', ' \n{ "a" : 1 ,\r\n\t"a"\t:\t2 }\n'],
    ['a \\u escape and the letter it stands for', '{"a":1,"\\u0061":2}'],
    ['two spellings of one escape (hex case)', '{"\\u00E9":1,"\\u00e9":2}'],
    ['a \\u escape and the character itself', '{"é":1,"\\u00e9":2}'],
    ['a surrogate pair escape and the character itself', '{"\\ud83d\\ude00":1,"😀":2}'],
    ['an escaped solidus and a plain one', '{"a/b":1,"a\\/b":2}'],
    ['a key with an escaped quote', '{"a\\"b":1,"a\\"b":2}'],
    ['a key ending with an escaped backslash', '{"a\\\\":1,"a\\\\":2}'],
    ['a key after a value ending with an escaped backslash', '{"a":"x\\\\","b":1,"a":2}'],
    ['a key after a value holding braces, commas and quotes', '{"a":"}{,\\"a\\":[","a":2}'],
    ['a key holding a brace, twice', '{"{":1,"{":2}'],
  ])('finds %s', (_, text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(hasDuplicateTopLevelKeys(text)).toBe(true);
  });

  it.each([
    ['an empty object', '{}'],
    ['an empty object in whitespace', ' \n {  } \n'],
    ['one key', '{"a":1}'],
    ['distinct keys', '{"grant_type":"client_credentials","client_id":"a","client_secret":"b","scope":"c"}'],
    ['keys differing in case', '{"A":1,"a":2}'],
    ['keys differing by a trailing space', '{"a":1,"a ":2}'],
    ['the same key nested in a value', '{"a":{"a":1}}'],
    ['the same key twice inside a nested object', '{"a":{"b":1,"b":2}}'],
    ['the same key in objects of an array value', '{"a":[{"b":1},{"b":2}]}'],
    ['a value equal to a key', '{"a":"a","b":"a"}'],
    ['a repeated string in an array value', '{"a":["b","b","b"]}'],
    ['a key holding a comma and the key before it', '{"a":1,"a,b":2}'],
    ['a value holding a repeated key as text', '{"a":"x\\",\\"a\\":1","b":2}'],
    ['a value ending with an escaped backslash, then another key', '{"a":"\\\\","a\\\\":1}'],
    ['a key with an escaped quote and the key without it', '{"a\\"":1,"a":2}'],
    ['composed and decomposed é (JSON compares code units)', '{"\\u00e9":1,"e\\u0301":2}'],
    ['a top-level array of objects with the same key', '[{"a":1,"a":2}]'],
    ['a top-level array of objects sharing keys', '[{"a":1},{"a":2}]'],
    ['a top-level array of repeated strings', '["a","a"]'],
    ['a top-level array of repeated strings after another element', '["x","a","a"]'],
    ['a top-level array of repeated strings after a number', '[1,"a","a"]'],
    ['an empty array', '[]'],
  ])('finds nothing in %s', (_, text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(hasDuplicateTopLevelKeys(text)).toBe(false);
  });

  // The text is checked before or after JSON.parse refuses it; either way it must not throw.
  it.each(['', '{', '{"a', '{"a":1,"a', '{"a\\', '"a"', '}}]]', '{"\\u00ZZ":1}'])('answers without throwing for the malformed text %j', (text) => {
    expect(typeof hasDuplicateTopLevelKeys(text)).toBe('boolean');
  });
});
