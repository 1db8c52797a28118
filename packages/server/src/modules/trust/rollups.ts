/**
 * Daily span roll-ups of the trust engine (contract §3.9, §4.14; design §8.14; docs/decisions.md
 * "Trust engine": roll-ups and span retention). The engine reads a day's span signals from ONE
 * row of `telemetry_span_rollups` per (device, UTC day) instead of scanning the day's raw spans:
 *
 * - Every INSERT into telemetry_spans marks the (device, day) pairs it touched in
 *   `telemetry_rollup_dirty` (a statement trigger, migration 0025), late spans of a past day too.
 * - {@link rollUpDirtyDays} (run by the recompute before it reads, in its own transaction)
 *   deletes the tenant's marks of CLOSED days (before the recompute's day), then rebuilds those
 *   pairs' roll-ups from raw spans with {@link rollupSelect}, one statement per day, and the same
 *   pairs' token roll-ups of spend caps (spend/rollups.ts `rebuildTokenRollups`): both roll-ups
 *   consume the same marks in the same transaction.
 * - {@link readSpanDays} answers the roll-ups of [fromDay, today) plus today's partial day computed
 *   live from raw spans (start ≤ now) with the same {@link rollupSelect}: one definition of what a
 *   day's spans mean, stored or not.
 * - {@link pruneSpans} deletes raw spans older than the retention whose pair is not marked
 *   (rolled up), in bounded batches; roll-ups are kept.
 *
 * A day's roll-up depends on that day's spans only: an error span is "recovered" when an OK span
 * (status ≠ 2) of the same device, trace and name starts later on the SAME UTC day.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { SPAN_FAILED, SPAN_ROLE, SPAN_TOKENS } from '../../lib/span-attrs.js';
import { rebuildTokenRollups } from '../spend/index.js';
import { addDays, dayStart, utcDay } from '../../lib/days.js';
import type { DailySignals } from './types.js';

/** Spans the service itself writes on the agent's device (tier changes): not agent behaviour, never scored. */
export const SERVICE_SPAN = 'svc.trust';

/** `work_mem` of the roll-up and extraction transactions (SET LOCAL): the span hash aggregate and the window sort stay in memory. */
export const ROLLUP_WORK_MEM = '64MB';

/** One (device, UTC day) of span signals, as stored in telemetry_span_rollups (or computed live for today). */
export type SpanDay = Pick<
  DailySignals,
  'day' | 'spans' | 'errorSpans' | 'tasks' | 'tasksOk' | 'tools' | 'toolsOk' | 'taskTokens' | 'taskTokensOk' | 'recoveredErrors' | 'spanNames'
> & {
  deviceId: string;
  /** By resource `service.version`: spans, errors, first start time (epoch ms). */
  versions: Record<string, { spans: number; errors: number; firstSeenMs: number }>;
};

/** Rows of a raw `execute` (both drivers answer `{ rows }`). */
async function rows<T>(tx: Tx, q: SQL): Promise<T[]> {
  return ((await tx.execute(q)) as unknown as { rows: T[] }).rows;
}
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

/**
 * The span signals of ONE UTC day per device: spans of the tenant with `start_time` in
 * [dayStart(day), until) (`until` ≤ the next day's start; [dayStart(day), until] when `inclusive`;
 * `svc.trust` excluded), of `devices` when given, one row per device that has any. Columns: device_id, spans, error_spans, tasks, tasks_ok,
 * tools, tools_ok, task_tokens, task_tokens_ok, recovered_errors, span_names, versions (the
 * telemetry_span_rollups columns). Two scans of the day's spans, each a plain aggregate (no join,
 * no window: plans that stay linear without statistics): grouped by (device, name, version, role,
 * failed) for the counters, names and versions; grouped by (device, trace, name) for recovered
 * errors (per group, the error start times before the group's last OK start). The parts are
 * combined by ONE aggregate by device over a UNION ALL, not by joins. Each scan computes a span's
 * role and failure once (an `offset 0` subquery, which the planner does not flatten into the
 * aggregate's several references).
 *
 * Both span vocabularies count alike through the shared classification of lib/span-attrs.ts
 * (`SPAN_ROLE`, `SPAN_FAILED`, `SPAN_TOKENS`): tasks are `svc.task` or GenAI `invoke_agent` spans,
 * tools `svc.tool` or `execute_tool`, errors are status ERROR or `error.type`. Task tokens of the
 * day are the larger of the tokens on task spans and the tokens on model-call spans (`chat`,
 * `text_completion`, `generate_content`), the successful part from the same side (spans of that
 * role that did not fail): usage is reported on model calls by the GenAI instrumentations and may
 * be summed again on the enclosing task span, so taking the larger side counts it once.
 */
