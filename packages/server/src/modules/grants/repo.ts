/**
 * Skill Permission Token rows (design §8.7): the issued-grant register and its revocation list
 * (`revoked_at` set). Tenant-scoped transactions only.
 */
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { devices, hubIdentities, skillGrants } from '../../db/schema/index.js';
import { TRUST_TIERS as TIERS, type TrustTier as Tier } from '@parley/protocol';

export type SkillGrantRow = typeof skillGrants.$inferSelect;

/** Number of active SPTs of an agent device at `now` (not revoked, not expired): verify-agent's `active_grants` (contract §4.11). */
export async function countActiveGrants(tx: Tx, deviceId: string, now: Date): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(skillGrants)
    .where(and(eq(skillGrants.deviceId, deviceId), isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, now)));
  return row?.n ?? 0;
}

/**
 * Revoke every active SPT of `deviceId` issued under a tier above `tier` (contract §3.3: a downgrade
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

/**
 * Revoke every active SPT of `deviceId` (device revoked or deleted, hub identity suspended):
 * a grant never outlives the agent it was issued to. Returns the revoked `jti`s.
 */
export async function revokeAllGrantsOf(tx: Tx, deviceId: string, reason: string, now: Date): Promise<string[]> {
  const rows = await tx
    .update(skillGrants)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(skillGrants.deviceId, deviceId), isNull(skillGrants.revokedAt), gt(skillGrants.expiresAt, now)))
    .returning({ jti: skillGrants.jti });
  return rows.map((r) => r.jti);
}

/**
 * Lock the agent an SPT is about to be issued to, FOR SHARE: its device row and the hub identity
 * bound to it (at most one). Held until the issuing transaction ends, so a concurrent tier
 * decision (trust/certify.ts `decideTier`, which locks the identity FOR UPDATE and revokes the grants
 * of a lost tier) or a device revocation (device row FOR UPDATE, then `revokeAllGrantsOf`) either
 * commits before the issuer reads the tier and device state (and the issuer sees the new values)
 * or waits for the issue to commit (and then revokes the new grant too). Lock order device ->
 * identity, as in the device revocation.
 */
export async function lockAgentShared(tx: Tx, deviceId: string): Promise<void> {
  await tx.select({ id: devices.id }).from(devices).where(eq(devices.id, deviceId)).for('share');
  await tx.select({ id: hubIdentities.id }).from(hubIdentities).where(eq(hubIdentities.deviceId, deviceId)).for('share');
}

/**
 * The hub identities bound to `deviceId` (at most one by the binding rule), locked FOR UPDATE
 * (the lock {@link lockAgentShared} and `decideTier` expect), oldest first.
 */
export function lockIdentitiesOfDevice(tx: Tx, deviceId: string): Promise<(typeof hubIdentities.$inferSelect)[]> {
  return tx.select().from(hubIdentities).where(eq(hubIdentities.deviceId, deviceId)).orderBy(hubIdentities.createdAt).for('update');
}

/** A grant with the standing of the agent it was issued to ({@link grantStanding}). */
export interface GrantStanding {
  grant: SkillGrantRow;
  /** The device's status (`ACTIVE`…), or null when the row is gone. */
  deviceStatus: string | null;
  /** When the device was deleted (null: not deleted). */
  deviceDeletedAt: Date | null;
  /** The hub identity bound to the grant's device now: its address and status (null: none bound). */
  identity: { hubAddress: string; status: string } | null;
}

/**
 * One grant by `jti` joined with its device and the hub identity bound to that device: what the
 * `revocation` check of `POST /grants/validate` needs (a grant of a revoked or deleted device, or of
 * an identity that is suspended or no longer bound, is revoked in effect). Called inside
 * `crossTenant` by the public validator.
 */
export async function grantStanding(tx: Tx, jti: string): Promise<GrantStanding | undefined> {
  const [row] = await tx
    .select({ grant: skillGrants, deviceStatus: devices.status, deviceDeletedAt: devices.deletedAt, hubAddress: hubIdentities.hubAddress, identityStatus: hubIdentities.status })
    .from(skillGrants)
    .leftJoin(devices, eq(devices.id, skillGrants.deviceId))
    .leftJoin(hubIdentities, eq(hubIdentities.deviceId, skillGrants.deviceId))
    .where(eq(skillGrants.jti, jti))
    .orderBy(hubIdentities.createdAt)
    .limit(1);
  if (!row) return undefined;
  return {
    grant: row.grant,
    deviceStatus: row.deviceStatus,
    deviceDeletedAt: row.deviceDeletedAt,
    identity: row.hubAddress !== null && row.identityStatus !== null ? { hubAddress: row.hubAddress, status: row.identityStatus } : null,
  };
}
