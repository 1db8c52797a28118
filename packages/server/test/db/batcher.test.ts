/**
 * TenantBatcher (db/batcher.ts), the group commit: one flush per tenant per
 * batch, results in submission order; with `overlap`, a second flush starts only once the first
 * reported `locked`, and callers learn their outcome in flush order even when a later flush
 * answers first.
 */
import { describe, expect, it } from 'vitest';
import { TenantBatcher } from '../../src/db/batcher.js';

/** A promise with its resolve function. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('TenantBatcher', () => {
  it('writes what was queued together, one flush per tenant, each caller getting its own result', async () => {
    const flushes: [string, number[]][] = [];
    const b = new TenantBatcher<number, number>(
      async (tenant, items) => {
        flushes.push([tenant, items]);
        return items.map((i) => i * 10);
      },
      { maxInFlight: 1, maxBatch: 100 },
    );
    const out = await Promise.all([b.submit('a', 1), b.submit('b', 2), b.submit('a', 3)]);
    expect(out).toEqual([10, 20, 30]);
    expect(flushes).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
  });

  it('rejects every caller of a failed tenant flush and not the others', async () => {
    const b = new TenantBatcher<number, number>(
      async (tenant, items) => {
        if (tenant === 'bad') throw new Error('boom');
        return items;
      },
      { maxInFlight: 1, maxBatch: 100 },
    );
    const results = await Promise.allSettled([b.submit('bad', 1), b.submit('good', 2), b.submit('bad', 3)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
  });

  it('with overlap, starts the next flush only after the current one is locked, and settles in flush order', async () => {
    const started: number[][] = [];
    const lockGates: (() => void)[] = [];
    const finish: ReturnType<typeof deferred<void>>[] = [];
    const b = new TenantBatcher<number, number>(
      async (_tenant, items, locked) => {
        started.push(items);
        lockGates.push(locked);
        const done = deferred();
        finish.push(done);
        await done.promise;
        return items;
      },
      { maxInFlight: 2, maxBatch: 100, overlap: true },
    );
    const settled: number[] = [];
    const p1 = b.submit('t', 1).then((v) => settled.push(v));
    await tick();
    const p2 = b.submit('t', 2).then((v) => settled.push(v));
    await tick();
    await tick();
    expect(started).toEqual([[1]]); // the first flush has not reported its lock yet
    lockGates[0]!();
    await tick();
    await tick();
    expect(started).toEqual([[1], [2]]);
    // The second flush answers first; its caller still learns after the first flush's caller.
    finish[1]!.resolve();
    await tick();
    expect(settled).toEqual([]);
    finish[0]!.resolve();
    await Promise.all([p1, p2]);
    expect(settled).toEqual([1, 2]);
  });

  it('with readAhead, the next flush starts before the current one is locked, and its ready settles only once every earlier one is', async () => {
    const started: number[][] = [];
    const lockGates: (() => void)[] = [];
    const readies: boolean[] = [];
    const finish = deferred();
    const b = new TenantBatcher<number, number>(
      async (_tenant, items, locked, ready) => {
        const k = started.push(items) - 1;
        lockGates.push(locked);
        readies[k] = false;
        void ready.then(() => (readies[k] = true));
        await ready;
        await finish.promise;
        return items;
      },
      { maxInFlight: 3, maxBatch: 1, overlap: true, readAhead: 1 },
    );
    const all = [1, 2, 3].map((i) => b.submit('t', i));
    for (let i = 0; i < 4; i++) await tick();
    // One flush may read ahead of the unlocked first one; the third waits for a lock report.
    expect(started).toEqual([[1], [2]]);
    expect(readies).toEqual([true, false]);
    lockGates[0]!();
    for (let i = 0; i < 4; i++) await tick();
    expect(started).toEqual([[1], [2], [3]]);
    expect(readies).toEqual([true, true, false]);
    lockGates[1]!();
    lockGates[2]!();
    finish.resolve();
    expect(await Promise.all(all)).toEqual([1, 2, 3]);
    expect(readies).toEqual([true, true, true]);
  });

  it('with readAhead, a flush that fails before locking still lets the later ones take their turn after the earlier ones', async () => {
    const order: string[] = [];
    const gate = deferred();
    const b = new TenantBatcher<number, number>(
      async (_t, items, locked, ready) => {
        const [i] = items;
        if (i === 2) throw new Error('read failed');
        await ready;
        order.push(`lock ${i}`);
        if (i === 1) await gate.promise;
        locked();
        return items;
      },
      { maxInFlight: 3, maxBatch: 1, overlap: true, readAhead: 1 },
    );
    const all = Promise.allSettled([1, 2, 3].map((i) => b.submit('t', i)));
    for (let i = 0; i < 6; i++) await tick();
    expect(order).toEqual(['lock 1']); // flush 3 waits for flush 1 although flush 2 failed at once
    gate.resolve();
    expect((await all).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(order).toEqual(['lock 1', 'lock 3']);
  });

  it('with overlap, a flush that fails before locking does not block the next one', async () => {
    let calls = 0;
    const b = new TenantBatcher<number, number>(
      async (_t, items) => {
        calls++;
        if (calls === 1) throw new Error('no connection');
        return items;
      },
      { maxInFlight: 2, maxBatch: 1, overlap: true },
    );
    const results = await Promise.allSettled([b.submit('t', 1), b.submit('t', 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
  });

  it('add() queues without a promise: the items are flushed; a failed flush is dropped (no unhandled rejection) and the next ones go on', async () => {
    const seen: string[] = [];
    const tried: string[] = [];
    const b = new TenantBatcher<string, undefined>(
      async (tenant, items) => {
        tried.push(tenant);
        if (tenant === 'bad') throw new Error('down');
        seen.push(...items);
        return items.map(() => undefined);
      },
      { maxInFlight: 1, maxBatch: 100, delayMs: 1 },
    );
    b.add('t', 'm1');
    b.add('t', 'm2');
    b.add('bad', 'm3');
    await b.drain();
    b.add('t', 'm4');
    await b.drain();
    expect(seen).toEqual(['m1', 'm2', 'm4']);
    expect(tried).toEqual(['t', 'bad', 't']);
  });

  it('with a delay, a queue already holding maxBatch items flushes at once', async () => {
    const flushed: number[][] = [];
    const b = new TenantBatcher<number, number>(
      async (_t, items) => {
        flushed.push(items);
        return items;
      },
      { maxInFlight: 1, maxBatch: 2, delayMs: 60_000 },
    );
    const full = Promise.all([b.submit('t', 1), b.submit('t', 2)]);
    expect(await full).toEqual([1, 2]);
    expect(flushed).toEqual([[1, 2]]);
    // One item alone waits for the delay.
    void b.submit('t', 3);
    for (let i = 0; i < 5; i++) await tick();
    expect(flushed).toEqual([[1, 2]]);
  });

  it('without overlap keeps at most maxInFlight flushes running', async () => {
    let running = 0;
    let most = 0;
    const b = new TenantBatcher<number, number>(
      async (_t, items) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return items;
      },
      { maxInFlight: 1, maxBatch: 1 },
    );
    await Promise.all([1, 2, 3, 4].map((i) => b.submit('t', i)));
    expect(most).toBe(1);
    await b.drain();
  });
});
