/** Runs asynchronous operations one after another per key, in call order (Node and browsers). */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /**
   * Run `op` once every earlier operation queued under `key` has settled (fulfilled or
   * rejected); resolves or rejects as `op` does. Keys with nothing queued hold no memory.
   */
  run<T>(key: string, op: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(op, op);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Resolves once every operation queued so far, under any key, has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
