/**
 * A bounded in-process cache of immutable facts looked up on a send path (a conversation's sides,
 * a topic's group, an A2A channel's parties): a Map that drops its oldest entry once `max` entries
 * are held. Only facts that never change may be kept in it, since another instance cannot evict
 * them.
 */
export class BoundedCache<V> extends Map<string, V> {
  /** @param max the most entries kept (insertion order: the oldest goes first). */
  constructor(private readonly max: number) {
    super();
  }

  override set(key: string, value: V): this {
    if (this.size >= this.max) this.delete(this.keys().next().value as string);
    return super.set(key, value);
  }

  /**
   * The value of `key`: the cached one, else what `load` answers, kept when it is not undefined
   * (a miss is not cached, so a fact created later is found). Errors of `load` propagate.
   */
  async through(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = await load();
    if (value !== undefined) this.set(key, value);
    return value;
  }
}
