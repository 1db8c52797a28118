/** timeOrderedId (lib/ids.ts): UUID version 7 of RFC 9562 §5.7 for the hot-path rows. */
import { describe, expect, it } from 'vitest';
import { timeOrderedId, UUID_RE } from '../../src/lib/ids.js';

describe('timeOrderedId', () => {
  it('is a lower-case version 7 UUID with the RFC 9562 variant and the time in its first 48 bits', () => {
    for (const at of [0, 1, Date.UTC(2026, 10, 27), 2 ** 48 - 1]) {
      const id = timeOrderedId(at);
      expect(id).toMatch(UUID_RE);
      expect(id).toBe(id.toLowerCase());
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]!);
      expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    }
  });

  it('sorts by time across milliseconds and never repeats within one', () => {
    const at = Date.now();
    const same = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(at)));
    expect(same.size).toBe(10_000);
    const ids = [at - 1, at, at + 1, at + 1000].map((t) => timeOrderedId(t));
    expect([...ids].sort()).toEqual(ids);
    expect(timeOrderedId(at - 1) < timeOrderedId(at)).toBe(true);
  });

  it('uses the current time by default', () => {
    const before = Date.now();
    const id = timeOrderedId();
    const t = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});
