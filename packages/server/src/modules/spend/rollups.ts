/**
 * Token usage of agents from their telemetry spans (docs/decisions.md "Spend
 * caps"): what a span spends is its numeric `gen_ai.usage.input_tokens` and
 * `gen_ai.usage.output_tokens` (OpenTelemetry GenAI semantic conventions), of the model
 * `gen_ai.request.model` (else `gen_ai.response.model`, else `unknown`); spans with neither usage
 * attribute spend nothing. Every span counts, whatever its name or role (Parley `svc.*` spans and
 * GenAI model calls alike); the attribute definitions are the shared ones of lib/span-attrs.ts.
 *
 * - Closed UTC days are stored per (device, day, model) in `telemetry_token_rollups`, rebuilt by
 *   {@link rebuildTokenRollups} inside the trust roll-up (trust/rollups.ts `rollUpDirtyDays`), for
 *   the pairs whose dirty marks it consumes, in its transaction.
 * - {@link readUsage} answers a period's usage in ONE statement (one snapshot, so a concurrent
 *   roll-up is seen entirely or not at all): stored days that are not marked dirty, plus raw spans
 *   of the marked (not yet rolled-up) closed days and of today (start ≤ now). Correct whether or
 *   not the roll-up job has run.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { HAS_USAGE, INPUT_TOKENS, OUTPUT_TOKENS, SPAN_MODEL } from '../../lib/span-attrs.js';
import { addDays } from '../../lib/days.js';

/** Rows of a raw `execute` (both drivers answer `{ rows }`). */
async function rows<T>(tx: Tx, q: SQL): Promise<T[]> {
  return ((await tx.execute(q)) as unknown as { rows: T[] }).rows;
}

/**
 * Rebuild the token roll-ups of `devices` for the closed UTC `day` from raw spans (delete, then one
 * insert of the per-model sums), in `tx` scoped to `tenantId`. Called by the trust roll-up for the
 * pairs whose marks it just deleted.
 */
export async function rebuildTokenRollups(tx: Tx, tenantId: string, day: string, devices: readonly string[]): Promise<void> {
  const ids = sql.param([...devices]);
  await tx.execute(sql`delete from telemetry_token_rollups where tenant_id = ${tenantId} and day = ${day}::date and device_id = any(${ids}::uuid[])`);
  await tx.execute(sql`
    insert into telemetry_token_rollups (tenant_id, device_id, day, model, input_tokens, output_tokens)
    select ${tenantId}::uuid, device_id, ${day}::date, ${SPAN_MODEL}, coalesce(sum(${INPUT_TOKENS}), 0)::bigint, coalesce(sum(${OUTPUT_TOKENS}), 0)::bigint
    from telemetry_spans
    where tenant_id = ${tenantId} and device_id = any(${ids}::uuid[])
      and start_time >= ${day}::date::timestamp at time zone 'UTC' and start_time < ${addDays(day, 1)}::date::timestamp at time zone 'UTC'
      and ${HAS_USAGE}
    group by device_id, 4`);
}

/** Usage of one device and model over the read range; `today` marks the part of the current UTC day. */
export interface UsageRow {
  deviceId: string;
  model: string;
  today: boolean;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Token usage of `deviceIds` per model from the UTC day `fromDay` to `now` (inclusive), split into
 * the closed days and today (`today` of {@link UsageRow}), in one statement (see the module
 * comment). `today` is `now`'s UTC day; `fromDay` ≤ today.
 */
export async function readUsage(tx: Tx, tenantId: string, deviceIds: readonly string[], fromDay: string, today: string, now: Date): Promise<UsageRow[]> {
  if (deviceIds.length === 0) return [];
  const ids = sql.param([...deviceIds]);
  const out = await rows<{ device_id: string; model: string; today: boolean; input_tokens: number | string; output_tokens: number | string }>(
    tx,
    sql`
      with marks as materialized (
        select device_id, day from telemetry_rollup_dirty
        where tenant_id = ${tenantId} and device_id = any(${ids}::uuid[]) and day >= ${fromDay}::date and day < ${today}::date
      ),
      raw_days as (
        select device_id, day from marks
        union all
        select d, ${today}::date from unnest(${ids}::uuid[]) as d
      ),
      u as (
        select r.device_id, r.day, r.model, r.input_tokens::float8 as i, r.output_tokens::float8 as o
        from telemetry_token_rollups r
        where r.tenant_id = ${tenantId} and r.device_id = any(${ids}::uuid[]) and r.day >= ${fromDay}::date and r.day < ${today}::date
          and not exists (select 1 from marks m where m.device_id = r.device_id and m.day = r.day)
        union all
        select rd.device_id, rd.day, s.model, s.i, s.o
        from raw_days rd cross join lateral (
          select ${SPAN_MODEL} as model, coalesce(${INPUT_TOKENS}, 0) as i, coalesce(${OUTPUT_TOKENS}, 0) as o
          from telemetry_spans
          where tenant_id = ${tenantId} and device_id = rd.device_id
            and start_time >= rd.day::timestamp at time zone 'UTC' and start_time < (rd.day + 1)::timestamp at time zone 'UTC'
            and start_time <= ${now.toISOString()}::timestamptz and ${HAS_USAGE}
        ) s
      )
      select device_id, model, day = ${today}::date as today, sum(i)::float8 as input_tokens, sum(o)::float8 as output_tokens
      from u group by 1, 2, 3`,
  );
  return out.map((r) => ({ deviceId: r.device_id, model: r.model, today: r.today === true || (r.today as unknown) === 't', inputTokens: Math.round(Number(r.input_tokens)), outputTokens: Math.round(Number(r.output_tokens)) }));
}
