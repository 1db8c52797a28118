/**
 * Trust engine queries (contract §2.9, §3.3, §3.9, §4.12; design §8.14; docs/decisions.md "Trust
 * engine"). Tenant-scoped transactions only (RLS filters; `tenant_id` is repeated in the WHERE
 * clauses so that the `(tenant_id, …)` indexes apply).
 *
 * Signal extraction is set-based: ONE query per source for all of a tenant's agents, grouped by
 * device and UTC day (`to_char(ts at time zone 'UTC', 'YYYY-MM-DD')`), never one query per agent:
 *
 * | source                                   | DailySignals fields |
 * |------------------------------------------|---------------------|
 * | device_presence                          | presenceHours (distinct UTC hours seen, from the activation hour on) |
 * | decisions (day of `resolved_at`)         | decisionLatenciesSec (approved / denied / deferred: resolved_at − created_at), decisionsExpired |
 * | telemetry_span_rollups (closed days) and telemetry_spans (today, start ≤ now): trust/rollups.ts, one row per (device, day) | spans, errorSpans (status ERROR or `error.type`), tasks/tasksOk (`svc.task` or GenAI `invoke_agent`), tools/toolsOk (`svc.tool` or `execute_tool`), taskTokens/taskTokensOk (lib/span-attrs.ts classifies), spanNames, versions {spans, errors, firstSeen} by resource `service.version`, recoveredErrors (an OK span of the same trace and name later the same UTC day) |
 * | messages + room_messages + a2a_messages  | messages (by `sender_device_id`, day of `created_at`) |
 * | policy_evaluations + policy_allow_counts | policyEvaluations (rows + counted allows), policyViolations (outcome block or hold) |
 *
 * `svc.trust` spans (written by the service on tier changes) are not read.
 * `observedHours` is computed here from the device's activation (fallback enrolment) and `now`.
 * Timestamps are read as epoch milliseconds (float8) and counts cast to int in SQL, so both
 * drivers (node-postgres, PGlite) answer the same JavaScript types.
 */
import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import type { DailyDimensionRow } from './psi.js';
import { addDays, DAY_MS, dayStart, utcDay } from '../../lib/days.js';
import { readSpanDays, ROLLUP_WORK_MEM } from './rollups.js';
import { emptySignals, type DailySignals, type DimensionScores, type DimensionSource, type ScorePoint, type Tier, type TrustDimension, type TrustWindow } from './types.js';

const HOUR_MS = 3_600_000;

/** Device statuses whose agents are scored (docs/decisions.md "Trust engine": ACTIVE only). */
export const SCORED_DEVICE_STATUSES = ['ACTIVE'] as const;

/** An agent the engine scores, with its bound hub identity (the oldest one bound to the device), if any. */
export interface TrustAgent {
  deviceId: string;
  /** Activation time (fallback: enrolment time): the start of the agent's age and of its observed hours. */
  since: Date;
  identityId: string | null;
}

/** Rows of a raw `execute` (both drivers answer `{ rows }`). */
async function rows<T>(tx: Tx, q: SQL): Promise<T[]> {
  return ((await tx.execute(q)) as unknown as { rows: T[] }).rows;
}

/** JSON columns come back parsed from both drivers; tolerate a string just in case. */
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const iso = (d: Date) => d.toISOString();
const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * The tenant's scored agents: agent devices, not deleted, status in {@link SCORED_DEVICE_STATUSES},
 * ordered by id, each with its bound hub identity (the oldest, design §8.18) or none.
 */
export async function listAgents(tx: Tx, tenantId: string): Promise<TrustAgent[]> {
  const statuses = sql.join(
    SCORED_DEVICE_STATUSES.map((s) => sql`${s}`),
    sql`, `,
  );
  const out = await rows<{ id: string; since_ms: number; identity_id: string | null }>(
    tx,
    sql`
      select d.id, extract(epoch from coalesce(d.activated_at, d.created_at))::float8 * 1000 as since_ms, h.id as identity_id
      from devices d
      left join lateral (
        select id from hub_identities where device_id = d.id order by created_at, id limit 1
      ) h on true
      where d.tenant_id = ${tenantId} and d.kind = 'agent' and d.deleted_at is null and d.status in (${statuses})
      order by d.id`,
  );
  return out.map((r) => ({ deviceId: r.id, since: new Date(Number(r.since_ms)), identityId: r.identity_id }));
}

