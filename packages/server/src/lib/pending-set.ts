/**
 * Keys of queued work that is not done yet (delivered receipts waiting for their batch), each
 * counted once per {@link PendingSet.add}, with the callers waiting for it: {@link PendingSet.when}
 * answers a promise only for a key that is pending, so the common case (nobody waits) costs one
 * map entry per key. A key stays pending until every add of it was settled, so work of one key
 * split across two batches keeps it pending until the second is done.
 */
export class PendingSet {
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Map<string, (() => void)[]>();

  /** One more piece of work of `key` is queued. */
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** A promise settling when `key` is no longer pending, or undefined when it is not pending. */
  when(key: string): Promise<void> | undefined {
    if (!this.counts.has(key)) return undefined;
    return new Promise((resolve) => {
      const list = this.waiters.get(key);
      if (list) list.push(resolve);
      else this.waiters.set(key, [resolve]);
    });
  }

  /** The work of `keys` (one entry per piece, as added) is done or failed: keys with nothing left are no longer pending, and their waiters resume. */
  settle(keys: Iterable<string>): void {
    for (const key of keys) {
      const n = this.counts.get(key);
      if (n === undefined) continue;
      if (n > 1) {
        this.counts.set(key, n - 1);
        continue;
      }
      this.counts.delete(key);
      const list = this.waiters.get(key);
      if (list) {
        this.waiters.delete(key);
        for (const resolve of list) resolve();
      }
    }
  }
}
