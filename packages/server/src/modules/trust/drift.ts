/**
 * Behavioural drift per dimension (contract §4.12; design §8.14; docs/trust-scoring.md "PSI"):
 * `GET /trust-scores/{agent_id}/drift` and `POST /trust-scores/{agent_id}/drift/recalibrate`.
 *
 * - Expected distribution: the dimension's stored baseline (`trust_baselines.bins`, established
 *   by the trust engine from the first stable 30-day window, or by the last recalibration).
 * - Actual distribution: psi.ts `binProportions` of the dimension's per-day values
 *   (`trust_daily_scores`) over the window's N UTC days ending today (today included).
 * - Per dimension: `psi(expected, actual)` and `driftStatus` (< 0.1 stable, 0.1-0.25 moderate,
 *   > 0.25 significant); `null` when the dimension has no baseline or no value in the window
 *   (nothing to compare). `alert` = some dimension is significant.
 * - No baseline yet (the first stable 30 days have not passed): `baseline: null`, every dimension
 *   null, `alert: false`.
 * - Recalibration replaces all of the agent's baselines by the bins of the most recent 30 days
 *   that end at its last daily row of a COMPLETE day (before today; psi.ts `chooseBaselineWindow`
 *   mode `latest`; every stored daily row of a complete day counts, the warm-up days included, as
 *   they hold measured values), reason
 *   `recalibrated`, `established_by` = the owner's subject, audited as
 *   `trust.baseline_recalibrated`; 409 when that window has too little data.
 */
import type { TrustDimensionDrift, TrustDrift, TrustDriftBaseline, TrustDriftRecalibration } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { conflict } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { resolveAgent, type AgentRef } from '../hub/index.js';
import { getDevice } from '../devices/index.js';
import { BASELINE_DAYS, BASELINE_MIN_COVERAGE, baselineFor, binProportions, chooseBaselineWindow, driftStatus, psi, PSI_BINS, type DailyDimensionRow } from './psi.js';
import * as q from './query-repo.js';
import { utcDay, windowStartDay } from '../../lib/days.js';
import { TRUST_DIMENSIONS, WINDOW_DAYS, type DimensionScores, type TrustDimension, type TrustWindow } from './types.js';

const baselineOut = (r: q.BaselineRow): TrustDriftBaseline => ({ window_start: r.windowStart, window_end: r.windowEnd, established_at: r.establishedAt.toISOString(), reason: r.reason });

/** A stored `bins` value usable as PSI's expected side ({@link PSI_BINS} finite proportions). */
const isBins = (v: unknown): v is number[] => Array.isArray(v) && v.length === PSI_BINS && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** Stored daily rows as psi.ts input (only numeric dimension values kept). */
export function toDailyDimensionRows(rows: readonly q.DailyScoreRow[]): DailyDimensionRow[] {
  return rows.map((r) => {
    const raw = (r.dimensions ?? {}) as Record<string, unknown>;
    const dims: Partial<DimensionScores> = {};
    for (const d of TRUST_DIMENSIONS) if (typeof raw[d] === 'number') dims[d] = raw[d];
    return { day: r.day, dimensions: dims };
  });
}

/**
 * Drift of one agent from its baselines and its daily rows of the window (pure; module comment).
 * `daily` must already be limited to the window.
 */
export function computeDrift(agentId: string, window: TrustWindow, baselines: readonly q.BaselineRow[], daily: readonly q.DailyScoreRow[], now: Date): TrustDrift {
  const rows = toDailyDimensionRows(daily);
  const byDim = new Map(baselines.map((b) => [b.dimension, b]));
  const dimensions = {} as Record<TrustDimension, TrustDimensionDrift | null>;
  for (const d of TRUST_DIMENSIONS) {
    const base = byDim.get(d);
    const bins = base?.bins;
    const values = rows.flatMap((r) => (r.dimensions[d] === undefined ? [] : [r.dimensions[d]]));
    if (!base || !isBins(bins) || values.length === 0) {
      dimensions[d] = null;
      continue;
    }
    const value = psi(bins, binProportions(values));
    dimensions[d] = { psi: value, status: driftStatus(value), baseline_samples: base.samples, current_samples: values.length };
  }
  const newest = baselines.reduce<q.BaselineRow | undefined>((m, b) => (m === undefined || b.establishedAt > m.establishedAt ? b : m), undefined);
  return {
    agent_id: agentId,
    window,
    baseline: newest ? baselineOut(newest) : null,
    dimensions,
    alert: Object.values(dimensions).some((x) => x?.status === 'significant'),
    computed_at: now.toISOString(),
  };
}