/**
 * Hour slots of `day` during which an agent existed: the UTC hours from the hour of `since` up to
 * (excluding) the hour of `now`, plus the current hour when the device was already seen in it
 * (`seenThisHour`), so an agent is never blamed for the hour that is still running.
 */
export function observedHoursOf(day: string, since: Date, now: Date, seenThisHour: boolean): number {
  const start = Math.max(dayStart(day).getTime(), floorHour(since.getTime()));
  const nowHour = floorHour(now.getTime());
  const end = Math.min(dayStart(day).getTime() + DAY_MS, nowHour);
  const full = Math.max(0, Math.round((end - start) / HOUR_MS));
  const current = seenThisHour && utcDay(nowHour) === day && nowHour >= floorHour(since.getTime()) ? 1 : 0;
  return Math.min(24, full + current);
}

/** `work_mem` of the extraction transaction (SET LOCAL). */
export const EXTRACT_WORK_MEM = ROLLUP_WORK_MEM;

const DAY_OF = (col: string) => sql.raw(`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD')`);

/**
 * DailySignals of every agent over the UTC days from `fromDay` to the day of `now` (inclusive),
 * one array per agent (ascending by day, starting at the later of `fromDay` and the agent's
 * activation day; days without any activity are present with zero counters). Events after `now`
 * are ignored (an injected clock sees only its past).
 */
