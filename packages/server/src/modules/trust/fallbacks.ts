/**
 * contract §3.9 fallbacks (docs/trust-scoring.md "Fallbacks"): the 48-hour warm-up, and the fleet
 * median for a dimension the agent has no data for. Pure: the agent's age comes in as an argument.
 */
import { clamp01 } from './dimensions.js';
import {
  DIMENSION_WEIGHTS,
  NEUTRAL_SCORE,
  TRUST_DIMENSIONS,
  WARMUP_HOURS,
  type DimensionScores,
  type DimensionSource,
  type TrustDimension,
} from './types.js';

const usable = (v: number | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * contract §3.9: ageHours < 48 (or not a finite number) → every dimension NEUTRAL_SCORE (0.5), source
 * 'warmup'. Otherwise each measured value is kept ('telemetry'); a missing one takes
 * fleetMedians[dim] ('fleet_median'), or NEUTRAL_SCORE when the fleet has no median for it either
 * (source still 'fleet_median': the fleet fallback applied, with the neutral value as the fleet's
 * answer). Values are clamped to [0,1]. ageHours is measured from the agent's activation.
 */
export function applyFallbacks(
  measured: Partial<DimensionScores>,
  o: { ageHours: number; fleetMedians: Partial<DimensionScores> },
): { dimensions: DimensionScores; sources: Record<TrustDimension, DimensionSource> } {
  const dimensions = {} as DimensionScores;
  const sources = {} as Record<TrustDimension, DimensionSource>;
  const warmup = !(Number.isFinite(o.ageHours) && o.ageHours >= WARMUP_HOURS);
  for (const dim of TRUST_DIMENSIONS) {
    const own = measured[dim];
    const fleet = o.fleetMedians[dim];
    if (warmup) {
      dimensions[dim] = NEUTRAL_SCORE;
      sources[dim] = 'warmup';
    } else if (usable(own)) {
      dimensions[dim] = clamp01(own);
      sources[dim] = 'telemetry';
    } else {
      dimensions[dim] = usable(fleet) ? clamp01(fleet) : NEUTRAL_SCORE;
      sources[dim] = 'fleet_median';
    }
  }
  return { dimensions, sources };
}

/**
 * The composite of the dimensions measured from real telemetry only (source `telemetry`; the
 * contract §2.9 weights renormalised over them): the score an operator tier grant yields to (design
 * §8.25, trust/tier-grant.ts), which fallback values (warm-up, fleet medians) never lower. null
 * when no dimension comes from telemetry (the 48-hour warm-up, or no data at all). `sources` may
 * be partial or come from a stored snapshot: a dimension without a `telemetry` source, or whose
 * value is not a finite number, does not count. Result in [0,1].
 */
export function telemetryComposite(dimensions: Partial<Record<TrustDimension, unknown>>, sources: Partial<Record<TrustDimension, unknown>>): number | null {
  let num = 0;
  let den = 0;
  for (const dim of TRUST_DIMENSIONS) {
    const v = dimensions[dim];
    if (sources[dim] !== 'telemetry' || typeof v !== 'number' || !Number.isFinite(v)) continue;
    num += DIMENSION_WEIGHTS[dim] * clamp01(v);
    den += DIMENSION_WEIGHTS[dim];
  }
  return den > 0 ? clamp01(num / den) : null;
}
