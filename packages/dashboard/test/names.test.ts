/**
 * Member labels (lib/names.ts; design §8.5): device id → name, short id when unknown.
 */
import { describe, expect, it } from 'vitest';
import { nameMap, nameOf, pairLabel, shortId } from '../src/lib/names';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';

describe('names', () => {
  const names = nameMap([
    { device_id: A, name: 'alpha' },
    { device_id: B, name: 'beta' },
    { device_id: C, name: '  ' },
  ]);

  it('maps known device ids to names and unknown ones to a short id', () => {
    expect(nameOf(names, A)).toBe('alpha');
    expect(nameOf(names, '44444444-4444-4444-8444-444444444444')).toBe('44444444…');
    expect(nameOf(names, C)).toBe('33333333…');
    expect(nameOf(names, null)).toBe('—');
    expect(nameOf(nameMap(undefined), B)).toBe('22222222…');
  });

  it('labels a pairwise session by both names', () => {
    expect(pairLabel(names, [A, B])).toBe('alpha ↔ beta');
    expect(pairLabel(names, [B, 'abc'])).toBe('beta ↔ abc');
  });

  it('keeps short ids whole', () => {
    expect(shortId('abc')).toBe('abc');
    expect(shortId('123456789')).toBe('12345678…');
  });
});
