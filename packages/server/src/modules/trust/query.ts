/**
 * Trust score queries (contract §2.9, §3.9, §4.12; design §8.14, §8.18, §8.21): an agent's current
 * score per window, the tenant fleet overview and an agent's 7-day history. Read-only over what
 * the trust engine wrote (trust/engine.ts); scores are never computed here.
 *
 * - Current score: the newest `trust_snapshots` row of the agent for the window. Before the engine
 *   has scored the agent for that window (a new agent between two recomputes) the answer is
 *   contract §3.9's warm-up answer: every dimension 0.5 with source `warmup`, composite 0.5,
 *   percentile 50, `computed_at` = now ({@link warmupScore}). {@link windowScores} is the one
 *   builder of these values: verify-agent (verification/service.ts) answers the same scores.
 * - `tier` is the agent's current tier: its hub identity's `trust_tier` (certify may have changed
 *   it since the snapshot), `unverified` for an agent without a hub identity. History points carry
 *   the tier stored with each snapshot instead (the tier at that time).
 * - `agent_id` is always the device id, whichever reference the caller used (design §8.18).
 */
import { TRUST_HISTORY_DAYS, type TrustFleet, type TrustHistory, type TrustScore, type TrustTierChange } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { resolveAgent, type AgentRef } from '../hub/index.js';
import { clamp01 } from './dimensions.js';
import { fleetStats } from './fleet.js';
import * as q from './query-repo.js';
import { asTier, NEUTRAL_SCORE, TRUST_DIMENSIONS, type DimensionScores, type DimensionSource, type Tier, type TrustDimension, type TrustWindow } from './types.js';

/** Percentile answered before the engine has scored an agent (the middle of the fleet). */
export const WARMUP_PERCENTILE = 50;
/** `GET /trust-scores/{agent_id}/history` `days`: default and bounds (inclusive); the contract's `TRUST_HISTORY_DAYS`. */
export const HISTORY_DAYS = TRUST_HISTORY_DAYS;
const DAY_MS = 24 * 3600_000;

/** The agent's current tier (module comment). */
export const agentTier = (a: AgentRef): Tier => asTier(a.identity?.trustTier);

/**
 * The 12 values of a stored `dimensions` object, each clamped to [0,1] (a missing or non-finite
 * key reads as {@link NEUTRAL_SCORE}).
 */
export function storedDimensions(raw: unknown): DimensionScores {
  const o = (raw ?? {}) as Record<string, unknown>;
  const value = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? clamp01(v) : NEUTRAL_SCORE);
  return Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, value(o[d])])) as DimensionScores;
}

/** The composite and the 12 dimensions of one window, each 0.0-1.0. */
export interface WindowScores {
  composite: number;
  dimensions: DimensionScores;
}

/**
 * THE score values of an agent for a window (contract §2.9, §3.9), shared by `GET /trust-scores` and
 * verify-agent: the window's newest snapshot (composite clamped to [0,1], dimensions by
 * {@link storedDimensions}), or without one contract §3.9's warm-up values: composite and every
 * dimension {@link NEUTRAL_SCORE} (0.5). Never another window's score and never the identity's
 * stored `trust_score` (that is the 7-day composite).
 */
export function windowScores(snapshot: Pick<q.SnapshotRow, 'composite' | 'dimensions'> | undefined): WindowScores {
  if (!snapshot) return { composite: NEUTRAL_SCORE, dimensions: storedDimensions(undefined) };
  return { composite: Number.isFinite(snapshot.composite) ? clamp01(snapshot.composite) : NEUTRAL_SCORE, dimensions: storedDimensions(snapshot.dimensions) };
}

function storedSources(raw: unknown): Record<TrustDimension, DimensionSource> {
  const o = (raw ?? {}) as Record<string, unknown>;
  const ok = (v: unknown): v is DimensionSource => v === 'telemetry' || v === 'fleet_median' || v === 'warmup';
  return Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, ok(o[d]) ? o[d] : 'warmup'])) as Record<TrustDimension, DimensionSource>;
}

