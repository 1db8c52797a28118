/**
 * Push-token and push-outbox queries (design §8.36 "Push delivery"). Everything runs in a
 * tenant-scoped transaction but {@link claimDue}, the worker's cross-tenant claim (call it inside
 * `crossTenant`).
 *
 * A `push_deliveries` row is the collapse window of one registration and push kind (db/schema/push.ts):
 * `pending` -> (attempt) -> `sent` (or `pending` again when events arrived during the attempt) |
 * `pending` with a later `next_attempt_at` (retry) | `failed`; a new event makes a `sent` or `failed`
 * row `pending` again, due no sooner than {@link COLLAPSE_WINDOW_MS} after its last push.
 */
import { asc, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pushTokens } from '../../db/schema/index.js';
import { col, unnestRows } from '../../db/unnest.js';
import { COLLAPSE_WINDOW_MS, type PushKind, type PushPayload } from './payload.js';

export type PushTokenRow = typeof pushTokens.$inferSelect;

/** Raw statements answer `{rows}` on both drivers. */
type Rows<T> = { rows: T[] };

/**
 * Insert a push token, or return the existing row for the same (device, token) with its platform
 * updated: registration is idempotent.
 */
export async function upsertPushToken(tx: Tx, row: typeof pushTokens.$inferInsert): Promise<PushTokenRow> {
  const [saved] = await tx
    .insert(pushTokens)
    .values(row)
    .onConflictDoUpdate({ target: [pushTokens.deviceId, pushTokens.token], set: { platform: sql`excluded.platform` } })
    .returning();
  return saved!;
}

/** The tenant's registrations, oldest first (tokens included: the caller leaves them out of answers). */
export function listPushTokens(tx: Tx): Promise<PushTokenRow[]> {
  return tx.select().from(pushTokens).orderBy(asc(pushTokens.createdAt), asc(pushTokens.id));
}

/** Delete one registration of the scoped tenant (its outbox rows go with it); answers it, or undefined when there is none. */
export async function deletePushToken(tx: Tx, id: string): Promise<PushTokenRow | undefined> {
  const [gone] = await tx.delete(pushTokens).where(eq(pushTokens.id, id)).returning();
  return gone;
}

/** A registration that may be woken: its id and device. */
export interface PushTarget {
  push_token_id: string;
  device_id: string;
}

/**
 * The registrations of the audience's ACTIVE, not deleted devices in the scoped tenant: the listed
 * `deviceIds`, plus every owner device when `owners`; never those of `exclude` (the sender).
 */
export async function targetsOf(tx: Tx, audience: { deviceIds: readonly string[]; owners: boolean }, exclude: string | undefined): Promise<PushTarget[]> {
  const res = (await tx.execute(sql`
    select t.id as push_token_id, t.device_id
    from push_tokens t join devices d on d.id = t.device_id
    where d.status = 'ACTIVE' and d.deleted_at is null
      and (t.device_id = any(${sql.param([...audience.deviceIds])}::uuid[]) or (${audience.owners}::boolean and d.kind = 'owner'))
      and t.device_id is distinct from ${exclude ?? null}::uuid`)) as unknown as Rows<PushTarget>;
  return res.rows;
}

/** The display name of device `id` when the scoped tenant can see it. */
export async function deviceName(tx: Tx, id: string): Promise<string | undefined> {
  const res = (await tx.execute(sql`select name from devices where id = ${id}::uuid`)) as unknown as Rows<{ name: string }>;
  return res.rows[0]?.name;
}

/** What {@link enqueue} stores: the push's metadata without the per-row fields (`tenant_id`, `device_id`, `count`). */
export type StoredPayload = Omit<PushPayload, 'tenant_id' | 'device_id' | 'count'>;

/**
 * Add `events` events of `kind` (the newest described by `payload`) to the outbox row of each
 * registration in `tokenIds` (one statement): a pending row counts them and takes the newest
 * payload; a `sent` or `failed` row becomes pending, due at once or {@link COLLAPSE_WINDOW_MS} after
 * its last push, whichever is later.
 */
