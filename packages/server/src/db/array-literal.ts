/**
 * PostgreSQL array literals (`{a,b,c}`) for hot-path bulk statements (`unnest($1::uuid[], …)`):
 * the pg client would quote and escape every element of a JS array parameter; elements drawn from
 * a closed alphabet (UUIDs, integers, ISO 8601 times, enum words) need neither, so the literal is
 * one `join` of elements each checked against its alphabet (PostgreSQL docs, "Array Value Input").
 *
 * Each element is tested on its own with an anchored pattern: a pattern over the whole joined list
 * (`^\{(?:e)(?:,(?:e))*\}$`) backtracks through the alternation at every comma and cost several
 * times more on the fan-out path. No alphabet holds `,`, `{`, `}`, `"`, `\` or white
 * space, so a checked element can neither split into two nor escape the literal.
 */

/** The anchored pattern of one element (`element` is a regex source, e.g. `[0-9a-f-]{36}|NULL`). */
export function elementPattern(element: string): RegExp {
  return new RegExp(`^(?:${element})$`);
}

/** UUIDs in their text form. */
export const UUIDS = elementPattern('[0-9a-fA-F-]{36}');
/** Integers (decimal, optionally negative). */
export const INTS = elementPattern('-?\\d+');
/** Words needing no quoting: enum values, hex ids, ISO 8601 times; `NULL` is the null element. */
export const WORDS = elementPattern('[A-Za-z0-9_:.+-]+');

/**
 * The array literal of `values`, each checked against `element` (one of the patterns above, or
 * another from {@link elementPattern}; a number checked against {@link INTS} must be a safe
 * integer).
 * @throws Error when an element does not match (a bug upstream: the values are validated before).
 */
export function arrayLiteral(values: readonly (string | number)[], element: RegExp): string {
  // A number checked against INTS needs no string: a safe integer prints as `-?\d+`.
  // A value equal to the one before it has passed already (a message's id repeats over its
  // envelopes, a room's over its messages): no second test.
  const ints = element === INTS;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (i > 0 && v === values[i - 1]) continue;
    if (!(ints && typeof v === 'number' ? Number.isSafeInteger(v) : element.test(String(v)))) throw new Error('array literal with an unexpected element');
  }
  return `{${values.join(',')}}`;
}