/** contract §3.9's answer before any snapshot (module comment). */
export function warmupScore(agent: AgentRef, window: TrustWindow, now: Date): TrustScore {
  return scoreOut(agent, window, undefined, now);
}

/** The score answer of `agent` from its snapshot, or contract §3.9's warm-up answer when there is none. */
export function scoreOut(agent: AgentRef, window: TrustWindow, snapshot: q.SnapshotRow | undefined, now: Date): TrustScore {
  const { composite, dimensions } = windowScores(snapshot);
  return {
    agent_id: agent.device.id,
    hub_address: agent.identity?.hubAddress ?? null,
    window,
    composite_score: composite,
    tier: agentTier(agent),
    dimensions,
    percentile: snapshot ? snapshot.percentile : WARMUP_PERCENTILE,
    computed_at: (snapshot ? snapshot.computedAt : now).toISOString(),
    sources: snapshot ? storedSources(snapshot.sources) : (Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 'warmup'])) as Record<TrustDimension, DimensionSource>),
  };
}

export const tierChangeOut = (r: q.TierChangeRow): TrustTierChange => ({ from_tier: r.fromTier, to_tier: r.toTier, reason: r.reason, changed_at: r.createdAt.toISOString() });

/** The current score of a resolved agent (inside the caller's tenant transaction). */
export async function currentScore(tx: Tx, agent: AgentRef, window: TrustWindow, now: Date): Promise<TrustScore> {
  return scoreOut(agent, window, await q.latestSnapshot(tx, agent.device.id, window), now);
}

export class TrustQueryService {
  constructor(private readonly opts: { db: Db; now?: () => Date }) {}

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** `GET /trust-scores/{agent_id}`. @throws 404 when `agentRef` names no agent of the tenant. */
  score(tenantId: string, agentRef: string, window: TrustWindow): Promise<TrustScore> {
    return withTenant(this.opts.db, tenantId, async (tx) => currentScore(tx, await resolveAgent(tx, agentRef), window, this.now()));
  }

  /** `GET /trust-scores/fleet`: the newest snapshot of each agent; statistics by fleet.ts `fleetStats` (population std dev). */
  async fleet(tenantId: string, window: TrustWindow): Promise<TrustFleet> {
    const rows = await withTenant(this.opts.db, tenantId, (tx) => q.latestSnapshotsOfFleet(tx, window));
    const newest = rows.reduce<Date | null>((m, r) => (m === null || r.computedAt > m ? r.computedAt : m), null);
    return {
      window,
      computed_at: newest?.toISOString() ?? null,
      count: rows.length,
      agents: rows.map((r) => ({ agent_id: r.deviceId, hub_address: r.hubAddress, composite_score: r.composite, tier: asTier(r.identityTier), percentile: r.percentile })),
      dimensions: fleetStats(rows.map((r) => storedDimensions(r.dimensions))),
    };
  }

  /** `GET /trust-scores/{agent_id}/history`: `days` in {@link HISTORY_DAYS} (the route validates). @throws 404 as {@link score}. */
  history(tenantId: string, agentRef: string, days: number): Promise<TrustHistory> {
    const since = new Date(this.now().getTime() - days * DAY_MS);
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const agent = await resolveAgent(tx, agentRef);
      const snaps = await q.snapshotsSince(tx, agent.device.id, '7d', since);
      const changes = agent.identity ? await q.tierChangesSince(tx, agent.identity.id, since) : [];
      return {
        agent_id: agent.device.id,
        days,
        history: snaps.map((s) => ({ computed_at: s.computedAt.toISOString(), composite_score: s.composite, tier: asTier(s.tier), dimensions: storedDimensions(s.dimensions) })),
        tier_changes: changes.map(tierChangeOut),
      };
    });
  }
}