export async function enqueue(tx: Tx, tokenIds: readonly string[], kind: PushKind, payload: StoredPayload, urgent: boolean, events = 1): Promise<void> {
  if (tokenIds.length === 0) return;
  await tx.execute(sql`
    insert into push_deliveries as p (push_token_id, kind, tenant_id, device_id, payload, count, urgent)
    select t.id, ${kind}::text, t.tenant_id, t.device_id, ${JSON.stringify(payload)}::jsonb, ${events}::integer, ${urgent}::boolean
    from push_tokens t where t.id = any(${sql.param([...tokenIds])}::uuid[])
    on conflict (push_token_id, kind) do update set
      payload = excluded.payload,
      count = case when p.status = 'pending' then p.count + excluded.count else excluded.count end,
      urgent = case when p.status = 'pending' then p.urgent or excluded.urgent else excluded.urgent end,
      attempts = case when p.status = 'pending' then p.attempts else 0 end,
      next_attempt_at = case when p.status = 'pending' then p.next_attempt_at
        else greatest(now(), coalesce(p.last_sent_at + ${COLLAPSE_WINDOW_MS}::float8 * interval '1 millisecond', now())) end,
      status = 'pending'`);
}

/** A claimed outbox row with its registration. */
export interface ClaimedPush {
  push_token_id: string;
  kind: PushKind;
  tenant_id: string;
  device_id: string;
  payload: StoredPayload;
  /** Events this attempt carries. */
  count: number;
  urgent: boolean;
  /** Attempts made before this one. */
  attempts: number;
  platform: string;
  token: string;
}

/**
 * Claim up to `limit` due pending rows with `FOR UPDATE SKIP LOCKED` (concurrent workers never claim
 * the same row) and lease them for `leaseMs` (`next_attempt_at` moved forward: a worker that dies
 * mid-send leaves the row to be retried when the lease lapses). The attempt carries the row's
 * `count` (kept in `sending_count`). Cross-tenant.
 */
export async function claimDue(tx: Tx, limit: number, leaseMs: number): Promise<ClaimedPush[]> {
  const res = (await tx.execute(sql`
    with due as (
      select push_token_id, kind from push_deliveries
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}::integer
      for update skip locked
    )
    update push_deliveries p
    set next_attempt_at = now() + ${leaseMs}::float8 * interval '1 millisecond', sending_count = p.count
    from due, push_tokens t
    where p.push_token_id = due.push_token_id and p.kind = due.kind and t.id = p.push_token_id
    returning p.push_token_id, p.kind, p.tenant_id, p.device_id, p.payload, p.count, p.urgent, p.attempts, t.platform, t.token`)) as unknown as Rows<ClaimedPush>;
  return res.rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as StoredPayload) : r.payload }));
}

/** The outcome of one attempt: `status` the HTTP status (null when no answer), `error` a short reason. */
export interface AttemptOutcome {
  status: number | null;
  error: string | null;
}

/** A sent push: its outbox row and the push service's HTTP status. */
export interface SentPush {
  push_token_id: string;
  kind: string;
  status: number | null;
}

/**
 * Record sent pushes, one statement for all of them: the events each carried leave its count; a
 * row stays pending (due a collapse window later) when more arrived during the attempt, else it is
 * `sent`.
 */
export async function markSent(tx: Tx, sent: readonly SentPush[]): Promise<void> {
  if (sent.length === 0) return;
  const v = unnestRows(sent, [col('push_token_id', 'uuid', (r) => r.push_token_id), col('kind', 'text', (r) => r.kind), col('status', 'int', (r) => r.status)], 'v');
  await tx.execute(sql`
    update push_deliveries d
    set status = case when d.count - d.sending_count > 0 then 'pending' else 'sent' end,
        urgent = case when d.count - d.sending_count > 0 then d.urgent else false end,
        count = d.count - d.sending_count, sending_count = 0, attempts = 0, last_sent_at = now(),
        next_attempt_at = now() + ${COLLAPSE_WINDOW_MS}::float8 * interval '1 millisecond',
        last_status = v.status, last_error = null
    from ${v}
    where d.push_token_id = v.push_token_id and d.kind = v.kind`);
}

/**
 * Record a failed attempt: attempts + 1 and, when `retryInMs` is a number, the next attempt that
 * many milliseconds from now; when it is null, the row is `failed` and its events dropped.
 */
export async function markFailed(tx: Tx, key: { push_token_id: string; kind: string }, outcome: AttemptOutcome, retryInMs: number | null): Promise<void> {
  await tx.execute(sql`
    update push_deliveries
    set attempts = attempts + 1, sending_count = 0, last_status = ${outcome.status}::integer, last_error = ${outcome.error}::text,
        status = ${retryInMs === null ? 'failed' : 'pending'}::text,
        count = case when ${retryInMs === null}::boolean then 0 else count end,
        next_attempt_at = now() + ${retryInMs ?? 0}::float8 * interval '1 millisecond'
    where push_token_id = ${key.push_token_id}::uuid and kind = ${key.kind}`);
}