export function rollupSelect(tenantId: string, day: string, until: Date, devices?: readonly string[], inclusive = false): SQL {
  const from = dayStart(day).toISOString();
  const to = until.toISOString();
  const lt = sql.raw(inclusive ? '<=' : '<');
  const where = (a: string) =>
    sql`${sql.raw(a)}.tenant_id = ${tenantId} and ${sql.raw(a)}.start_time >= ${from}::timestamptz and ${sql.raw(a)}.start_time ${lt} ${to}::timestamptz
        and ${sql.raw(a)}.name <> ${SERVICE_SPAN}${devices ? sql` and ${sql.raw(a)}.device_id = any(${sql.param([...devices])}::uuid[])` : sql``}`;
  return sql`
    with c as materialized (
      select device_id, name, version, role, failed, count(*)::int as n,
             coalesce(sum(case when role in (1, 3) then ${SPAN_TOKENS} end), 0)::float8 as tok,
             extract(epoch from min(start_time))::float8 * 1000 as first_ms
      from (select s.device_id, s.name, s.resource->>'service.version' as version, s.start_time, s.attributes, ${SPAN_ROLE} as role, ${SPAN_FAILED} as failed
            from telemetry_spans s where ${where('s')} offset 0) s
      group by 1, 2, 3, 4, 5
    ),
    g as (
      select device_id, name, version, n, case when failed then n else 0 end as e,
             case when role = 1 then n else 0 end as tasks, case when role = 1 and not failed then n else 0 end as tasks_ok,
             case when role = 2 then n else 0 end as tools, case when role = 2 and not failed then n else 0 end as tools_ok,
             case when role = 1 then tok else 0 end as tok, case when role = 1 and not failed then tok else 0 end as tok_ok,
             case when role = 3 then tok else 0 end as mtok, case when role = 3 and not failed then tok else 0 end as mtok_ok, first_ms
      from c
    ),
    rec as materialized (
      select device_id, sum((select count(*) from unnest(errs) x where x < max_ok))::int as recovered
      from (
        select device_id, max(start_time) filter (where not failed) as max_ok, array_agg(start_time) filter (where failed) as errs
        from (select s.device_id, s.trace_id, s.name, s.start_time, ${SPAN_FAILED} as failed from telemetry_spans s where ${where('s')} offset 0) s
        group by device_id, trace_id, name
      ) q
      where errs is not null and max_ok is not null
      group by 1
    ),
    u as (
      select device_id, 't' as kind, null::text as k, null::jsonb as v, n as spans, e as errors, tasks, tasks_ok, tools, tools_ok,
             tok, tok_ok, mtok, mtok_ok, 0 as recovered
      from g
      union all
      select device_id, 'n', name, to_jsonb(sum(n)::int), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 from g group by device_id, name
      union all
      select device_id, 'v', version, jsonb_build_object('spans', sum(n)::int, 'errors', sum(e)::int, 'firstSeenMs', min(first_ms)), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
      from g where version is not null group by device_id, version
      union all
      select device_id, 'r', null, null, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, recovered from rec
    )
    select device_id, sum(spans)::int as spans, sum(errors)::int as error_spans, sum(tasks)::int as tasks, sum(tasks_ok)::int as tasks_ok,
           sum(tools)::int as tools, sum(tools_ok)::int as tools_ok,
           (case when sum(mtok) > sum(tok) then sum(mtok) else sum(tok) end)::float8 as task_tokens,
           (case when sum(mtok) > sum(tok) then sum(mtok_ok) else sum(tok_ok) end)::float8 as task_tokens_ok,
           sum(recovered)::int as recovered_errors,
           coalesce(jsonb_object_agg(k, v) filter (where kind = 'n'), '{}'::jsonb) as span_names,
           coalesce(jsonb_object_agg(k, v) filter (where kind = 'v'), '{}'::jsonb) as versions
    from u group by device_id`;
}

