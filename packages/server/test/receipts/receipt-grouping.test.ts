/**
 * receipts/publisher.ts `groupRows`: grouping by nested keys gives the groups a joined string key
 * gives (same members, same first-seen order, rows sorted by `order`), on random rows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupRows } from '../../src/modules/receipts/publisher.js';

type Row = { thread: string; sender_device_id: string; recipient_device_id: string; seq: number };

/** The reference: one joined key per row. */
function byJoinedKey(rows: readonly Row[]): Row[][] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.thread}:${r.sender_device_id}:${r.recipient_device_id}`;
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.seq - b.seq));
}

describe('groupRows', () => {
  it('nested keys group as a joined key does', () => {
    const id = fc.constantFrom('a', 'b', 'c');
    const row = fc.record({ thread: id, sender_device_id: id, recipient_device_id: id, seq: fc.integer({ min: 0, max: 1000 }) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 60 }), (rows) => {
        const nested = groupRows(rows, [(r) => r.thread, (r) => r.sender_device_id, (r) => r.recipient_device_id], (r) => r.seq);
        const expected = byJoinedKey(rows);
        expect(nested.map((g) => g.rows)).toEqual(expected);
        expect(nested.map((g) => g.first)).toEqual(expected.map((g) => g[0]));
      }),
    );
  });
});
