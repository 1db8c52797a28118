/** PendingSet (lib/pending-set.ts): queued delivered receipts that a read waits for. */
import { describe, expect, it } from 'vitest';
import { PendingSet } from '../../src/lib/pending-set.js';

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('PendingSet', () => {
  it('answers undefined for a key that is not pending, before and after its work', () => {
    const s = new PendingSet();
    expect(s.when('a')).toBeUndefined();
    s.add('a');
    s.settle(['a']);
    expect(s.when('a')).toBeUndefined();
    s.settle(['a']); // settling again is harmless
    expect(s.when('a')).toBeUndefined();
  });

  it('keeps a key pending until every add of it is settled, then resumes all its waiters', async () => {
    const s = new PendingSet();
    s.add('m');
    s.add('m');
    s.add('n');
    const first = s.when('m')!;
    const second = s.when('m')!;
    const other = s.when('n')!;
    s.settle(['m', 'n']); // one batch held one piece of m (the other is in the next batch) and n
    expect(await settled(other)).toBe(true);
    expect(await settled(first)).toBe(false);
    expect(s.when('m')).toBeInstanceOf(Promise);
    s.settle(['m']);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
    expect(s.when('m')).toBeUndefined();
  });
});
