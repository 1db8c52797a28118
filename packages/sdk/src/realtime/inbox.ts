/**
 * The realtime client's receiving side for conversation messages (design §6 catch-up by cursor;
 * contract §6.1): the catch-up sources and their resume positions, live messages held back while
 * their source catches up, de-duplication by message id, the in-memory history, and receipts
 * learnt from history. See the `RealtimeClient` file comment for the guarantees (order per
 * conversation, the reorder window, the rewind after close 1012).
 */
import type { StoredMessage } from '@parley/protocol';
import type { Outbox, OutboxEntry } from './outbox.js';
import type { ResolvedOptions } from './options.js';
import type { MessageStatusTracker } from './status.js';
import { RealtimeError, type CatchUpSource } from './types.js';
import { RecentSet, type Position } from './wire.js';


/** A catch-up source and where it stands. */
export interface SourceState {
  source: CatchUpSource;
  pos: Position;
  /** Where the last completed catch-up ended (the rewind point after close 1012). */
  caughtUpAt?: Position;
  /** Cursors received live within the reorder window, oldest first. */
  recent: { cursor: string; at: number }[];
  /** Newest cursor received live longer ago than the reorder window on this connection. */
  settled?: Position;
  syncing: boolean;
  failed: boolean;
}

/** What the inbox needs of its client. */
export interface InboxHost {
  /** Generation of the current connection (work of an older one is dropped). */
  generation(): number;
  /** Report a failure not tied to a call (`catch_up_failed`). */
  error(err: RealtimeError): void;
  /** Hand a new message to the `message` listeners, in order. */
  handOver(message: StoredMessage): void;
}

const EPOCH = '1970-01-01T00:00:00.000Z';

/** Catch-up sources, live messages, de-duplication and history of one realtime client (see the file comment). */
export class Inbox {
  private readonly sources: SourceState[];
  private readonly seen: RecentSet;
  private liveBuffer: StoredMessage[] = [];
  private readonly _history: StoredMessage[] = [];
  private syncRetryTimer: ReturnType<typeof setTimeout> | undefined;
  private syncRetryDelay = 1000;

  constructor(
    private readonly host: InboxHost,
    private readonly outbox: Outbox,
    private readonly statuses: MessageStatusTracker,
    private readonly opts: Pick<ResolvedOptions, 'historySize' | 'catchUpPageSize' | 'maxCatchUpPages' | 'reorderWindowMs'>,
    private readonly compare: (a: string, b: string) => number,
    sources: CatchUpSource[],
    initialCursors: Record<string, string> | undefined,
    dedupeSize: number,
  ) {
    this.seen = new RecentSet(Math.max(dedupeSize, opts.historySize));
    this.sources = sources.map((source) => ({ source, pos: initialCursors?.[source.key], syncing: false, failed: false, recent: [] }));
  }

  /** Add a catch-up source read from `cursor` (default: the beginning); undefined when its key is present already. */
  add(source: CatchUpSource, cursor?: string): SourceState | undefined {
    if (this.sources.some((s) => s.source.key === source.key)) return undefined;
    const state: SourceState = { source, pos: cursor ?? null, syncing: false, failed: false, recent: [] };
    this.sources.push(state);
    return state;
  }

