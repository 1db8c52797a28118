/**
 * The trust engine (contract §2.9, §3.3, §3.9, §4.12; design §8.14; docs/trust-scoring.md for the
 * formulas, docs/decisions.md "Trust engine" for the choices made here). A recompute of one tenant
 * is ONE tenant-scoped transaction, preceded by a short one that re-rolls the tenant's dirty span
 * days (trust/rollups.ts rollUpDirtyDays: closed days whose spans changed since their roll-up):
 *
 * 1. extract 90 UTC days of DailySignals for every scored agent at once (trust/repo.ts, one query
 *    per source; spans from the daily roll-ups, today's partial day from raw spans);
 * 2. per window (7d, 30d, 90d = the N UTC days ending today): measure each agent in two passes
 *    (first tokensPerSuccessfulTask for the fleet median, then measureDimensions), take the fleet
 *    medians, apply the §3.9 fallbacks (48-hour warm-up from activation, fleet median for missing
 *    dimensions), composite and percentile rank within the tenant fleet;
 * 3. tiers (contract §3.3) of agents with a bound hub identity: certify.ts decideTier over the
 *    identity's 7d history plus this run's composite and its real-telemetry part (downgrade at
 *    once, upgrade after the 7-day hold when the certification checks pass; an operator grant,
 *    design §8.25, falls only on real telemetry), with all side effects; expired operator grants
 *    of the tenant's other identities end too (grant-expiry.ts);
 * 4. writes: trust_snapshots (3 per agent, computed_at = now, tier after step 3), per-day
 *    dimension values (trust_daily_scores) of the days touched since the previous run, the initial
 *    PSI baselines (first stable 30-day window from activation day + 2, COMPLETE days only: the
 *    window ends before today), and `hub_identities.trust_score` = the latest 7d composite.
 *
 * Runs of one tenant never overlap: the transaction first takes the advisory lock
 * `pg_try_advisory_xact_lock(hashtextextended('trust:' || tenant_id, 0))` (released at commit);
 * when another run holds it, {@link RecomputeBusyError} (409) is thrown — the route answers it,
 * {@link TrustEngine.recomputeAll} skips the tenant (`skippedTenants`).
 *
 * Time comes in as `now` (an injected clock for tests and benchmarks); events after `now` are not
 * read. {@link TrustEngine.recomputeAll} iterates every tenant (crossTenant listing of ids), one
 * transaction per tenant; a failing tenant is logged and skipped.
 */
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { ChangeListeners } from '../../lib/listeners.js';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import { decideTier, lockIdentities } from './certify.js';
import { expireUnscoredGrants } from './grant-expiry.js';
import { addDays, utcDay, windowStartDay } from '../../lib/days.js';
import { compositeScore, measureDimensions, tokensPerSuccessfulTask } from './dimensions.js';
import { applyFallbacks, telemetryComposite } from './fallbacks.js';
import { fleetMedians, median, percentileRank } from './fleet.js';
import { baselineFor, chooseBaselineWindow } from './psi.js';
import * as repo from './repo.js';
import { rollUpDirtyDays } from './rollups.js';
import {
  TIER_HOLD_DAYS,
  TRUST_DIMENSIONS,
  TRUST_WINDOWS,
  WINDOW_DAYS,
  type DailySignals,
  type DimensionScores,
  type DimensionSource,
  type Tier,
  type TrustDimension,
  type TrustWindow,
} from './types.js';

const HOUR_MS = 3_600_000;
/** Days of signals read per recompute: the longest window. */
export const EXTRACT_DAYS = Math.max(...TRUST_WINDOWS.map((w) => WINDOW_DAYS[w]));
/**
 * Days after the activation day from which a first baseline can exist: the 2-day warm-up, then
 * the 30-day window, which must be complete (its last day, activation day + 31, before today).
 */
const BASELINE_EARLIEST_DAYS = 2 + 30;

/** Another recompute of the tenant holds its advisory lock (409; the job skips the tenant). */
export class RecomputeBusyError extends AppError {
  constructor() {
    super(ErrorCode.Conflict, 'a trust recompute of this tenant is already running; retry when it has finished');
  }
}

