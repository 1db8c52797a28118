/**
 * Skill Permission Token rows (DESIGN §8.7): the issued-grant register and its revocation list
 * (`revoked_at` set). Tenant-scoped transactions only.
 */
import { and, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { skillGrants } from '../../db/schema.js';
import { TIERS, type Tier } from '../trust/types.js';

export type SkillGrantRow = typeof skillGrants.$inferSelect;

/** Number of active SPTs of an agent device at `now` (not revoked, not expired): verify-agent's `active_grants` (SPEC §4.11). */
export async function countActiveGrants(tx: Tx, deviceId: string, now: Date): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(skillGrants)
    .where(and(eq(skillGrants.deviceId, deviceId), isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, now)));
  return row?.n ?? 0;
}

/**
 * Revoke every active SPT of `deviceId` issued under a tier above `tier` (SPEC §3.3: a downgrade
 * revokes the grants bound to the lost tier). Returns the revoked `jti`s.
 */
export async function revokeGrantsAboveTier(tx: Tx, deviceId: string, tier: Tier, reason: string, now: Date): Promise<string[]> {
  const above = TIERS.slice(TIERS.indexOf(tier) + 1);
  if (above.length === 0) return [];
  const rows = await tx
    .update(skillGrants)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(skillGrants.deviceId, deviceId), isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, now), inArray(skillGrants.tier, [...above])))
    .returning({ jti: skillGrants.jti });
  return rows.map((r) => r.jti);
}
