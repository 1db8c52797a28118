/**
 * PostgreSQL array literals (`{a,b,c}`) for hot-path bulk statements (`unnest($1::uuid[], …)`):
 * the pg client would quote and escape every element of a JS array parameter; elements drawn from
 * a closed alphabet (UUIDs, integers, ISO 8601 times, enum words) need neither, so the literal is
 * one `join` checked by one regex pass (PostgreSQL docs, "Array Value Input").
 */

/** The pattern of a whole array literal whose elements all match `element` (a regex source). */
export function wholeList(element: string): RegExp {
  return new RegExp(`^\\{(?:(?:${element})(?:,(?:${element}))*)?\\}$`);
}

/** UUIDs in their text form. */
export const UUIDS = wholeList('[0-9a-fA-F-]{36}');
/** Integers (decimal, optionally negative). */
export const INTS = wholeList('-?\\d+');
/** Words needing no quoting: enum values, hex ids, ISO 8601 times; `NULL` is the null element. */
export const WORDS = wholeList('[A-Za-z0-9_:.+-]+');

/**
 * The array literal of `values`, checked against `list` (one of the patterns above, or another
 * from {@link wholeList}).
 * @throws Error when an element does not match (a bug upstream: the values are validated before).
 */
export function arrayLiteral(values: readonly (string | number)[], list: RegExp): string {
  const literal = `{${values.join(',')}}`;
  if (!list.test(literal)) throw new Error('array literal with an unexpected element');
  return literal;
}
