/**
 * Expired operator tier grants of identities the trust recompute does not score (design §8.25;
 * tier-grant.ts): identities without a bound ACTIVE agent device never reach the recompute's tier
 * step, so each recompute of a tenant also ends their expired grants through {@link decideTier}
 * over the stored 7d history (the computed rules then decide from scratch).
 */
import { and, eq, lte } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { hubIdentities } from '../../db/schema/index.js';
import { decideTier, lockIdentities, scoreHistory } from './certify.js';

/**
 * End every expired grant of the tenant's identities not in `scored` (ids of the identities this
 * recompute decides itself), in the tenant's transaction, as `system` (reason `grant_expired`
 * when the tier changes). Answers how many tiers changed.
 */
export async function expireUnscoredGrants(tx: Tx, tenantId: string, scored: ReadonlySet<string>, now: Date): Promise<number> {
  const due = await tx
    .select({ id: hubIdentities.id })
    .from(hubIdentities)
    .where(and(eq(hubIdentities.tierSource, 'operator'), lte(hubIdentities.tierGrantExpiresAt, now)));
  const locked = await lockIdentities(
    tx,
    due.map((r) => r.id).filter((id) => !scored.has(id)),
  );
  let changed = 0;
  for (const identity of locked.values()) {
    const { latest, latestTelemetry, series } = await scoreHistory(tx, tenantId, identity.deviceId, now);
    const decision = await decideTier(tx, { tenantId, identity, latest, latestTelemetry, series, now, reason: 'trust_recompute', actor: 'system' });
    if (decision.changed) changed++;
  }
  return changed;
}