/**
 * Take the tenant's recompute lock for the rest of the transaction, without waiting
 * (`pg_try_advisory_xact_lock`). @throws RecomputeBusyError when another transaction holds it.
 */
async function lockTenantRecompute(tx: Tx, tenantId: string): Promise<void> {
  const res = (await tx.execute(sql`select pg_try_advisory_xact_lock(hashtextextended(${'trust:' + tenantId}, 0)) as ok`)) as unknown as { rows: { ok: boolean }[] };
  if (res.rows[0]?.ok !== true) throw new RecomputeBusyError();
}

/** Counts of a recompute (one tenant, or all of them). */
export interface RecomputeSummary {
  tenants: number;
  /** Tenants whose recompute failed (logged; recomputeAll only). */
  failedTenants: number;
  /** Tenants skipped because another recompute of theirs was running (recomputeAll only). */
  skippedTenants: number;
  agents: number;
  /** (device, day) span roll-ups rebuilt before scoring (trust/rollups.ts rollUpDirtyDays). */
  rolledUpPairs: number;
  snapshots: number;
  dailyScores: number;
  baselines: number;
  tierChanges: number;
  durationMs: number;
}

const emptySummary = (): RecomputeSummary => ({ tenants: 0, failedTenants: 0, skippedTenants: 0, agents: 0, rolledUpPairs: 0, snapshots: 0, dailyScores: 0, baselines: 0, tierChanges: 0, durationMs: 0 });

/** One agent's score in one window. */
export interface AgentWindowScore {
  measured: Partial<DimensionScores>;
  dimensions: DimensionScores;
  sources: Record<TrustDimension, DimensionSource>;
  composite: number;
  percentile: number;
}

/** Scores of a fleet per window and the 7d fleet median of tokens per successful task. */
export interface FleetScores {
  windows: Record<TrustWindow, Map<string, AgentWindowScore>>;
  /** Median over the agents of tokensPerSuccessfulTask in the 7d window (token_efficiency of daily values); null when nobody has one. */
  medianTokens7d: number | null;
}

/**
 * Score every agent in every window (pure; steps 2 of the module comment). `signals`: each
 * agent's days ascending (trust/repo.ts extractSignals); agents without an entry score on no data.
 */
export function scoreFleet(agents: readonly repo.TrustAgent[], signals: ReadonlyMap<string, readonly DailySignals[]>, now: Date): FleetScores {
  const windows = {} as Record<TrustWindow, Map<string, AgentWindowScore>>;
  let medianTokens7d: number | null = null;
  for (const w of TRUST_WINDOWS) {
    const first = windowStartDay(now, WINDOW_DAYS[w]);
    const days = new Map(agents.map((a) => [a.deviceId, (signals.get(a.deviceId) ?? []).filter((d) => d.day >= first)]));
    // Pass 1: the fleet median of tokens per successful task.
    const perSuccess = agents.map((a) => tokensPerSuccessfulTask(days.get(a.deviceId)!)).filter((x): x is number => x !== null);
    const fleetMedianTokensPerSuccess = median(perSuccess);
    if (w === '7d') medianTokens7d = fleetMedianTokensPerSuccess;
    // Pass 2: every dimension, the fleet medians, the fallbacks.
    const measured = agents.map((a) => measureDimensions(days.get(a.deviceId)!, { fleetMedianTokensPerSuccess }));
    const medians = fleetMedians(measured);
    const scored = agents.map((a, i) => {
      const { dimensions, sources } = applyFallbacks(measured[i]!, { ageHours: (now.getTime() - a.since.getTime()) / HOUR_MS, fleetMedians: medians });
      return { measured: measured[i]!, dimensions, sources, composite: compositeScore(dimensions) };
    });
    const composites = scored.map((s) => s.composite);
    windows[w] = new Map(agents.map((a, i) => [a.deviceId, { ...scored[i]!, percentile: percentileRank(scored[i]!.composite, composites) }]));
  }
  return { windows, medianTokens7d };
}

