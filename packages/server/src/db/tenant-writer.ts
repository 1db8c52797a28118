/**
 * Hot-path tenant writes (the message group commit, design §6): one statement in
 * a tenant transaction ({@link withTenant}'s role and `app.tenant_id`) that first takes a
 * transaction-scoped advisory lock ({@link xactLock}), acknowledged after COMMIT.
 *
 * On PostgreSQL a write is two round trips on a dedicated connection (node-postgres
 * `pipeline: true`): `BEGIN; set_config(...); pg_advisory_xact_lock(...)` as one simple-protocol
 * query and the statement as a named prepared statement, written together before any answer
 * arrives; then `COMMIT` once the statement's answer is in (or `ROLLBACK` when anything failed).
 * A write's `onLocked` fires when the lock is held, so a caller can queue the next write on another
 * connection behind it (it then waits in PostgreSQL, not in Node, and starts the moment this one
 * commits). On PGlite (in-process, no round trips) the same write runs through drizzle.
 *
 * `pipelineCommit` sends `COMMIT` with the statement (one round trip), and `chain` also sends the
 * write behind the previous chained one on the same connection (the group commits of messages, room
 * messages and ingested spans). The lock still orders writers across instances. Either way a write
 * is answered, and so acknowledged, only after COMMIT; what changes is a process that dies
 * mid-write: its rows may commit without ever being acknowledged or published, as when it dies
 * between COMMIT's answer and the acknowledgement. Their recipients still get them when they catch
 * up from their cursors; the sender, never acknowledged, sees what any lost acknowledgement looks
 * like (docs/decisions.md, "Chained group-commit writes").
 */
import pg from 'pg';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Database, Db } from './client.js';
import { xactLock } from './locks.js';
import { APP_ROLE, withTenant } from './tenant.js';

/** One write: see {@link TenantWriter.write}. */
export interface TenantWrite {
  tenantId: string;
  lockKey?: string;
  name: string;
  statement: SQL;
  onLocked?: () => void;
  /**
   * Send `COMMIT` with the statement, in the same round trip (PostgreSQL), instead of after its
   * answer. Only for reads, and for idempotent writes that nobody is acknowledged on (a process
   * that dies mid-way may leave them committed): one round trip instead of two.
   */
  pipelineCommit?: boolean;
  /**
   * Chain the write (implies `pipelineCommit`): every chained write with the same `lockKey` (or,
   * without one, of the same tenant) goes to the same connection and is sent at once, behind the
   * ones sent before it, without waiting for their answers; the connection keeps their order, so
   * `onLocked` fires as soon as the write is sent. PostgreSQL then runs them back to back, with no
   * round trip to this process between one's COMMIT and the next one's lock (issues 15 and 21). A
   * caller ordering other writes after a chained one must wait for its answer, not `onLocked`.
   */
  chain?: boolean;
  /**
   * Run the named statement on its generic plan (PostgreSQL `plan_cache_mode =
   * force_generic_plan` for this transaction): planned once per connection instead of at every
   * execution. For statements whose plan does not depend on their parameters' values (rows as
   * array parameters), where PostgreSQL kept building a custom plan per flush and planning the
   * room flush's statement cost more than a quarter of its CPU (docs/performance.md, "Rooms",
   * where the time goes). Ignored on PGlite.
   */
  genericPlan?: boolean;
}

/** Writes one statement per call in a (locked) tenant transaction; see the module docs. */
export interface TenantWriter {
  /**
   * Run `statement` in a transaction scoped to `tenantId`, holding the advisory lock `lockKey`
   * when given (`[A-Za-z0-9:_-]+`, as {@link xactLock} names keys), and resolve with its rows
   * after COMMIT.
   * `name` names the prepared statement (the same name must always carry the same SQL text).
   * `onLocked` is called once the lock is held (the scope is set, without a lock), or when the
   * write failed before that.
   * @throws the statement's error (nothing written), or a connection error (outcome unknown, as
   *   with any lost COMMIT).
   */
  write<R>(w: TenantWrite): Promise<R[]>;
  /** Close the writer's own connections (the shared pool is not touched). */
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOCK_KEY = /^[A-Za-z0-9:_-]+$/;

/** The writer for `database`: pipelined connections on PostgreSQL, drizzle on PGlite. */
export function openTenantWriter(database: Database, opts: { connections?: number; onConnectionError?: (err: Error) => void } = {}): TenantWriter {
  return database.raw.kind === 'pg'
    ? new PipelinedTenantWriter(database.raw.url, opts.connections ?? 4, opts.onConnectionError)
    : drizzleTenantWriter(database.db);
}

/** The same write through drizzle's transaction (PGlite, and a reference for tests). */
export function drizzleTenantWriter(db: Db): TenantWriter {
  return {
    write: <R>(w: TenantWrite) =>
      withTenant(db, w.tenantId, async (tx) => {
        try {
          if (w.lockKey !== undefined) await xactLock(tx, w.lockKey);
        } finally {
          w.onLocked?.();
        }
        return ((await tx.execute(w.statement)) as unknown as { rows: R[] }).rows;
      }),
    close: async () => undefined,
  };
}

const dialect = new PgDialect();

/** The slot of chained writes: a hash (FNV-1a) of their lock key (else their tenant) over `size` slots. */
function slotOf(key: string, size: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % size;
}

/**
 * {@link TenantWriter} over `size` node-postgres clients in pipeline mode; each write goes to the
 * client with the fewest writes in flight, where it waits for the write before it (one
 * transaction at a time per connection). A
 * client whose connection fails is dropped (its writes reject) and replaced on the next write.
 */
export class PipelinedTenantWriter implements TenantWriter {
  private readonly clients: (Promise<pg.Client> | undefined)[];
  /** Writes in flight per client slot. */
  private readonly busy: number[];
  /** Settles when the slot's last queued write has finished. */
  private readonly tails: Promise<unknown>[];
  private closed = false;

