/**
 * Webhook outbox queries (design §8.11). Enqueue functions run in a tenant-scoped transaction;
 * {@link claimDue} is the delivery worker's cross-tenant claim (call it inside `crossTenant`).
 *
 * Row life cycle: `pending` -> `delivered` | `failed` (after the last attempt) | `cancelled`
 * (the device's webhook URL was cleared, or the device was revoked or deleted, before delivery).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { col, unnestRows } from '../../db/unnest.js';
import { WEBHOOK_EVENTS, type WebhookPayload } from './events.js';

/** Raw statements answer `{rows}` on both drivers. */
type Rows<T> = { rows: T[] };

/** Devices (aliased `d`) that may receive webhooks: a URL registered, not revoked, not deleted. */
export const RECEIVES = sql`d.webhook_url is not null and d.deleted_at is null and d.status <> 'REVOKED'`;

/**
 * Insert one pending delivery of `payload` per device of the audience with a webhook URL, in one
 * statement: the listed `deviceIds`, plus every ACTIVE owner device of the tenant when `owners`.
 * Answers the number of rows inserted.
 */
export async function insertForAudience(
  tx: Tx,
  tenantId: string,
  audience: { deviceIds: string[]; owners: boolean },
  payload: WebhookPayload,
): Promise<number> {
  const res = (await tx.execute(sql`
    insert into webhook_deliveries (id, tenant_id, device_id, event_type, payload)
    select gen_random_uuid(), d.tenant_id, d.id, ${payload.type}::text, ${JSON.stringify(payload)}::jsonb
    from devices d
    where d.tenant_id = ${tenantId} and ${RECEIVES}
      and (d.id = any(${sql.param(audience.deviceIds)}::uuid[])
           or (${audience.owners}::boolean and d.kind = 'owner' and d.status = 'ACTIVE'))
    returning id`)) as unknown as Rows<{ id: string }>;
  return res.rows.length;
}

/** One payload of {@link insertForEach} and the devices it goes to (those with a webhook URL get a row). */
export interface PayloadFor {
  payload: WebhookPayload;
  deviceIds: readonly string[];
}

/**
 * The insert of the pending deliveries of several payloads, whatever their number, as a CTE body
 * for the caller's statement (db/unnest.ts `withAll`), always the same text (empty lists insert
 * nothing): per payload, one row per listed device of the tenant with a webhook URL.
 */
export function insertForEach(tenantId: string, list: readonly PayloadFor[]): SQL {
  const targets = list.flatMap((p, i) => p.deviceIds.map((deviceId) => ({ deviceId, i: i + 1 })));
  return sql`
    insert into webhook_deliveries (id, tenant_id, device_id, event_type, payload)
    select gen_random_uuid(), d.tenant_id, d.id, p.type, p.payload
    from ${unnestRows(targets, [col<(typeof targets)[number]>('device_id', 'uuid', (t) => t.deviceId), col<(typeof targets)[number]>('i', 'int', (t) => t.i)], 't')}
    join ${unnestRows(list, [col<PayloadFor>('type', 'text', (p) => p.payload.type), col<PayloadFor>('payload', 'jsonb', (p) => p.payload)], 'p', 'i')} on p.i = t.i
    join devices d on d.id = t.device_id
    where d.tenant_id = ${tenantId} and ${RECEIVES}`;
}