export async function extractSignals(tx: Tx, tenantId: string, agents: readonly TrustAgent[], fromDay: string, now: Date): Promise<Map<string, DailySignals[]>> {
  const from = iso(dayStart(fromDay));
  const to = iso(now);
  const nowHour = iso(new Date(floorHour(now.getTime())));
  const byAgent = new Map<string, Map<string, DailySignals>>();
  for (const a of agents) byAgent.set(a.deviceId, new Map());
  const cell = (deviceId: string, day: string): DailySignals | undefined => {
    const days = byAgent.get(deviceId);
    if (!days) return undefined;
    let s = days.get(day);
    if (!s) days.set(day, (s = emptySignals(day)));
    return s;
  };
  const seenNow = new Set<string>();
  // The span hash aggregation and the window sort in memory rather than on disk
  // (transaction-local; the default 4 MB spills from a few hundred agents on).
  await tx.execute(sql`select set_config('work_mem', ${EXTRACT_WORK_MEM}, true)`);

  // device_presence: distinct hours per day, from the activation hour on.
  for (const r of await rows<{ device_id: string; day: string; n: number; cur: boolean }>(
    tx,
    sql`
      select p.device_id, ${DAY_OF('p.hour')} as day, count(*)::int as n, bool_or(p.hour = ${nowHour}::timestamptz) as cur
      from device_presence p join devices d on d.id = p.device_id
      where p.tenant_id = ${tenantId} and p.hour >= ${from}::timestamptz and p.hour <= ${to}::timestamptz
        and p.hour >= date_bin('1 hour', coalesce(d.activated_at, d.created_at), timestamptz '2000-01-01 00:00:00+00')
      group by 1, 2`,
  )) {
    const s = cell(r.device_id, r.day);
    if (!s) continue;
    s.presenceHours = Number(r.n);
    if (r.cur) seenNow.add(r.device_id);
  }

  // decisions: response latencies and expiries, by day of resolution.
  for (const r of await rows<{ device_id: string; day: string; lat: unknown; expired: number }>(
    tx,
    sql`
      select device_id, ${DAY_OF('resolved_at')} as day,
             coalesce(json_agg(extract(epoch from resolved_at - created_at)::float8) filter (where status in ('approved', 'denied', 'deferred')), '[]'::json) as lat,
             (count(*) filter (where status = 'expired'))::int as expired
      from decisions
      where tenant_id = ${tenantId} and resolved_at is not null and resolved_at >= ${from}::timestamptz and resolved_at <= ${to}::timestamptz
      group by 1, 2`,
  )) {
    const s = cell(r.device_id, r.day);
    if (!s) continue;
    s.decisionLatenciesSec = json<number[]>(r.lat).map((x) => Math.max(0, Number(x)));
    s.decisionsExpired = Number(r.expired);
  }

  // Spans: the daily roll-ups of the closed days and today's partial day from raw spans
  // (trust/rollups.ts; the recompute re-rolls dirty days first).
  for (const r of await readSpanDays(
    tx,
    tenantId,
    agents.map((a) => a.deviceId),
    fromDay,
    now,
  )) {
    const s = cell(r.deviceId, r.day);
    if (!s) continue;
    s.spans = r.spans;
    s.errorSpans = r.errorSpans;
    s.tasks = r.tasks;
    s.tasksOk = r.tasksOk;
    s.tools = r.tools;
    s.toolsOk = r.toolsOk;
    s.taskTokens = r.taskTokens;
    s.taskTokensOk = r.taskTokensOk;
    s.recoveredErrors = r.recoveredErrors;
    s.spanNames = r.spanNames;
    for (const [version, v] of Object.entries(r.versions)) s.versions[version] = { spans: v.spans, errors: v.errors, firstSeen: new Date(v.firstSeenMs).toISOString() };
  }

  // Messages sent: direct, room and A2A (an A2A row is visible to both tenants; counted by its sender).
  for (const r of await rows<{ device_id: string; day: string; n: number }>(
    tx,
    sql`
      select sender_device_id as device_id, ${DAY_OF('created_at')} as day, count(*)::int as n
      from (
        select sender_device_id, created_at from messages
          where tenant_id = ${tenantId} and created_at >= ${from}::timestamptz and created_at <= ${to}::timestamptz
        union all
        select sender_device_id, created_at from room_messages
          where tenant_id = ${tenantId} and created_at >= ${from}::timestamptz and created_at <= ${to}::timestamptz
        union all
        select sender_device_id, created_at from a2a_messages
          where (tenant_id = ${tenantId} or partner_tenant_id = ${tenantId}) and created_at >= ${from}::timestamptz and created_at <= ${to}::timestamptz
      ) m
      group by 1, 2`,
  )) {
    const s = cell(r.device_id, r.day);
    if (s) s.messages = Number(r.n);
  }

  // Policy evaluations of the agent as sender: the recorded ones (non-allow outcomes, and allows
  // recorded as rows by older versions) plus the allow counts; block or hold is a violation.
  for (const r of await rows<{ device_id: string; day: string; n: number; violations: number }>(
    tx,
    sql`
      select device_id, day, sum(n)::int as n, sum(violations)::int as violations from (
        select sender_device_id as device_id, ${DAY_OF('created_at')} as day, count(*) as n,
               count(*) filter (where outcome in ('block', 'hold')) as violations
        from policy_evaluations
        where tenant_id = ${tenantId} and created_at >= ${from}::timestamptz and created_at <= ${to}::timestamptz
        group by 1, 2
        union all
        select sender_device_id, ${DAY_OF('created_at')}, sum(allows), 0
        from policy_allow_counts
        where tenant_id = ${tenantId} and created_at >= ${from}::timestamptz and created_at <= ${to}::timestamptz
        group by 1, 2
      ) e
      group by 1, 2`,
  )) {
    const s = cell(r.device_id, r.day);
    if (!s) continue;
    s.policyEvaluations = Number(r.n);
    s.policyViolations = Number(r.violations);
  }

  // Every day from max(fromDay, activation day) to today, in order, with its observed hours.
  const today = utcDay(now);
  const out = new Map<string, DailySignals[]>();
  for (const a of agents) {
    const cells = byAgent.get(a.deviceId)!;
    const first = utcDay(a.since) > fromDay ? utcDay(a.since) : fromDay;
    const list: DailySignals[] = [];
    for (let day = first; day <= today; day = addDays(day, 1)) {
      const s = cells.get(day) ?? emptySignals(day);
      s.observedHours = observedHoursOf(day, a.since, now, seenNow.has(a.deviceId));
      list.push(s);
    }
    out.set(a.deviceId, list);
  }
  return out;
}

// ---- writes ----------------------------------------------------------------------------------

/** One trust_snapshots row to insert. */
export interface SnapshotInsert {
  deviceId: string;
  window: TrustWindow;
  composite: number;
  dimensions: DimensionScores;
  sources: Record<TrustDimension, DimensionSource>;
  percentile: number;
  tier: Tier;
}

