/**
 * `MessageStatusTracker`: the status of each message this device sent, as a messenger shows it
 * (docs/decisions.md "Delivery and read receipts"):
 *
 *   pending -> sent -> delivered -> read        (or pending -> failed)
 *
 * - `pending`: accepted by the client, not yet stored by the service (in the outbound queue, or
 *   sent and awaiting its ack); keyed by the send frame's `client_ref` until stored.
 * - `sent`: stored by the service (the `message_ack`, or the REST answer); keyed by its id from
 *   then on (the client_ref stays an alias).
 * - `delivered`: every recipient device received it (`message_delivered` /
 *   `room_message_delivered`, or `delivered_at` in history / a room timeline).
 * - `read`: every recipient device read it (`message_read`: the reader's mark covers its cursor;
 *   `room_message_read`; or `read_at` in history / a timeline). A read implies the delivery.
 * - `failed`: the outbound queue gave up (a refusal by the service, or its retries were used up,
 *   or the connection ended for good); terminal.
 *
 * Per recipient: pairwise messages have one recipient (the peer; whichever device reports is it);
 * a room message expects the recipients its ack named (every outcome but `blocked`), so it is
 * `delivered` / `read` once all of them are, and `recipients` tells who already is. Receipts never
 * move a status back, and receipts that arrive before the message is known (its ack is late) are
 * kept and applied when it is. At most `limit` messages are tracked (oldest forgotten first).
 */
import type { MessageDeliveredEvent, MessageReadEvent, RoomMessageDeliveredEvent, RoomMessageReadEvent, StoredMessage } from '@parley/protocol';
import { TypedEmitter } from './emitter.js';

/** Status of a sent message (see the file comment). */
export type MessageStatus = 'pending' | 'sent' | 'delivered' | 'read' | 'failed';

/** One recipient device's receipt times (ISO 8601). */
export interface RecipientReceipt {
  device_id: string;
  delivered_at?: string;
  read_at?: string;
}

/** What the tracker knows of one sent message (the `status` event's payload). */
export interface MessageStatusInfo {
  /** The service's id (message_id, or room_message_id) once stored. */
  message_id?: string;
  /** The client_ref of its send frame, when it went through a queue. */
  client_ref?: string;
  conversation_id?: string;
  room_id?: string;
  /** Its cursor (pairwise conversations: a read mark covers every message up to its cursor). */
  cursor?: string;
  /** Its commit time given by the service (ISO 8601), once stored. */
  timestamp?: string;
  status: MessageStatus;
  /** The previous status (in `status` events). */
  previous?: MessageStatus;
  /** Receipts per recipient device, in the order they first reported. */
  recipients: RecipientReceipt[];
  /** Room messages: the recipients whose receipts complete the status (the ack's non-blocked outcomes). */
  expected?: string[];
  /** Why it failed (`failed`). */
  error?: string;
  /** ISO 8601 time of the last change. */
  updated_at: string;
}

/** Events of {@link MessageStatusTracker}. */
export interface MessageStatusEvents {
  /** A tracked message's status or receipts changed. */
  status: (info: MessageStatusInfo) => void;
}

/** Where a message was sent: a pairwise conversation or a room. */
export type StatusTarget = { conversation_id: string; room_id?: undefined } | { room_id: string; conversation_id?: undefined };

/** A stored message as {@link MessageStatusTracker.sent} takes it. */
export interface StoredRef {
  message_id: string;
  cursor?: string;
  /** The service's commit time (ISO 8601). */
  timestamp?: string;
  /** Room messages: the recipients expected to report (others are ignored). */
  expected?: string[];
}

/** Options of {@link MessageStatusTracker}. */
export interface MessageStatusOptions {
  /** Most messages tracked (default 1 000). */
  limit?: number;
  /** Cursor order (default: decimal strings numerically, others lexicographically). */
  compareCursors?: (a: string, b: string) => number;
}