/** `messages.created_at` in ISO 8601 UTC with milliseconds, exactly as `Date.toISOString()` writes it. */
const CREATED_ISO = sql`to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The `insert` of `message.received` deliveries for the messages of `source` (a relation with the
 * columns of `messages`, such as the `insert … returning` of the message group commit, so the
 * deliveries commit with the messages: outbox pattern), only for recipients with a webhook URL.
 * Meant as a data-modifying CTE of the writer's statement. The body is built here from the stored
 * row with the fields `events.ts` documents for `message` (no ciphertext, no header);
 * `test/webhooks/webhooks.test.ts` checks it equals `toWebhookPayload('message', …)`.
 */
export function messageDeliveriesFrom(source: SQL): SQL {
  const type = WEBHOOK_EVENTS.message!.type;
  return sql`
    insert into webhook_deliveries (id, tenant_id, device_id, event_type, payload)
    select gen_random_uuid(), m.tenant_id, m.recipient_device_id, ${type}::text,
           jsonb_build_object('type', ${type}::text, 'timestamp', ${CREATED_ISO}, 'data', jsonb_build_object(
             'message_id', m.id, 'conversation_id', m.conversation_id, 'message_group_id', m.group_id,
             'topic_id', m.topic_id, 'sender_device_id', m.sender_device_id, 'message_type', m.message_type,
             'priority', m.priority, 'timestamp', ${CREATED_ISO}))
    from ${source} m join devices d on d.id = m.recipient_device_id
    where ${RECEIVES}`;
}

/** A claimed delivery with its device's CURRENT webhook URL and secret (null when cleared or gone). */
export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  device_id: string;
  payload: WebhookPayload;
  /** Attempts made before this one. */
  attempts: number;
  webhook_url: string | null;
  webhook_secret: string | null;
}

/**
 * Claim up to `limit` due pending deliveries (`next_attempt_at <= now()`) with
 * `FOR UPDATE SKIP LOCKED`, so concurrent workers (several instances) never claim the same row,
 * and lease them for `leaseMs` (`next_attempt_at` moved forward): a worker that dies mid-delivery
 * leaves the row to be retried once the lease lapses (at-least-once; the `webhook-id` is stable).
 * Rows whose device can no longer receive are answered with null URL / secret. Cross-tenant.
 */
export async function claimDue(tx: Tx, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const res = (await tx.execute(sql`
    with due as (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}::integer
      for update skip locked
    )
    update webhook_deliveries w
    set next_attempt_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
    from due, devices d
    where w.id = due.id and d.id = w.device_id
    returning w.id, w.tenant_id, w.device_id, w.payload, w.attempts,
              case when ${RECEIVES} then d.webhook_url end as webhook_url,
              case when ${RECEIVES} then d.webhook_secret end as webhook_secret`)) as unknown as Rows<ClaimedDelivery>;
  return res.rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as WebhookPayload) : r.payload }));
}

/** Mark deliveries `cancelled` (their device can no longer receive webhooks). */
export async function cancel(tx: Tx, ids: string[]): Promise<void> {
  await tx.execute(sql`update webhook_deliveries set status = 'cancelled' where id = any(${sql.param(ids)}::uuid[]) and status = 'pending'`);
}

/** The outcome of one attempt: `status` the HTTP status (null when no answer), `error` a short reason. */
export interface AttemptOutcome {
  status: number | null;
  error: string | null;
}

/** Record a successful attempt: `delivered`, attempts + 1. */
export async function markDelivered(tx: Tx, id: string, outcome: AttemptOutcome): Promise<void> {
  await tx.execute(sql`
    update webhook_deliveries
    set status = 'delivered', attempts = attempts + 1, delivered_at = now(), last_status = ${outcome.status}::integer, last_error = null
    where id = ${id}`);
}

/**
 * Record a failed attempt: attempts + 1 and, when `retryInMs` is a number, the next attempt that
 * many milliseconds from now; when it is null, the delivery is `failed` for good.
 */
export async function markFailed(tx: Tx, id: string, outcome: AttemptOutcome, retryInMs: number | null): Promise<void> {
  await tx.execute(sql`
    update webhook_deliveries
    set attempts = attempts + 1, last_status = ${outcome.status}::integer, last_error = ${outcome.error}::text,
        status = ${retryInMs === null ? 'failed' : 'pending'}::text,
        next_attempt_at = now() + ${retryInMs ?? 0}::float8 * interval '1 millisecond'
    where id = ${id}`);
}
