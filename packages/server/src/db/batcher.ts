/**
 * Group commit for hot-path writes. Items queued while a flush is running are written together by
 * the next flush: one transaction per tenant per flush, up to `maxInFlight` flushes at once. Each
 * caller's promise settles when its own item is committed (or its batch failed), so "acknowledge
 * only after commit" (design §6) holds for every item.
 *
 * With `overlap`, the next flush starts only once every earlier flush has reported that it holds
 * its tenants' ordering locks (the `locked` callback of `flushTenant`): it then waits behind them
 * in the database's lock queue, already sent, and commits right after them, in submission order.
 * With `readAhead` r > 0, up to r further flushes start before that, and each one's `ready` promise
 * settles once every earlier flush has reported `locked`: such a flush does its reads at once and
 * waits on `ready` before it asks for its ordering lock, so the submission order still holds.
 */
export interface BatcherOptions {
  /** Concurrent flushes (PostgreSQL: a few pool connections; PGlite: 1). */
  maxInFlight: number;
  /** Most items in one flush. */
  maxBatch: number;
  /**
   * Wait this long after the first queued item before flushing (0: next turn of the event loop);
   * a queue already holding `maxBatch` items flushes on the next turn.
   */
  delayMs?: number;
  /**
   * Start a flush while earlier ones are still committing, but only after each of them called
   * `locked` (see the class docs); needs `maxInFlight` > 1 to matter.
   */
  overlap?: boolean;
  /**
   * With `overlap`: flushes that may start before the earlier ones reported `locked` (default 0);
   * they must await their `ready` before taking their ordering lock (see the class docs).
   */
  readAhead?: number;
  /** Told of every committed tenant flush: its item count and duration in seconds (metrics). */
  observe?: (size: number, seconds: number) => void;
}

const ignore = () => undefined;

interface Pending<I, R> {
  tenantId: string;
  item: I;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

export class TenantBatcher<I, R> {
  private queue: Pending<I, R>[] = [];
  private inFlight = 0;
  /** Flushes started that have not yet reported `locked` for every tenant (or settled). */
  private unlocked = 0;
  /** Settles once every flush started so far has reported `locked` for every tenant (or settled). */
  private allLocked: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** The pending delayed flush (`delayMs`), if any. */
  private delay: NodeJS.Timeout | undefined;
  /** Settles once every flush started so far has told its callers. */
  private settled: Promise<void> = Promise.resolve();

  /**
   * @param flushTenant writes one tenant's items in one transaction and returns one result per
   *   item, in order; calls `locked` once it holds the tenant's ordering lock (with `overlap`), and
   *   asks for that lock only once `ready` has settled (with `readAhead`; it never rejects).
   */
  constructor(
    private readonly flushTenant: (tenantId: string, items: I[], locked: () => void, ready: Promise<void>) => Promise<R[]>,
    private readonly opts: BatcherOptions,
  ) {}

  /**
   * Queue `item` for `tenantId` without waiting for it (no promise per item: delivery receipts,
   * best effort); nobody hears of a failed flush but `flushTenant` itself.
   */
  add(tenantId: string, item: I): void {
    this.queue.push({ tenantId, item, resolve: ignore, reject: ignore });
    this.schedule();
  }

  /** Queue `item` for `tenantId`; resolves with its result once committed. */
  submit(tenantId: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ tenantId, item, resolve, reject });
      this.schedule();
    });
  }

  private canStart(): boolean {
    return this.inFlight < this.opts.maxInFlight && this.queue.length > 0 && this.unlocked <= (this.opts.readAhead ?? 0);
  }

  private schedule(): void {
    // A full batch does not wait for the delay: a backlog drains at full speed.
    const full = this.queue.length >= this.opts.maxBatch;
    if (this.delay && full) {
      clearTimeout(this.delay);
      this.delay = undefined;
      this.scheduled = false;
    }
    if (this.scheduled || !this.canStart()) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.delay = undefined;
      this.flush();
    };
    if (this.opts.delayMs && !full) this.delay = setTimeout(run, this.opts.delayMs).unref();
    else setImmediate(run);
  }

  private flush(): void {
    if (!this.canStart()) return;
    const batch = this.queue.splice(0, this.opts.maxBatch);
    this.inFlight++;
    const byTenant = new Map<string, Pending<I, R>[]>();
    for (const p of batch) {
      const list = byTenant.get(p.tenantId);
      if (list) list.push(p);
      else byTenant.set(p.tenantId, [p]);
    }
    // Without `overlap` a flush counts as locked at once; with it, when its last tenant reports.
    let waiting = this.opts.overlap ? byTenant.size : 0;
    if (waiting > 0) this.unlocked++;
    const ready = this.allLocked;
    let allLocked: () => void = ignore;
    this.allLocked = Promise.all([ready, new Promise<void>((r) => (allLocked = r))]).then(ignore);
    if (waiting === 0) allLocked();
    const lockedOne = () => {
      if (waiting > 0 && --waiting === 0) {
        this.unlocked--;
        allLocked();
        this.schedule();
      }
    };
    // Callers learn their outcome in flush order, even when a later flush's answer arrives first.
    const prior = this.settled;
    const work = [...byTenant].map(async ([tenantId, list]) => {
      let reported = false;
      const locked = () => {
        if (!reported) {
          reported = true;
          lockedOne();
        }
      };
      let settle: () => void;
      try {
        const started = performance.now();
        const results = await this.flushTenant(
          tenantId,
          list.map((p) => p.item),
          locked,
          ready,
        );
        this.opts.observe?.(list.length, (performance.now() - started) / 1000);
        settle = () => list.forEach((p, i) => p.resolve(results[i]!));
      } catch (err) {
        settle = () => list.forEach((p) => p.reject(err));
      } finally {
        locked();
      }
      await prior;
      settle();
    });
    this.settled = Promise.all(work).then(() => undefined);
    void this.settled.finally(() => {
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
