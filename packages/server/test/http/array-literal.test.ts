/** db/array-literal.ts: elements checked one by one give the literal the whole-list pattern accepted, and refuse what it refused. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { arrayLiteral, elementPattern, INTS, UUIDS, WORDS } from '../../src/db/array-literal.js';

/** The former check: one pattern over the whole joined literal. */
const wholeList = (element: string) => new RegExp(`^\\{(?:(?:${element})(?:,(?:${element}))*)?\\}$`);
const attempt = (values: (string | number)[], el: RegExp) => {
  try {
    return arrayLiteral(values, el);
  } catch {
    return undefined;
  }
};

describe('arrayLiteral', () => {
  it('joins valid elements into one literal', () => {
    expect(arrayLiteral(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'], UUIDS)).toBe(
      '{00000000-0000-4000-8000-000000000001,00000000-0000-4000-8000-000000000002}',
    );
    expect(arrayLiteral([1, -2, '3'], INTS)).toBe('{1,-2,3}');
    expect(arrayLiteral([], WORDS)).toBe('{}');
  });

  it('refuses an element that could split or escape the literal', () => {
    for (const bad of ['a,b', 'a}', '"a"', 'a b', 'a\\b', '', '{a']) expect(() => arrayLiteral(['ok', bad], WORDS)).toThrow(/unexpected element/);
    expect(() => arrayLiteral([1.5], INTS)).toThrow();
    expect(() => arrayLiteral(['00000000-0000-4000-8000-00000000000'], UUIDS)).toThrow();
    // Repeated values (checked once) still have every distinct one checked.
    expect(() => arrayLiteral(['ok', 'ok', 'a,b', 'a,b'], WORDS)).toThrow(/unexpected element/);
    expect(() => arrayLiteral(['a b', 'a b'], WORDS)).toThrow(/unexpected element/);
    expect(() => arrayLiteral([1, 1, 2 ** 60], INTS)).toThrow(/unexpected element/);
    // The first value is always tested, whatever it is.
    expect(() => arrayLiteral([undefined as unknown as string, '00000000-0000-4000-8000-000000000001'], UUIDS)).toThrow(/unexpected element/);
  });

  it('accepts exactly what the whole-list pattern accepted (property)', () => {
    const alphabet = fc.constantFrom(...'0123456789abcdefABCDEF-,{}" \\:.+_NUL'.split(''));
    const value = fc.oneof(fc.string({ unit: alphabet, maxLength: 40 }), fc.uuid(), fc.integer(), fc.constant('NULL'));
    for (const source of ['[0-9a-fA-F-]{36}|NULL', '-?\\d+|NULL', '[A-Za-z0-9_:.+-]+', '[0-9T:.Z+-]+|NULL']) {
      const whole = wholeList(source);
      const el = elementPattern(source);
      fc.assert(
        // Runs of equal values (the repeated-value shortcut) as well as distinct ones.
        fc.property(fc.array(fc.tuple(value, fc.integer({ min: 1, max: 3 })), { maxLength: 6 }).map((runs) => runs.flatMap(([v, n]) => Array<typeof v>(n).fill(v))), (values) => {
          const literal = `{${values.join(',')}}`;
          // The whole-list pattern could accept a literal whose elements differ from `values` (a
          // value holding a comma reads as two, [''] as none); per-element checking refuses those.
          const read = literal === '{}' ? [] : literal.slice(1, -1).split(',');
          const sameElements = read.length === values.length && read.every((r, i) => r === String(values[i]));
          expect(attempt(values, el)).toBe(whole.test(literal) && sameElements ? literal : undefined);
        }),
        { numRuns: 400 },
      );
    }
  });
});