/** Drift of a resolved agent over `window` (inside the caller's tenant transaction). */
export async function agentDrift(tx: Tx, agent: AgentRef, window: TrustWindow, now: Date): Promise<TrustDrift> {
  const baselines = await q.baselinesOf(tx, agent.device.id);
  const daily = baselines.length === 0 ? [] : await q.dailyScores(tx, agent.device.id, windowStartDay(now, WINDOW_DAYS[window]));
  return computeDrift(agent.device.id, window, baselines, daily, now);
}

export class TrustDriftService {
  constructor(private readonly opts: { db: Db; now?: () => Date }) {}

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** `GET /trust-scores/{agent_id}/drift`. @throws 404 when `agentRef` names no agent of the tenant. */
  drift(tenantId: string, agentRef: string, window: TrustWindow): Promise<TrustDrift> {
    return withTenant(this.opts.db, tenantId, async (tx) => agentDrift(tx, await resolveAgent(tx, agentRef), window, this.now()));
  }

  /**
   * `POST /trust-scores/{agent_id}/drift/recalibrate` by owner `sub` (module comment). The agent's
   * device row is locked for the transaction, so concurrent recalibrations apply one after the other.
   * @throws 404 as {@link drift}; 409 when the 30 days ending at the last complete day with a row hold too little data.
   */
  recalibrate(tenantId: string, sub: string, agentRef: string): Promise<TrustDriftRecalibration> {
    const now = this.now();
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const agent = await resolveAgent(tx, agentRef);
      await getDevice(tx, agent.device.id, true);
      const today = utcDay(now);
      const rows = toDailyDimensionRows(await q.dailyScores(tx, agent.device.id)).filter((r) => r.day < today);
      const chosen = rows.length === 0 ? null : chooseBaselineWindow(rows, { notBefore: rows[0]!.day, mode: 'latest', days: BASELINE_DAYS });
      if (!chosen) {
        const need = Math.ceil(BASELINE_DAYS * BASELINE_MIN_COVERAGE);
        throw conflict(
          `not enough data to recalibrate: at least ${need} of the ${BASELINE_DAYS} days ending at the agent's last complete scored day need daily trust scores (${rows.length} complete day(s) recorded in all; today does not count until it is over)`,
        );
      }
      const dimensions = {} as TrustDriftRecalibration['dimensions'];
      const inserts: Parameters<typeof q.replaceBaselines>[2] = [];
      for (const d of TRUST_DIMENSIONS) {
        const b = baselineFor(chosen.rows, d);
        dimensions[d] = b;
        if (b) inserts.push({ tenantId, deviceId: agent.device.id, dimension: d, bins: b.bins, samples: b.samples, windowStart: chosen.start, windowEnd: chosen.end, reason: 'recalibrated', establishedAt: now, establishedBy: sub });
      }
      if (inserts.length === 0) throw conflict(`not enough daily trust scores to recalibrate: no dimension has a value between ${chosen.start} and ${chosen.end}`);
      await q.replaceBaselines(tx, agent.device.id, inserts);
      await appendAudit(tx, tenantId, {
        type: 'trust.baseline_recalibrated',
        actor: sub,
        subject: agent.device.id,
        data: { window_start: chosen.start, window_end: chosen.end, dimensions: inserts.map((i) => i.dimension) },
      });
      return { agent_id: agent.device.id, baseline: { window_start: chosen.start, window_end: chosen.end, established_at: now.toISOString(), reason: 'recalibrated' }, dimensions };
    });
  }
}