  /** Current resume point per catch-up source key. */
  cursors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of this.sources) if (typeof s.pos === 'string') out[s.source.key] = s.pos;
    return out;
  }

  /** The last received messages (at most `historySize`), oldest first; optionally of one conversation. */
  history(conversationId?: string): StoredMessage[] {
    return conversationId === undefined ? [...this._history] : this._history.filter((m) => m.conversation_id === conversationId);
  }

  /** The sources' positions now (kept with a sent frame: a reconciliation starts catch-up no later). */
  snapshot(): Map<string, Position> {
    return new Map(this.sources.map((s) => [s.source.key, s.pos]));
  }

  /** Remember an id (message or room message) as received, so a later copy is skipped. */
  markSeen(id: string): void {
    this.seen.add(id);
  }

  /** True the first time `id` is seen (and remembers it); false for a duplicate. */
  firstSight(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    return true;
  }

  /** A live `message` frame: held back while its source catches up, else handed over. */
  onLiveMessage(m: StoredMessage): void {
    if (this.sources.some((s) => s.syncing && s.source.covers(m))) this.liveBuffer.push(m);
    else this.deliver(m);
  }

  /** A new connection is authenticated: failed catch-ups retry after 1 s again. */
  resetRetry(): void {
    this.syncRetryDelay = 1000;
  }

  /** Cancel a pending catch-up retry (the connection ended). */
  cancelRetry(): void {
    if (this.syncRetryTimer !== undefined) clearTimeout(this.syncRetryTimer);
    this.syncRetryTimer = undefined;
  }

  /**
   * The socket dropped (close `code`): catch-up stops, and each source resumes below live messages
   * that may have overtaken others (the reorder window), or where its catch-up ended after 1012.
   */
  onDisconnect(code: number | undefined): void {
    for (const s of this.sources) s.syncing = false;
    for (const s of this.sources) {
      this.settle(s, Date.now());
      const safe = code === 1012 ? s.caughtUpAt : this.maxPos(s.caughtUpAt, s.settled);
      if (safe !== undefined && s.caughtUpAt !== undefined) s.pos = this.minPos(s.pos, safe);
      s.recent = [];
      s.settled = undefined;
    }
    this.liveBuffer = [];
  }

  /**
   * Catch up `states` (default: every source) on connection `gen`; when `reconcile`, also settle
   * the outbox's messages that were sent but not acknowledged before the last disconnect.
   */
  async sync(gen: number, states: SourceState[] = this.sources, reconcile = false): Promise<void> {
    const unconfirmed = reconcile ? this.outbox.takeUnconfirmed() : [];
    for (const s of states) s.syncing = true;
    const results = await Promise.all(states.map((s) => this.readFrom(s, unconfirmed)));
    if (gen !== this.host.generation()) {
      // Disconnected meanwhile: try again on the next connection.
      this.outbox.restoreUnconfirmed(unconfirmed);
      return;
    }
    const allOk = states.length > 0 && results.every((r) => r.ok);
    const fetched: StoredMessage[] = [];
    for (const r of results) {
      fetched.push(...r.messages);
      r.s.syncing = false;
      r.s.failed = !r.ok;
      r.s.pos = this.maxPos(r.s.pos, r.pos);
      if (r.ok) r.s.caughtUpAt = r.s.pos;
    }
    if (unconfirmed.length > 0) this.outbox.reconcile(unconfirmed, fetched, allOk, (id) => this.seen.add(id));

    this.statuses.fromHistory(fetched);
    const batch = [...fetched, ...this.liveBuffer.splice(0)];
    const unique = new Map<string, StoredMessage>();
    for (const m of batch) if (!unique.has(m.message_id)) unique.set(m.message_id, m);
    const ordered = [...unique.values()].sort((a, b) => this.compare(a.cursor, b.cursor));
    for (const m of ordered) this.deliver(m);

    const failed = this.sources.filter((s) => s.failed);
    if (failed.length > 0) {
      const delay = this.syncRetryDelay;
      this.syncRetryDelay = Math.min(30_000, this.syncRetryDelay * 2);
      if (this.syncRetryTimer !== undefined) clearTimeout(this.syncRetryTimer);
      this.syncRetryTimer = setTimeout(() => {
        if (gen === this.host.generation()) void this.sync(gen, this.sources.filter((s) => s.failed), false);
      }, delay);
    }
  }

  /**
   * Receipts missed while disconnected: one page of history per catch-up source from just before
   * the oldest sent message of it still unread (its `delivered_at` / `read_at`). Best effort; a
   * failure is reported as `catch_up_failed`.
   */
  async refreshStatuses(gen: number): Promise<void> {
    const open = this.statuses.outstanding().filter((m) => m.conversation_id !== undefined);
    for (const s of this.sources) {
      const times = open
        .filter((m) => m.timestamp !== undefined && s.source.covers({ conversation_id: m.conversation_id } as StoredMessage))
        .map((m) => Date.parse(m.timestamp!))
        .filter((t) => !Number.isNaN(t));
      if (times.length === 0) continue;
      // `since` is exclusive: a millisecond before the oldest unread message's commit time.
      const since = new Date(Math.min(...times) - 1).toISOString();
      try {
        const page = await s.source.fetchPage(since, this.opts.catchUpPageSize);
        if (gen !== this.host.generation()) return;
        this.statuses.fromHistory(page.messages);
      } catch (err) {
        this.host.error(new RealtimeError('catch_up_failed', `refreshing receipts of ${s.source.key} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
      }
    }
  }

  /** Read one source from its position (no later than the snapshots of `unconfirmed` frames), reporting failures. */
  private async readFrom(s: SourceState, unconfirmed: readonly OutboxEntry[]): Promise<{ s: SourceState; ok: boolean; messages: StoredMessage[]; pos: Position }> {
    let from = s.pos;
    for (const e of unconfirmed) if (e.snapshot?.has(s.source.key)) from = this.minPos(from, e.snapshot.get(s.source.key));
    try {
      const r = await this.readSource(s, from);
      if (!r.complete) {
        this.host.error(new RealtimeError('catch_up_failed', `catch-up of ${s.source.key} stopped after ${this.opts.maxCatchUpPages} pages; resuming later`));
      }
      return { s, ok: r.complete, messages: r.messages, pos: r.pos };
    } catch (err) {
      this.host.error(new RealtimeError('catch_up_failed', `catch-up of ${s.source.key} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
      return { s, ok: false, messages: [], pos: s.pos };
    }
  }

  /** Read one source from `from` to its end. Returns the messages and the new position. */
  private async readSource(s: SourceState, from: Position): Promise<{ messages: StoredMessage[]; pos: Position; complete: boolean }> {
    if (from === undefined) {
      // Bootstrap: only learn the newest cursor (history before the client started is not replayed).
      const page = await s.source.fetchPage(undefined, 1);
      return { messages: [], pos: page.next_cursor ?? page.messages.at(-1)?.cursor ?? null, complete: true };
    }
    const messages: StoredMessage[] = [];
    let pos: Position = from;
    const size = this.opts.catchUpPageSize;
    for (let i = 0; i < this.opts.maxCatchUpPages; i++) {
      const page = await s.source.fetchPage(pos === null ? EPOCH : pos, size);
      messages.push(...page.messages);
      const next = page.next_cursor ?? page.messages.at(-1)?.cursor ?? null;
      if (next !== null) pos = next;
      if (page.messages.length < size || next === null) return { messages, pos, complete: true };
    }
    return { messages, pos, complete: false };
  }

  /** Move live cursors older than the reorder window into `settled`. */
  private settle(s: SourceState, now: number): void {
    while (s.recent.length > 0 && s.recent[0]!.at <= now - this.opts.reorderWindowMs) s.settled = this.maxPos(s.settled, s.recent.shift()!.cursor);
  }

  private maxPos(a: Position, b: Position): Position {
    if (typeof a !== 'string') return typeof b === 'string' ? b : a === null || b === null ? null : undefined;
    if (typeof b !== 'string') return a;
    return this.compare(a, b) >= 0 ? a : b;
  }

  private minPos(a: Position, b: Position): Position {
    if (a === null || b === null) return null;
    if (a === undefined) return b;
    if (b === undefined) return a;
    return this.compare(a, b) <= 0 ? a : b;
  }

  private deliver(m: StoredMessage): void {
    if (this.seen.has(m.message_id)) return;
    this.seen.add(m.message_id);
    const now = Date.now();
    for (const s of this.sources) {
      if (!s.syncing && !s.failed && s.pos !== undefined && s.source.covers(m)) {
        s.pos = this.maxPos(s.pos, m.cursor);
        s.recent.push({ cursor: m.cursor, at: now });
        this.settle(s, now);
      }
    }
    this._history.push(m);
    if (this._history.length > this.opts.historySize) this._history.splice(0, this._history.length - this.opts.historySize);
    this.host.handOver(m);
  }
}