  constructor(
    private readonly url: string,
    size: number,
    private readonly onConnectionError: (err: Error) => void = () => undefined,
  ) {
    this.clients = new Array(Math.max(1, size)).fill(undefined);
    this.busy = new Array(this.clients.length).fill(0);
    this.tails = this.clients.map(() => Promise.resolve());
  }

  async write<R>(w: TenantWrite): Promise<R[]> {
    if (!UUID.test(w.tenantId)) throw new Error('tenant id is not a UUID');
    if (w.lockKey !== undefined && !LOCK_KEY.test(w.lockKey)) throw new Error('lock key has characters outside [A-Za-z0-9:_-]');
    const { sql: text, params } = dialect.sqlToQuery(w.statement);
    const slot = w.chain ? slotOf(w.lockKey ?? w.tenantId, this.busy.length) : this.busy.indexOf(Math.min(...this.busy));
    this.busy[slot]!++;
    // One transaction at a time per connection: a write waits for the one before it on its slot,
    // for its answer, or only until it was sent when it is chained (its COMMIT goes with it).
    let sent: (() => void) | undefined;
    const queued = w.chain ? new Promise<void>((resolve) => (sent = resolve)) : undefined;
    const run = this.tails[slot]!.then(() => this.run<R>(slot, w, text, params, sent));
    const done = run.catch(() => undefined);
    this.tails[slot] = queued ? Promise.race([queued, done]) : done;
    try {
      return await run;
    } finally {
      this.busy[slot]!--;
    }
  }

  private async run<R>(slot: number, w: TenantWrite, text: string, params: unknown[], sent?: () => void): Promise<R[]> {
    let client: pg.Client;
    try {
      client = await this.client(slot);
    } catch (err) {
      w.onLocked?.();
      throw err;
    }
    // Both values are checked above, so inlining them in the simple-protocol query is safe.
    const lock = w.lockKey === undefined ? '' : `, pg_advisory_xact_lock(hashtextextended('${w.lockKey}', 0))`;
    const generic = w.genericPlan ? `, set_config('plan_cache_mode', 'force_generic_plan', true)` : '';
    const head = client.query(`begin; select set_config('app.tenant_id', '${w.tenantId}', true), set_config('role', '${APP_ROLE}', true)${generic}${lock}`);
    const body = client.query<R & pg.QueryResultRow>({ name: w.name, text, values: params });
    // After a failed statement PostgreSQL answers this COMMIT with ROLLBACK.
    const early = w.pipelineCommit || w.chain ? client.query('commit') : undefined;
    sent?.();
    if (w.chain) w.onLocked?.();
    else
      void head.then(
        () => w.onLocked?.(),
        () => w.onLocked?.(),
      );
    const [headResult, bodyResult] = await Promise.allSettled([head, body]);
    if (headResult.status === 'rejected' || bodyResult.status === 'rejected') {
      await (early ?? client.query('rollback')).catch(() => undefined);
      throw headResult.status === 'rejected' ? headResult.reason : (bodyResult as PromiseRejectedResult).reason;
    }
    // Otherwise COMMIT only once this process has the statement's answer: a process that dies
    // before sending it leaves nothing stored (PostgreSQL rolls the transaction back), so a stored
    // row was at least on its way to being acknowledged and published.
    const done = await (early ?? client.query('commit'));
    if (done.command !== 'COMMIT') throw new Error('tenant write rolled back');
    return bodyResult.value.rows;
  }

  /** The client of slot `i`, connecting it when new or after a failure. */
  private client(i: number): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('tenant writer closed'));
    let pending = this.clients[i];
    if (!pending) {
      const c = new pg.Client({ connectionString: this.url, pipeline: true, application_name: 'parley-tenant-writer' });
      let dropped = false;
      const drop = (err: Error) => {
        if (dropped) return;
        dropped = true;
        if (this.clients[i] === pending) this.clients[i] = undefined;
        if (!this.closed) this.onConnectionError(err);
        void c.end().catch(() => undefined);
      };
      c.on('error', drop);
      c.on('end', () => drop(new Error('tenant writer connection ended')));
      pending = this.clients[i] = c.connect().then(
        () => c,
        (err: Error) => {
          drop(err);
          throw err;
        },
      );
    }
    return pending;
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = this.clients.splice(0);
    await Promise.all(open.map((p) => p?.then((c) => c.end()).catch(() => undefined)));
  }
}
