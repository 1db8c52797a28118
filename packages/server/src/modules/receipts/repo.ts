/**
 * Read-receipt statements (tenant-scoped, one statement per read). Each checks the
 * target, reads the settings that may turn read receipts off, and moves the reader's mark forward
 * in ONE statement (one round trip on the tenant writer); see {@link readConversationStatement}
 * and {@link readRoomStatement}.
 */
import { sql, type SQL } from 'drizzle-orm';

/** What a read statement answers (one row). */
export interface ReadOutcome {
  /** The target is a message (or envelope) addressed to the reader in this conversation (room). */
  found: boolean;
  /** The reader received it (a `message_receipts` row / a `room_receipt_batches` row naming it). */
  received: boolean | null;
  /** Neither the device nor the tenant turned read receipts off. */
  enabled: boolean;
  /** The target's position: its `seq` (conversations) or the reader's release position (rooms). */
  pos: string | number | null;
  /** Set when the mark moved forward: its new time. */
  advanced_at: string | Date | null;
  /** The time of the mark as it was before (null when none). */
  previous_at: string | Date | null;
}

/** A room read also answers the reader's newly covered envelopes, in release order. */
export interface RoomReadOutcome extends ReadOutcome {
  covered: { id: string; sender: string }[] | null;
}

/**
 * Whether read receipts are on for `reader`: the tenant's `read_receipts_enabled` override
 * (`tenant_settings`, RLS shows the tenant's row only; `fallback` when not set) and the device's
 * `read_receipts` flag.
 */
const enabledFor = (reader: string, fallback: boolean) => sql`
  select coalesce((select (s.settings ->> 'read_receipts_enabled')::boolean from tenant_settings s), ${fallback})
     and coalesce((select d.read_receipts from devices d where d.id = ${reader}::uuid), true) as enabled`;

/**
 * The shared tail of a read: the previous mark of (`thread`, `reader`), and the upsert that moves
 * it to `target.pos` when the target was received and read receipts are on; a mark never moves
 * back. Expects CTEs `target (pos, received)` and `opt (enabled)`.
 */
const markCtes = (tenantId: string, thread: string, reader: string) => sql`
  prev as (select up_to, read_at from read_marks where thread_id = ${thread}::uuid and reader_device_id = ${reader}::uuid),
  mark as (
    insert into read_marks (tenant_id, thread_id, reader_device_id, up_to, read_at)
    select ${tenantId}::uuid, ${thread}::uuid, ${reader}::uuid, t.pos, now() from target t, opt
    where opt.enabled and t.received
    on conflict (thread_id, reader_device_id) do update set up_to = excluded.up_to, read_at = excluded.read_at
      where read_marks.up_to < excluded.up_to
    returning up_to, read_at
  )`;

const outcomeColumns = sql`
  exists (select 1 from target) as found, (select received from target) as received, (select enabled from opt) as enabled,
  (select pos from target) as pos, (select read_at from mark) as advanced_at, (select read_at from prev) as previous_at`;

/**
 * Read up to message `upTo` of pairwise conversation `conversationId` by `reader`: the target must
 * be a message of the conversation addressed to the reader; the mark is its `seq`. Answers one
 * {@link ReadOutcome} row.
 */
export function readConversationStatement(tenantId: string, conversationId: string, reader: string, upTo: string, fallback: boolean): SQL {
  return sql`
    with target as (
      select m.seq as pos, exists (select 1 from message_receipts r where r.message_id = m.id) as received from messages m
      where m.id = ${upTo}::uuid and m.conversation_id = ${conversationId}::uuid and m.recipient_device_id = ${reader}::uuid
    ),
    opt as (${enabledFor(reader, fallback)}),
    ${markCtes(tenantId, conversationId, reader)}
    select ${outcomeColumns}`;
}

/**
 * Read up to room message `upTo` of room `roomId` by member `reader`: the target must be an
 * envelope of that message released to the reader (delivered or notified; per-member rows of MLS
 * messages included); the mark is its release position. Also answers the envelopes the mark newly
 * covers, with their senders (`covered`, in release order). Answers one {@link RoomReadOutcome} row.
 */
export function readRoomStatement(tenantId: string, roomId: string, reader: string, upTo: string, fallback: boolean): SQL {
  const released = sql`e.recipient_device_id = ${reader}::uuid and e.release_seq is not null and e.outcome in ('delivered', 'notified')`;
  return sql`
    with target as (
      select e.release_seq as pos,
        exists (select 1 from room_receipt_batches r where r.room_message_id = e.room_message_id and e.recipient_device_id = any(r.recipient_device_ids)) as received
      from room_envelopes e join room_messages m on m.id = e.room_message_id
      where e.room_message_id = ${upTo}::uuid and m.room_id = ${roomId}::uuid and ${released}
    ),
    opt as (${enabledFor(reader, fallback)}),
    ${markCtes(tenantId, roomId, reader)},
    covered as (
      select e.room_message_id as id, m.sender_device_id as sender, e.release_seq as pos
      from mark, room_envelopes e join room_messages m on m.id = e.room_message_id
      where ${released} and m.room_id = ${roomId}::uuid
        and e.release_seq > coalesce((select up_to from prev), 0) and e.release_seq <= mark.up_to
    )
    select ${outcomeColumns},
      (select json_agg(json_build_object('id', c.id, 'sender', c.sender) order by c.pos) from covered c) as covered`;
}
