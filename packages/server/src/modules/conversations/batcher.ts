/**
 * Group commit for hot-path writes. Items queued while a flush is running are written together by
 * the next flush: one transaction per tenant per flush, up to `maxInFlight` flushes at once. Each
 * caller's promise settles when its own item is committed (or its batch failed), so "acknowledge
 * only after commit" (DESIGN §6) holds for every item.
 */
export interface BatcherOptions {
  /** Concurrent flushes (PostgreSQL: a few pool connections; PGlite: 1). */
  maxInFlight: number;
  /** Most items in one flush. */
  maxBatch: number;
  /** Wait this long after the first queued item before flushing (0: next turn of the event loop). */
  delayMs?: number;
  /** Told of every committed tenant flush: its item count and duration in seconds (metrics). */
  observe?: (size: number, seconds: number) => void;
}

interface Pending<I, R> {
  tenantId: string;
  item: I;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

export class TenantBatcher<I, R> {
  private queue: Pending<I, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  /**
   * @param flushTenant writes one tenant's items in one transaction and returns one result per
   *   item, in order.
   */
  constructor(
    private readonly flushTenant: (tenantId: string, items: I[]) => Promise<R[]>,
    private readonly opts: BatcherOptions,
  ) {}

  /** Queue `item` for `tenantId`; resolves with its result once committed. */
  submit(tenantId: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ tenantId, item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.flush();
    };
    if (this.opts.delayMs) setTimeout(run, this.opts.delayMs).unref();
    else setImmediate(run);
  }

  private flush(): void {
    if (this.inFlight >= this.opts.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.opts.maxBatch);
    this.inFlight++;
    const byTenant = new Map<string, Pending<I, R>[]>();
    for (const p of batch) {
      const list = byTenant.get(p.tenantId);
      if (list) list.push(p);
      else byTenant.set(p.tenantId, [p]);
    }
    const work = [...byTenant].map(async ([tenantId, list]) => {
      try {
        const started = performance.now();
        const results = await this.flushTenant(
          tenantId,
          list.map((p) => p.item),
        );
        this.opts.observe?.(list.length, (performance.now() - started) / 1000);
        list.forEach((p, i) => p.resolve(results[i]!));
      } catch (err) {
        for (const p of list) p.reject(err);
      }
    });
    void Promise.all(work).finally(() => {
      this.inFlight--;
      this.schedule();
    });
    this.schedule();
  }

  /** Resolves when nothing is queued or in flight (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  }
}