/** Dependencies of the engine. */
export interface TrustEngineDeps {
  db: Db;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
}

export class TrustEngine {
  private readonly recomputed: ChangeListeners;

  constructor(private readonly deps: TrustEngineDeps) {
    this.recomputed = new ChangeListeners(deps.log, 'the trust recompute');
  }

  /**
   * Call `fn` after every committed recompute (one tenant through the route, or the whole
   * periodic run, once at its end): scores and tiers changed, so whoever acts on them (the
   * marketplace's rental monitor, contract §4.16) looks at once. Errors are logged, never thrown.
   */
  onRecomputed(fn: () => Promise<void>): void {
    this.recomputed.add(fn);
  }

  /** {@link recomputeTenantOnce}, then the listeners of {@link onRecomputed}. */
  async recomputeTenant(tenantId: string, now: Date = new Date()): Promise<RecomputeSummary> {
    const s = await this.recomputeTenantOnce(tenantId, now);
    await this.recomputed.run();
    return s;
  }

  /**
   * Recompute every score of one tenant at `now` (module comment), in one transaction.
   * Returns the counts written (`tenants` = 1).
   * @throws RecomputeBusyError (409) when another recompute of the tenant is running.
   */
  async recomputeTenantOnce(tenantId: string, now: Date = new Date()): Promise<RecomputeSummary> {
    const started = performance.now();
    // Step 0, its own short transaction: re-roll the closed days whose spans changed (late spans included).
    const rolled = await rollUpDirtyDays(this.deps.db, tenantId, utcDay(now));
    return withTenant(this.deps.db, tenantId, async (tx) => {
      await lockTenantRecompute(tx, tenantId);
      const summary = { ...emptySummary(), tenants: 1, rolledUpPairs: rolled.pairs };
      const agents = await repo.listAgents(tx, tenantId);
      summary.agents = agents.length;
      const scored = new Set(agents.flatMap((a) => (a.identityId ? [a.identityId] : [])));
      summary.tierChanges += await expireUnscoredGrants(tx, tenantId, scored, now);
      if (agents.length === 0) return { ...summary, durationMs: performance.now() - started };
      const today = utcDay(now);
      const signals = await repo.extractSignals(tx, tenantId, agents, windowStartDay(now, EXTRACT_DAYS), now);
      const scores = scoreFleet(agents, signals, now);
      const w7 = scores.windows['7d'];

      // Tiers of agents bound to a hub identity (contract §3.3).
      const tierOf = new Map<string, Tier>();
      const bound = agents.filter((a) => a.identityId !== null);
      const locked = await lockIdentities(
        tx,
        bound.map((a) => a.identityId!),
      );
      const series = await repo.tierSeries(
        tx,
        tenantId,
        bound.map((a) => a.deviceId),
        now,
        TIER_HOLD_DAYS,
      );
      for (const a of bound) {
        const identity = locked.get(a.identityId!);
        if (!identity) continue;
        const score = w7.get(a.deviceId)!;
        const latest = score.composite;
        const latestTelemetry = telemetryComposite(score.dimensions, score.sources);
        const history = [...(series.get(a.deviceId) ?? []).filter((p) => p.at.getTime() < now.getTime()), { at: now, composite: latest }];
        const decision = await decideTier(tx, { tenantId, identity, latest, latestTelemetry, series: history, now, reason: 'trust_recompute', actor: 'system' });
        if (decision.changed) {
          summary.tierChanges++;
          this.deps.log.info({ tenantId, identityId: identity.id, from: decision.from, to: decision.to }, 'trust tier changed');
        }
        tierOf.set(a.deviceId, decision.to);
      }

      // Snapshots: 3 windows per agent.
      const snapshots: repo.SnapshotInsert[] = [];
      for (const w of TRUST_WINDOWS) {
        for (const a of agents) {
          const s = scores.windows[w].get(a.deviceId)!;
          snapshots.push({ deviceId: a.deviceId, window: w, composite: s.composite, dimensions: s.dimensions, sources: s.sources, percentile: s.percentile, tier: tierOf.get(a.deviceId) ?? 'unverified' });
        }
      }
      const lastAt = await repo.lastComputedAt(tx, tenantId);
      await repo.insertSnapshots(tx, tenantId, now, snapshots);
      summary.snapshots = snapshots.length;

      // Per-day dimension values of the days touched since the previous run (one day back for late spans).
      const daily: repo.DailyScoreUpsert[] = [];
      const ctx = { fleetMedianTokensPerSuccess: scores.medianTokens7d };
      for (const a of agents) {
        const prev = lastAt.get(a.deviceId);
        const fromDay = prev ? addDays(utcDay(prev), -1) : '';
        for (const d of signals.get(a.deviceId) ?? []) {
          if (d.day < fromDay) continue;
          const dimensions = measureDimensions([d], ctx);
          if (Object.keys(dimensions).length > 0) daily.push({ deviceId: a.deviceId, day: d.day, dimensions });
        }
      }
      await repo.upsertDailyScores(tx, tenantId, now, daily);
      summary.dailyScores = daily.length;

      // Initial baselines (contract §4.12): agents without one, old enough to have a complete 30-day
      // window after the warm-up (activation day + 32 ≤ today); today's partial day never counts.
      const withBaseline = await repo.devicesWithBaseline(tx, tenantId);
      const candidates = agents.filter((a) => !withBaseline.has(a.deviceId) && addDays(utcDay(a.since), BASELINE_EARLIEST_DAYS) <= today);
      const dailyRows = await repo.dailyRowsOf(
        tx,
        tenantId,
        candidates.map((a) => a.deviceId),
      );
      const baselines: repo.BaselineInsert[] = [];
      for (const a of candidates) {
        const window = chooseBaselineWindow(dailyRows.get(a.deviceId) ?? [], { notBefore: addDays(utcDay(a.since), 2), before: today, mode: 'first' });
        if (!window) continue;
        for (const dimension of TRUST_DIMENSIONS) {
          const b = baselineFor(window.rows, dimension);
          if (b) baselines.push({ deviceId: a.deviceId, dimension, bins: b.bins, samples: b.samples, windowStart: window.start, windowEnd: window.end });
        }
      }
      await repo.insertInitialBaselines(tx, tenantId, now, baselines);
      summary.baselines = baselines.length;

      // The profile's trust_score: the latest 7d composite of the bound identity.
      await repo.setIdentityScores(
        tx,
        bound.map((a) => ({ identityId: a.identityId!, score: w7.get(a.deviceId)!.composite })),
      );
      return { ...summary, durationMs: performance.now() - started };
    });
  }

