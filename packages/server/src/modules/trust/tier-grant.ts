/**
 * Operator tier grants inside tier decisions (design §8.25; contract §3.3, §3.9; docs/decisions.md
 * "Platform operators and operator tier grants"). A platform operator grants a tier after a
 * review (operator-tier.ts); the identity then has `tier_source = 'operator'`, the grant's reason
 * and an optional expiry. {@link decideTier} (certify.ts) consults the rules here:
 *
 * - valid grant (source `operator`, no expiry or expiry after `now`):
 *   - a computed downgrade applies only when the score from real telemetry is below the current
 *     tier's threshold too: the tier falls to the tier of max(latest composite, real-telemetry
 *     composite) (trust/fallbacks.ts `telemetryComposite`). Fallback values (the 48-hour warm-up,
 *     fleet medians of missing dimensions, contract §3.9) therefore never lower a granted tier, and a
 *     grant never makes a decision harsher than the computed one;
 *   - a computed upgrade (the usual hold and checks) applies, except out of an `unverified` grant
 *     (the operator's negative review stands until it expires or another grant replaces it);
 *   - any change ends the grant (the tier is computed again).
 * - expired grant: the grant ends (`tier_source` back to `computed`) and the tier is whatever the
 *   computed rules give from scratch (decided from `unverified`: an upgrade needs the 7-day hold
 *   and the checks); a resulting change is recorded with reason `grant_expired`.
 */
import { and, desc, eq, lte } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { trustSnapshots } from '../../db/schema/index.js';
import { telemetryComposite } from './fallbacks.js';
import { tierForScore } from './tiers.js';
import { TIER_THRESHOLDS, tierRank, type TrustTier as Tier, type TrustDimension } from '@parley/protocol';
import type { HubIdentityRow } from '../hub/index.js';

/** State of an identity's operator grant at a time: none, valid, or expired (still stored). */
export type GrantState = 'none' | 'valid' | 'expired';

/** The grant state of `h` at `now` (pure): `valid` until `tier_grant_expires_at` (exclusive). */
export function grantState(h: Pick<HubIdentityRow, 'tierSource' | 'tierGrantExpiresAt'>, now: Date): GrantState {
  if (h.tierSource !== 'operator') return 'none';
  return h.tierGrantExpiresAt !== null && h.tierGrantExpiresAt.getTime() <= now.getTime() ? 'expired' : 'valid';
}

/** The identity columns of an ended grant: the tier is computed again. */
export const ENDED_GRANT = { tierSource: 'computed', tierGrantReason: null, tierGrantExpiresAt: null } as const;

/** Input of {@link tierUnderGrant}. */
export interface GrantedDecision {
  /** The granted (current) tier. */
  from: Tier;
  /** The tier the computed rules chose. */
  computed: Tier;
  /** The latest 7d composite (null: none). */
  latest: number | null;
  /** The latest 7d composite over real-telemetry dimensions only (null: none, e.g. the warm-up). */
  latestTelemetry: number | null;
}

/**
 * The tier a computed decision gives an identity under a VALID grant, and the score that decided
 * a fall (pure; module comment): a fall needs max(latest, latestTelemetry) below the threshold
 * of `from` and lands on that score's tier; a rise is kept unless `from` is `unverified`.
 */
export function tierUnderGrant(d: GrantedDecision): { tier: Tier; score: number | null } {
  const down = tierRank(d.computed) < tierRank(d.from);
  if (!down) return { tier: d.from === 'unverified' ? d.from : d.computed, score: null };
  if (d.latestTelemetry === null) return { tier: d.from, score: null };
  const score = Math.max(d.latest ?? 0, d.latestTelemetry);
  return score >= TIER_THRESHOLDS[d.from] ? { tier: d.from, score: null } : { tier: tierForScore(score), score };
}

/**
 * The real-telemetry composite of the device's latest stored 7d snapshot at or before `now`
 * (trust/fallbacks.ts `telemetryComposite` over its `dimensions` and `sources`); null without a
 * snapshot or without any telemetry dimension. Runs in the tenant's transaction.
 */
export async function latestTelemetryScore(tx: Tx, tenantId: string, deviceId: string | null, now: Date): Promise<number | null> {
  if (!deviceId) return null;
  const [row] = await tx
    .select({ dimensions: trustSnapshots.dimensions, sources: trustSnapshots.sources })
    .from(trustSnapshots)
    .where(and(eq(trustSnapshots.tenantId, tenantId), eq(trustSnapshots.deviceId, deviceId), eq(trustSnapshots.window, '7d'), lte(trustSnapshots.computedAt, now)))
    .orderBy(desc(trustSnapshots.computedAt))
    .limit(1);
  if (!row) return null;
  return telemetryComposite(row.dimensions as Partial<Record<TrustDimension, unknown>>, row.sources as Partial<Record<TrustDimension, unknown>>);
}
