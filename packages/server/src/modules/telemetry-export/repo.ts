/**
 * Telemetry export queries (docs/decisions.md "Telemetry export"): the tenant's endpoint setting
 * and the export outbox. Setting and load functions run in a tenant-scoped transaction;
 * {@link claimDue} is the worker's cross-tenant claim (call it inside `crossTenant`).
 *
 * Outbox rows are inserted by the statement triggers of migration 0036 (never here), claimed with
 * `FOR UPDATE SKIP LOCKED` plus a lease, and deleted once exported.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { auditEvents, telemetryExportOutbox, telemetryExportSettings, telemetrySpans } from '../../db/schema/index.js';

export type ExportSettingRow = typeof telemetryExportSettings.$inferSelect;
export type SpanRow = typeof telemetrySpans.$inferSelect;
export type AuditRow = typeof auditEvents.$inferSelect;

/** What an outbox row forwards: a span or an audit event. */
export type ExportKind = 'span' | 'audit';

/** The tenant's export setting, or undefined when none is set. */
export async function getSetting(tx: Tx, tenantId: string): Promise<ExportSettingRow | undefined> {
  const [row] = await tx.select().from(telemetryExportSettings).where(eq(telemetryExportSettings.tenantId, tenantId));
  return row;
}

/** Insert or replace the tenant's setting (`headers` already sealed); answers the stored row. */
export async function upsertSetting(tx: Tx, row: { tenantId: string; url: string; headers: string | null; headerNames: string[]; updatedBy: string }): Promise<ExportSettingRow> {
  const values = { ...row, updatedAt: new Date() };
  const [out] = await tx
    .insert(telemetryExportSettings)
    .values(values)
    .onConflictDoUpdate({ target: telemetryExportSettings.tenantId, set: { url: values.url, headers: values.headers, headerNames: values.headerNames, updatedBy: values.updatedBy, updatedAt: values.updatedAt } })
    .returning();
  return out!;
}

/** Delete the tenant's setting and its whole outbox backlog; answers whether a setting existed. */
export async function deleteSetting(tx: Tx, tenantId: string): Promise<boolean> {
  const gone = await tx.delete(telemetryExportSettings).where(eq(telemetryExportSettings.tenantId, tenantId)).returning({ tenantId: telemetryExportSettings.tenantId });
  await tx.delete(telemetryExportOutbox).where(eq(telemetryExportOutbox.tenantId, tenantId));
  return gone.length > 0;
}

/** The tenant's backlog: rows waiting and the newest `last_error` among them (null when none failed). */
export async function backlog(tx: Tx, tenantId: string): Promise<{ pending: number; lastError: string | null }> {
  const o = telemetryExportOutbox;
  const [row] = await tx
    .select({
      pending: sql<number>`count(*)::int`,
      lastError: sql<string | null>`(array_agg(${o.lastError} order by ${o.nextAttemptAt} desc) filter (where ${o.lastError} is not null))[1]`,
    })
    .from(o)
    .where(eq(o.tenantId, tenantId));
  return { pending: row?.pending ?? 0, lastError: row?.lastError ?? null };
}

/** A claimed outbox row. */
export interface ClaimedExport {
  id: string;
  tenant_id: string;
  kind: ExportKind;
  ref_id: string;
  /** Attempts made before this one. */
  attempts: number;
}

/** Raw statements answer `{rows}` on both drivers. */
type Rows<T> = { rows: T[] };

/**
 * Claim up to `limit` due outbox rows (`next_attempt_at <= now()`, oldest first) with
 * `FOR UPDATE SKIP LOCKED`, so concurrent workers (several instances) never claim the same row,
 * and lease them for `leaseMs` (`next_attempt_at` moved forward): rows of a worker that dies
 * mid-export come back once the lease lapses. Cross-tenant.
 */
export async function claimDue(tx: Tx, limit: number, leaseMs: number): Promise<ClaimedExport[]> {
  const res = (await tx.execute(sql`
    with due as (
      select id from telemetry_export_outbox
      where next_attempt_at <= now()
      order by next_attempt_at, created_at
      limit ${limit}::integer
      for update skip locked
    )
    update telemetry_export_outbox o
    set next_attempt_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
    from due
    where o.id = due.id
    returning o.id, o.tenant_id, o.kind, o.ref_id, o.attempts`)) as unknown as Rows<ClaimedExport>;
  return res.rows;
}

/** The spans with these ids (missing ones — pruned since — are simply absent). */
export const spansByIds = (tx: Tx, ids: string[]): Promise<SpanRow[]> =>
  ids.length === 0 ? Promise.resolve([]) : tx.select().from(telemetrySpans).where(inArray(telemetrySpans.id, ids));

/** The audit events with these ids, in chain order. */
export const auditByIds = (tx: Tx, tenantId: string, ids: string[]): Promise<AuditRow[]> =>
  ids.length === 0 ? Promise.resolve([]) : tx.select().from(auditEvents).where(and(eq(auditEvents.tenantId, tenantId), inArray(auditEvents.id, ids))).orderBy(auditEvents.seq);

/** Delete exported (or no longer exportable) outbox rows. */
export async function deleteRows(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length > 0) await tx.delete(telemetryExportOutbox).where(inArray(telemetryExportOutbox.id, ids));
}

/** Record a failed attempt for these rows: attempts + 1, `error`, next attempt `retryInMs` from now. */
export async function markRetry(tx: Tx, ids: string[], error: string, retryInMs: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute(sql`
    update telemetry_export_outbox
    set attempts = attempts + 1, last_error = ${error}::text, next_attempt_at = now() + ${retryInMs}::float8 * interval '1 millisecond'
    where id = any(${sql.param(ids)}::uuid[])`);
}