const RANK: Record<MessageStatus, number> = { failed: -1, pending: 0, sent: 1, delivered: 2, read: 3 };
/**
 * The later of two statuses in `pending -> sent -> delivered -> read` (a status never goes back);
 * `failed` replaces only `pending` (or nothing). For views that keep statuses of their own (the
 * owner web app's chat log).
 */
export function laterStatus(current: MessageStatus | undefined, next: MessageStatus): MessageStatus {
  if (current === undefined) return next;
  if (next === 'failed') return current === 'pending' ? 'failed' : current;
  if (current === 'failed') return next === 'pending' ? current : next;
  return RANK[next] > RANK[current] ? next : current;
}

/**
 * The status a recipient's receipt times give a stored message: `read` with a read time,
 * `delivered` with a delivery time, else `sent` (history entries, room timeline deliveries).
 */
export function statusOfReceipt(r: { delivered_at?: string | null; read_at?: string | null }): MessageStatus {
  return r.read_at ? 'read' : r.delivered_at ? 'delivered' : 'sent';
}

/** The recipient of a pairwise message as history reports it (history does not name it). */
const UNNAMED = '';
const EARLY_LIMIT = 1000;

function numericFirst(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tracks the status of sent messages from acks, receipts and history (see the file comment). */
export class MessageStatusTracker extends TypedEmitter<MessageStatusEvents> {
  private readonly entries = new Map<string, MessageStatusInfo>();
  /** client_ref / message_id -> the key of its entry. */
  private readonly alias = new Map<string, string>();
  /** Receipts for message ids not known yet (oldest first). */
  private readonly early = new Map<string, RecipientReceipt[]>();
  /** Pairwise read marks by conversation: reader -> (cursor, time). */
  private readonly marks = new Map<string, Map<string, { cursor: string; at: string }>>();
  private readonly limit: number;
  private readonly compare: (a: string, b: string) => number;

  constructor(options: MessageStatusOptions = {}) {
    super();
    this.limit = Math.max(1, options.limit ?? 1000);
    this.compare = options.compareCursors ?? numericFirst;
  }

  /** The status of a message by its id or its client_ref. */
  get(idOrRef: string): MessageStatusInfo | undefined {
    const key = this.alias.get(idOrRef);
    const e = key === undefined ? undefined : this.entries.get(key);
    return e ? copy(e) : undefined;
  }

  /** Messages stored but not read by every recipient yet (for a refresh from history after a reconnect). */
  outstanding(): MessageStatusInfo[] {
    return [...this.entries.values()].filter((e) => e.message_id !== undefined && (e.status === 'sent' || e.status === 'delivered')).map(copy);
  }

  /** A message entered the outbound queue (or a REST send started). */
  pending(ref: string, target: StatusTarget): void {
    if (this.alias.has(ref)) return;
    const e: MessageStatusInfo = { client_ref: ref, ...target, status: 'pending', recipients: [], updated_at: new Date().toISOString() };
    this.add(ref, e);
    this.emit('status', copy(e));
  }

  /**
   * The service stored a message (its ack): tracked from now on by its id. `ref` is the client_ref
   * it was pending under, if any. Receipts that arrived first are applied.
   */
  sent(ref: string | undefined, target: StatusTarget, stored: StoredRef): void {
    const key = (ref !== undefined ? this.alias.get(ref) : undefined) ?? this.alias.get(stored.message_id);
    let e = key === undefined ? undefined : this.entries.get(key);
    if (!e) {
      e = { ...target, status: 'pending', recipients: [], updated_at: new Date().toISOString(), ...(ref !== undefined ? { client_ref: ref } : {}) };
      this.add(ref ?? stored.message_id, e);
    }
    if (e.status === 'failed') return;
    e.message_id = stored.message_id;
    if (stored.cursor !== undefined) e.cursor = stored.cursor;
    if (stored.timestamp !== undefined) e.timestamp = stored.timestamp;
    if (stored.expected !== undefined) e.expected = [...stored.expected];
    this.alias.set(stored.message_id, this.keyOf(e));
    for (const r of this.early.get(stored.message_id) ?? []) merge(e, r);
    this.early.delete(stored.message_id);
    if (e.conversation_id !== undefined && e.cursor !== undefined) {
      for (const [reader, mark] of this.marks.get(e.conversation_id) ?? []) if (this.compare(e.cursor, mark.cursor) <= 0) merge(e, { device_id: reader, read_at: mark.at });
    }
    this.update(e, { floor: 'sent' });
  }

  /** The send failed for good (the queue gave up). A stored message never becomes failed. */
  failed(ref: string, error: string): void {
    const key = this.alias.get(ref);
    const e = key === undefined ? undefined : this.entries.get(key);
    if (!e || e.message_id !== undefined || e.status === 'failed') return;
    e.error = error;
    this.update(e, { force: 'failed' });
  }

  /** A `message_delivered` or `room_message_delivered` frame. */
  delivered(frame: MessageDeliveredEvent | RoomMessageDeliveredEvent): void {
    const ids = 'message_ids' in frame ? frame.message_ids : frame.room_message_ids;
    for (const id of ids) this.receipt(id, { device_id: frame.device_id, delivered_at: frame.delivered_at });
  }

  /**
   * A `message_read` frame (every message of the conversation up to its cursor, for that reader)
   * or a `room_message_read` frame (the listed room messages).
   */
  read(frame: MessageReadEvent | RoomMessageReadEvent): void {
    if ('room_message_ids' in frame) {
      for (const id of frame.room_message_ids) this.receipt(id, { device_id: frame.device_id, read_at: frame.read_at });
      return;
    }
    let marks = this.marks.get(frame.conversation_id);
    if (!marks) this.marks.set(frame.conversation_id, (marks = new Map()));
    const prev = marks.get(frame.device_id);
    if (!prev || this.compare(prev.cursor, frame.cursor) < 0) marks.set(frame.device_id, { cursor: frame.cursor, at: frame.read_at });
    for (const e of this.entries.values()) {
      if (e.conversation_id === frame.conversation_id && e.cursor !== undefined && this.compare(e.cursor, frame.cursor) <= 0) {
        this.update(e, { touched: merge(e, { device_id: frame.device_id, read_at: frame.read_at }) });
      }
    }
    this.receipt(frame.up_to_message_id, { device_id: frame.device_id, read_at: frame.read_at });
  }

  /**
   * Receipt times of tracked messages from history entries (the recipient's `delivered_at` /
   * `read_at`; history does not name the recipient, so it counts as the message's one recipient).
   * Untracked messages are ignored.
   */
  fromHistory(messages: readonly StoredMessage[]): void {
    for (const m of messages) {
      const key = this.alias.get(m.message_id);
      const e = key === undefined ? undefined : this.entries.get(key);
      if (!e || (!m.delivered_at && !m.read_at)) continue;
      this.update(e, { touched: merge(e, { device_id: UNNAMED, ...(m.delivered_at ? { delivered_at: m.delivered_at } : {}), ...(m.read_at ? { read_at: m.read_at } : {}) }) });
    }
  }

  /** Receipt times of tracked room messages from room timeline entries (each delivery's `delivered_at` / `read_at`). */
  fromTimeline(entries: readonly { room_message_id: string; deliveries: { recipient_device_id: string; delivered_at?: string | null; read_at?: string | null }[] }[]): void {
    for (const entry of entries) {
      const key = this.alias.get(entry.room_message_id);
      const e = key === undefined ? undefined : this.entries.get(key);
      if (!e) continue;
      let touched = false;
      for (const d of entry.deliveries) {
        if (!d.delivered_at && !d.read_at) continue;
        touched = merge(e, { device_id: d.recipient_device_id, ...(d.delivered_at ? { delivered_at: d.delivered_at } : {}), ...(d.read_at ? { read_at: d.read_at } : {}) }) || touched;
      }
      this.update(e, { touched });
    }
  }

  // ------------------------------------------------------------------ internals

  private receipt(id: string, r: RecipientReceipt): void {
    const key = this.alias.get(id);
    const e = key === undefined ? undefined : this.entries.get(key);
    if (!e) {
      const list = this.early.get(id) ?? [];
      list.push(r);
      this.early.set(id, list);
      if (this.early.size > EARLY_LIMIT) this.early.delete(this.early.keys().next().value as string);
      return;
    }
    this.update(e, { touched: merge(e, r) });
  }

  private keyOf(e: MessageStatusInfo): string {
    return e.client_ref ?? e.message_id!;
  }

  private add(key: string, e: MessageStatusInfo): void {
    this.entries.set(key, e);
    this.alias.set(key, key);
    while (this.entries.size > this.limit) {
      const [oldKey, old] = this.entries.entries().next().value as [string, MessageStatusInfo];
      this.entries.delete(oldKey);
      for (const k of [old.client_ref, old.message_id]) if (k !== undefined && this.alias.get(k) === oldKey) this.alias.delete(k);
    }
  }

  /**
   * Recompute the status (never backwards; at least `floor`; exactly `force`) and emit when it or
   * the receipts (`touched`) changed.
   */
  private update(e: MessageStatusInfo, how: { floor?: MessageStatus; force?: MessageStatus; touched?: boolean } = {}): void {
    const before = e.status;
    let next: MessageStatus = how.force ?? before;
    if (!how.force && before !== 'failed' && e.message_id !== undefined) {
      for (const s of [how.floor, derive(e)]) if (s && RANK[s] > RANK[next]) next = s;
    }
    if (next === before && !how.touched) return;
    e.previous = before;
    e.status = next;
    e.updated_at = new Date().toISOString();
    this.emit('status', copy(e));
  }
}

/**
 * Merge one recipient's receipt times into an entry (keeping the first times); answers whether
 * anything was new. A history receipt ({@link UNNAMED} recipient) and a named one of a pairwise
 * message are the same recipient: the name replaces the placeholder.
 */
function merge(e: MessageStatusInfo, r: RecipientReceipt): boolean {
  if (e.expected && r.device_id !== UNNAMED && !e.expected.includes(r.device_id)) return false;
  let cur = e.recipients.find((x) => x.device_id === r.device_id);
  if (!cur && !e.expected && e.recipients.length === 1) {
    const only = e.recipients[0]!;
    if (r.device_id === UNNAMED) cur = only;
    else if (only.device_id === UNNAMED) (cur = only).device_id = r.device_id;
  }
  if (!cur) e.recipients.push((cur = { device_id: r.device_id }));
  let dirty = false;
  const read = r.read_at;
  const delivered = r.delivered_at ?? read; // a read implies the delivery
  if (delivered && !cur.delivered_at) {
    cur.delivered_at = delivered;
    dirty = true;
  }
  if (read && !cur.read_at) {
    cur.read_at = read;
    dirty = true;
  }
  return dirty;
}

/** The status the receipts give (stored messages). */
function derive(e: MessageStatusInfo): MessageStatus {
  const of = (pred: (r: RecipientReceipt) => boolean) =>
    e.expected && e.expected.length > 0 ? e.expected.every((d) => e.recipients.some((r) => r.device_id === d && pred(r))) : e.recipients.some(pred);
  if (of((r) => r.read_at !== undefined)) return 'read';
  if (of((r) => r.delivered_at !== undefined)) return 'delivered';
  return 'sent';
}

function copy(e: MessageStatusInfo): MessageStatusInfo {
  return { ...e, recipients: e.recipients.map((r) => ({ ...r })), ...(e.expected ? { expected: [...e.expected] } : {}) };
}
