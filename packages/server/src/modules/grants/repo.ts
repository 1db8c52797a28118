/**
 * Skill Permission Token rows (DESIGN §8.7): the issued-grant register and its revocation list
 * (`revoked_at` set). Tenant-scoped transactions only.
 */
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
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

/** Insert one issued grant (the register row of an SPT; never the token itself). */
export async function insertGrant(tx: Tx, row: typeof skillGrants.$inferInsert): Promise<SkillGrantRow> {
  const [inserted] = await tx.insert(skillGrants).values(row).returning();
  return inserted!;
}

/**
 * One grant by `jti`; `forUpdate` locks it. Inside `withTenant` only the tenant's grants are
 * visible; inside `crossTenant` (public validation) any tenant's.
 */
export async function getGrant(tx: Tx, jti: string, forUpdate = false): Promise<SkillGrantRow | undefined> {
  const q = tx.select().from(skillGrants).where(eq(skillGrants.jti, jti));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** The active grant (not revoked, not expired at `now`) of a device for `skill` that lasts longest, if any. */
export async function activeGrantFor(tx: Tx, deviceId: string, skill: string, now: Date): Promise<SkillGrantRow | undefined> {
  const [row] = await tx
    .select()
    .from(skillGrants)
    .where(and(eq(skillGrants.deviceId, deviceId), eq(skillGrants.skill, skill), isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, now)))
    .orderBy(desc(skillGrants.expiresAt))
    .limit(1);
  return row;
}

/** Filters and keyset position of {@link listGrants}. */
export interface GrantListQuery {
  deviceId?: string;
  /** true: not revoked and not expired at `now`; false: revoked or expired; undefined: all. */
  active?: boolean;
  now: Date;
  /** Continue after this (issued_at, jti) position (exclusive). */
  after?: { at: Date; id: string };
  limit: number;
}

/** The tenant's grants, newest first by (issued_at, jti). */
export function listGrants(tx: Tx, q: GrantListQuery): Promise<SkillGrantRow[]> {
  const where: (SQL | undefined)[] = [];
  if (q.deviceId) where.push(eq(skillGrants.deviceId, q.deviceId));
  if (q.active === true) where.push(isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, q.now));
  if (q.active === false) where.push(or(isNotNull(skillGrants.revokedAt), lte(skillGrants.expiresAt, q.now)));
  if (q.after) where.push(or(lt(skillGrants.issuedAt, q.after.at), and(eq(skillGrants.issuedAt, q.after.at), lt(skillGrants.jti, q.after.id))));
  return tx
    .select()
    .from(skillGrants)
    .where(and(...where))
    .orderBy(desc(skillGrants.issuedAt), desc(skillGrants.jti))
    .limit(q.limit);
}

/** Put a grant on the revocation list (`revoked_at` = `now`). Answers the updated row. */
export async function revokeGrant(tx: Tx, jti: string, reason: string | null, now: Date): Promise<SkillGrantRow> {
  const [row] = await tx.update(skillGrants).set({ revokedAt: now, revokedReason: reason }).where(eq(skillGrants.jti, jti)).returning();
  return row!;
}
