/**
 * Keys of queued work that is not done yet (a delivered receipt waiting for its batch), each with
 * the callers waiting for it: {@link PendingSet.when} answers a promise only for a key that is
 * pending, so the common case (nobody waits) costs one map entry per key.
 */
export class PendingSet {
  private readonly waiters = new Map<string, (() => void)[] | null>();

  /** Mark `key` pending (again: no-op). */
  add(key: string): void {
    if (!this.waiters.has(key)) this.waiters.set(key, null);
  }

  /** A promise settling when `key` is settled, or undefined when it is not pending. */
  when(key: string): Promise<void> | undefined {
    if (!this.waiters.has(key)) return undefined;
    return new Promise((resolve) => {
      const list = this.waiters.get(key) ?? [];
      list.push(resolve);
      this.waiters.set(key, list);
    });
  }

  /** The work of `keys` is done (or failed): no longer pending, waiters resumed. */
  settle(keys: Iterable<string>): void {
    for (const key of keys) {
      const list = this.waiters.get(key);
      this.waiters.delete(key);
      if (list) for (const resolve of list) resolve();
    }
  }
}