const CHUNK = 2000;
const chunks = <T>(xs: readonly T[]): T[][] => Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

/** Insert snapshots (all computed at `at`) with one `unnest` statement per 2000 rows. */
export async function insertSnapshots(tx: Tx, tenantId: string, at: Date, list: readonly SnapshotInsert[]): Promise<void> {
  for (const part of chunks(list)) {
    const col = <T>(f: (r: SnapshotInsert) => T) => sql.param(part.map(f));
    await tx.execute(sql`
      insert into trust_snapshots (id, tenant_id, device_id, "window", composite, dimensions, sources, percentile, tier, computed_at)
      select u.id, ${tenantId}::uuid, u.device_id, u.w, u.composite, u.dimensions, u.sources, u.percentile, u.tier, ${iso(at)}::timestamptz
      from unnest(${col(() => randomUUID())}::uuid[], ${col((r) => r.deviceId)}::uuid[], ${col((r) => r.window)}::text[],
                  ${col((r) => r.composite)}::float8[], ${col((r) => JSON.stringify(r.dimensions))}::jsonb[],
                  ${col((r) => JSON.stringify(r.sources))}::jsonb[], ${col((r) => r.percentile)}::int[], ${col((r) => r.tier)}::text[])
        as u(id, device_id, w, composite, dimensions, sources, percentile, tier)`);
  }
}

/** One trust_daily_scores row: the dimensions that had data that day. */
export interface DailyScoreUpsert {
  deviceId: string;
  day: string;
  dimensions: Partial<DimensionScores>;
}

/** Upsert per-day dimension values (key: device, day), computed at `at`. */
export async function upsertDailyScores(tx: Tx, tenantId: string, at: Date, list: readonly DailyScoreUpsert[]): Promise<void> {
  for (const part of chunks(list)) {
    const col = <T>(f: (r: DailyScoreUpsert) => T) => sql.param(part.map(f));
    await tx.execute(sql`
      insert into trust_daily_scores (tenant_id, device_id, day, dimensions, computed_at)
      select ${tenantId}::uuid, u.device_id, u.day, u.dimensions, ${iso(at)}::timestamptz
      from unnest(${col((r) => r.deviceId)}::uuid[], ${col((r) => r.day)}::text[], ${col((r) => JSON.stringify(r.dimensions))}::jsonb[])
        as u(device_id, day, dimensions)
      on conflict (device_id, day) do update set dimensions = excluded.dimensions, computed_at = excluded.computed_at`);
  }
}

/** One trust_baselines row (per agent and dimension). */
export interface BaselineInsert {
  deviceId: string;
  dimension: TrustDimension;
  bins: number[];
  samples: number;
  windowStart: string;
  windowEnd: string;
}

/** Insert baselines with reason `initial`, established by `system` at `at` (an existing (device, dimension) is kept). */
export async function insertInitialBaselines(tx: Tx, tenantId: string, at: Date, list: readonly BaselineInsert[]): Promise<void> {
  for (const part of chunks(list)) {
    const col = <T>(f: (r: BaselineInsert) => T) => sql.param(part.map(f));
    await tx.execute(sql`
      insert into trust_baselines (tenant_id, device_id, dimension, bins, samples, window_start, window_end, reason, established_at, established_by)
      select ${tenantId}::uuid, u.device_id, u.dimension, u.bins, u.samples, u.window_start, u.window_end, 'initial', ${iso(at)}::timestamptz, 'system'
      from unnest(${col((r) => r.deviceId)}::uuid[], ${col((r) => r.dimension)}::text[], ${col((r) => JSON.stringify(r.bins))}::jsonb[],
                  ${col((r) => r.samples)}::int[], ${col((r) => r.windowStart)}::text[], ${col((r) => r.windowEnd)}::text[])
        as u(device_id, dimension, bins, samples, window_start, window_end)
      on conflict (device_id, dimension) do nothing`);
  }
}

// ---- reads for the recompute -------------------------------------------------------------------