  /**
   * Recompute every tenant at `now`, one transaction each (tenant ids listed across tenants:
   * the periodic job is platform-wide). A tenant that fails is logged and counted in
   * `failedTenants`, one whose recompute is already running (the route) is counted in
   * `skippedTenants`; the others still run.
   */
  async recomputeAll(now: Date = new Date()): Promise<RecomputeSummary> {
    const started = performance.now();
    const ids = await crossTenant(this.deps.db, 'the trust recompute job visits every tenant', (tx) => repo.listTenantIds(tx));
    const total = emptySummary();
    for (const id of ids) {
      try {
        const s = await this.recomputeTenantOnce(id, now);
        total.tenants++;
        total.agents += s.agents;
        total.rolledUpPairs += s.rolledUpPairs;
        total.snapshots += s.snapshots;
        total.dailyScores += s.dailyScores;
        total.baselines += s.baselines;
        total.tierChanges += s.tierChanges;
      } catch (err) {
        if (err instanceof RecomputeBusyError) {
          total.skippedTenants++;
          this.deps.log.info({ tenantId: id }, 'trust recompute of a tenant skipped: another one is running');
          continue;
        }
        total.failedTenants++;
        this.deps.log.error({ err, tenantId: id }, 'trust recompute of a tenant failed');
      }
    }
    await this.recomputed.run();
    return { ...total, durationMs: performance.now() - started };
  }
}