interface SpanDayRow {
  device_id: string;
  day: string;
  spans: number;
  error_spans: number;
  tasks: number;
  tasks_ok: number;
  tools: number;
  tools_ok: number;
  task_tokens: number;
  task_tokens_ok: number;
  recovered_errors: number;
  span_names: unknown;
  versions: unknown;
}

const toSpanDay = (r: SpanDayRow): SpanDay => {
  const versions = json<Record<string, { spans: number; errors: number; firstSeenMs: number }>>(r.versions);
  for (const v of Object.values(versions)) {
    v.spans = Number(v.spans);
    v.errors = Number(v.errors);
    v.firstSeenMs = Number(v.firstSeenMs);
  }
  const spanNames = json<Record<string, number>>(r.span_names);
  for (const k of Object.keys(spanNames)) spanNames[k] = Number(spanNames[k]);
  return {
    deviceId: r.device_id,
    day: r.day,
    spans: Number(r.spans),
    errorSpans: Number(r.error_spans),
    tasks: Number(r.tasks),
    tasksOk: Number(r.tasks_ok),
    tools: Number(r.tools),
    toolsOk: Number(r.tools_ok),
    taskTokens: Number(r.task_tokens),
    taskTokensOk: Number(r.task_tokens_ok),
    recoveredErrors: Number(r.recovered_errors),
    spanNames,
    versions,
  };
};

/** Counts of a {@link rollUpDirtyDays}. */
export interface RollupSummary {
  /** (device, day) pairs re-rolled (marks deleted). */
  pairs: number;
  /** Distinct days among them (one statement each). */
  days: number;
  /** Roll-up rows written (pairs whose day has spans other than `svc.trust`). */
  rows: number;
}

/**
 * Re-roll the tenant's dirty (device, day) pairs of days before `beforeDay` (`YYYY-MM-DD`, the
 * recompute's UTC day), in ONE tenant-scoped transaction of its own: the marks are deleted first
 * (one plain DELETE … RETURNING, waiting for ingests that hold them, so the next statements see
 * their spans; a join to lock them in order planned as a per-row scan of the tenant's marks
 * without statistics), then per distinct day the pairs' roll-ups are deleted and rebuilt with
 * {@link rollupSelect}. Concurrent roll-ups of a tenant are serialized by the advisory lock
 * `hashtextextended('trust-rollup:' || tenant_id, 0)`. Marks of `beforeDay` and later stay.
 */