/** Devices of the tenant that already have at least one baseline row. */
export async function devicesWithBaseline(tx: Tx, tenantId: string): Promise<Set<string>> {
  const out = await rows<{ device_id: string }>(tx, sql`select distinct device_id from trust_baselines where tenant_id = ${tenantId}`);
  return new Set(out.map((r) => r.device_id));
}

/** Stored per-day dimension rows of these devices, ascending by day. */
export async function dailyRowsOf(tx: Tx, tenantId: string, deviceIds: readonly string[]): Promise<Map<string, DailyDimensionRow[]>> {
  const out = new Map<string, DailyDimensionRow[]>();
  if (deviceIds.length === 0) return out;
  for (const r of await rows<{ device_id: string; day: string; dimensions: unknown }>(
    tx,
    sql`select device_id, day, dimensions from trust_daily_scores
        where tenant_id = ${tenantId} and device_id = any(${sql.param([...deviceIds])}::uuid[]) order by device_id, day`,
  )) {
    let list = out.get(r.device_id);
    if (!list) out.set(r.device_id, (list = []));
    list.push({ day: r.day, dimensions: json<Partial<DimensionScores>>(r.dimensions) });
  }
  return out;
}

/** Time of each agent's latest 7d snapshot (the previous recompute), by device. */
export async function lastComputedAt(tx: Tx, tenantId: string): Promise<Map<string, Date>> {
  const out = await rows<{ device_id: string; at_ms: number }>(
    tx,
    sql`select device_id, extract(epoch from max(computed_at))::float8 * 1000 as at_ms from trust_snapshots
        where tenant_id = ${tenantId} and "window" = '7d' group by device_id`,
  );
  return new Map(out.map((r) => [r.device_id, new Date(Number(r.at_ms))]));
}

/**
 * The 7d composites of these devices that the tier hold looks at (contract §3.3): every snapshot
 * computed in (now − holdDays, now], plus the last one at or before now − holdDays (the score in
 * effect when the hold began), ascending by time, by device.
 */
export async function tierSeries(tx: Tx, tenantId: string, deviceIds: readonly string[], now: Date, holdDays: number): Promise<Map<string, ScorePoint[]>> {
  const out = new Map<string, ScorePoint[]>();
  if (deviceIds.length === 0) return out;
  const start = iso(new Date(now.getTime() - holdDays * DAY_MS));
  const ids = sql.param([...deviceIds]);
  const found = await rows<{ device_id: string; at_ms: number; composite: number }>(
    tx,
    sql`
      (select distinct on (device_id) device_id, extract(epoch from computed_at)::float8 * 1000 as at_ms, composite
         from trust_snapshots
         where tenant_id = ${tenantId} and "window" = '7d' and device_id = any(${ids}::uuid[]) and computed_at <= ${start}::timestamptz
         order by device_id, computed_at desc)
      union all
      (select device_id, extract(epoch from computed_at)::float8 * 1000, composite
         from trust_snapshots
         where tenant_id = ${tenantId} and "window" = '7d' and device_id = any(${ids}::uuid[])
           and computed_at > ${start}::timestamptz and computed_at <= ${iso(now)}::timestamptz)`,
  );
  for (const r of found) {
    let list = out.get(r.device_id);
    if (!list) out.set(r.device_id, (list = []));
    list.push({ at: new Date(Number(r.at_ms)), composite: Number(r.composite) });
  }
  for (const list of out.values()) list.sort((a, b) => a.at.getTime() - b.at.getTime());
  return out;
}

/** Set `hub_identities.trust_score` of each identity (the latest 7d composite, contract §2.8 profile). */
export async function setIdentityScores(tx: Tx, scores: ReadonlyArray<{ identityId: string; score: number }>): Promise<void> {
  for (const part of chunks(scores)) {
    await tx.execute(sql`
      update hub_identities h set trust_score = u.score
      from unnest(${sql.param(part.map((s) => s.identityId))}::uuid[], ${sql.param(part.map((s) => s.score))}::float8[]) as u(id, score)
      where h.id = u.id`);
  }
}

/** Ids of every tenant (run inside crossTenant: the recompute iterates them). */
export async function listTenantIds(tx: Tx): Promise<string[]> {
  return (await rows<{ id: string }>(tx, sql`select id from tenants order by id`)).map((r) => r.id);
}