export async function rollUpDirtyDays(db: Db, tenantId: string, beforeDay: string): Promise<RollupSummary> {
  return withTenant(db, tenantId, async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${'trust-rollup:' + tenantId}, 0))`);
    await tx.execute(sql`select set_config('work_mem', ${ROLLUP_WORK_MEM}, true)`);
    const marks = await rows<{ device_id: string; day: string }>(
      tx,
      sql`
        delete from telemetry_rollup_dirty where tenant_id = ${tenantId} and day < ${beforeDay}::date
        returning device_id, to_char(day, 'YYYY-MM-DD') as day`,
    );
    const byDay = new Map<string, string[]>();
    for (const m of marks) {
      let list = byDay.get(m.day);
      if (!list) byDay.set(m.day, (list = []));
      list.push(m.device_id);
    }
    let written = 0;
    for (const [day, devices] of [...byDay].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const ids = sql.param(devices);
      await tx.execute(sql`delete from telemetry_span_rollups where tenant_id = ${tenantId} and day = ${day}::date and device_id = any(${ids}::uuid[])`);
      const res = (await tx.execute(sql`
        insert into telemetry_span_rollups (tenant_id, day, device_id, spans, error_spans, tasks, tasks_ok, tools, tools_ok,
                                            task_tokens, task_tokens_ok, recovered_errors, span_names, versions)
        select ${tenantId}::uuid, ${day}::date, r.device_id, r.spans, r.error_spans, r.tasks, r.tasks_ok, r.tools, r.tools_ok,
               r.task_tokens, r.task_tokens_ok, r.recovered_errors, r.span_names, r.versions
        from (${rollupSelect(tenantId, day, dayStart(addDays(day, 1)), devices)}) r`)) as unknown as { rowCount?: number | null; affectedRows?: number };
      written += Number(res.rowCount ?? res.affectedRows ?? 0);
      await rebuildTokenRollups(tx, tenantId, day, devices);
    }
    return { pairs: marks.length, days: byDay.size, rows: written };
  });
}

/**
 * The tenant's span days from `fromDay` to the day of `now` (inclusive): the stored roll-ups of
 * [fromDay, today) and today's partial day computed live from raw spans started at or before
 * `now` (never stored: today is not closed), of the devices `deviceIds` (the scored agents; the
 * live part probes the (tenant, device, start_time) index per device instead of scanning the
 * tenant's spans). Call {@link rollUpDirtyDays} with today first, or late spans of closed days are
 * missing. Unordered; only devices with spans appear (stored rows of other devices too).
 */
export async function readSpanDays(tx: Tx, tenantId: string, deviceIds: readonly string[], fromDay: string, now: Date): Promise<SpanDay[]> {
  if (deviceIds.length === 0) return [];
  const today = utcDay(now);
  const stored = await rows<SpanDayRow>(
    tx,
    sql`
      select device_id, to_char(day, 'YYYY-MM-DD') as day, spans, error_spans, tasks, tasks_ok, tools, tools_ok, task_tokens, task_tokens_ok,
             recovered_errors, span_names, versions
      from telemetry_span_rollups
      where tenant_id = ${tenantId} and day >= ${fromDay}::date and day < ${today}::date`,
  );
  const out = stored.map(toSpanDay);
  if (fromDay <= today) {
    const live = await rows<Omit<SpanDayRow, 'day'>>(tx, rollupSelect(tenantId, today, now, deviceIds, true));
    for (const r of live) out.push(toSpanDay({ ...r, day: today }));
  }
  return out;
}

/** Counts of a {@link pruneSpans}. */
export interface PruneSummary {
  tenants: number;
  deleted: number;
}

/**
 * Delete raw spans that started before `cutoff` (a UTC day start: now's day − retention days),
 * tenant by tenant (`tenantIds`), device by device (the tenant's agent devices), each batch of at
 * most `batch` rows one statement and transaction, skipping every span whose (device, day) is
 * marked dirty (not rolled up yet). Each statement reads the device's old marks itself (an
 * uncorrelated `array(select …)`, evaluated once, in the delete's own snapshot: a late span
 * committed before it is protected by its committed mark, an uncommitted one is invisible to it)
 * and bounds the rows by the row comparison `(tenant_id, device_id, start_time) < (…, …, cutoff)`,
 * which only the (tenant, device, start_time) index can use: with a plain `start_time <` bound and
 * fresh statistics the planner took the (tenant, name, start_time) index and scanned the whole
 * tenant per device (minutes at 3000 agents), as did the device-list and anti-join forms. Roll-ups are kept. Spans of `svc.trust` go too
 * (the tier history lives in hub_tier_changes and the audit log).
 */
export async function pruneSpans(db: Db, tenantIds: readonly string[], cutoff: Date, batch = 10_000): Promise<PruneSummary> {
  let deleted = 0;
  const before = cutoff.toISOString();
  const cutoffDay = utcDay(cutoff);
  for (const tenantId of tenantIds) {
    const devices = (
      await withTenant(db, tenantId, (tx) => rows<{ device_id: string }>(tx, sql`select id as device_id from devices where tenant_id = ${tenantId} and kind = 'agent' order by id`))
    ).map((r) => r.device_id);
    for (const deviceId of devices) {
      for (;;) {
        const n = await withTenant(db, tenantId, async (tx) => {
          const res = (await tx.execute(sql`
            delete from telemetry_spans where id in (
              select s.id from telemetry_spans s
              where s.tenant_id = ${tenantId} and s.device_id = ${deviceId}
                and (s.tenant_id, s.device_id, s.start_time) < (${tenantId}::uuid, ${deviceId}::uuid, ${before}::timestamptz)
                and (s.start_time at time zone 'UTC')::date <> all(array(
                  select m.day from telemetry_rollup_dirty m where m.tenant_id = ${tenantId} and m.device_id = ${deviceId} and m.day < ${cutoffDay}::date))
              limit ${batch})`)) as unknown as { rowCount?: number | null; affectedRows?: number };
          return Number(res.rowCount ?? res.affectedRows ?? 0);
        });
        deleted += n;
        if (n < batch) break;
      }
    }
  }
  return { tenants: tenantIds.length, deleted };
}
