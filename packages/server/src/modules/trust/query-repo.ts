/**
 * Read-side queries of the trust routes (contract §4.12; design §8.14) over the tables the trust
 * engine writes (trust_snapshots, trust_daily_scores, trust_baselines) and the ones the reports
 * summarise (hub_tier_changes, policy_evaluations, audit_events). Tenant-scoped transactions only
 * (`withTenant`): RLS limits every query to the caller's tenant. The engine's own writes live in
 * trust/repo.ts; the only write here is the manual baseline recalibration.
 */
import { and, asc, count, desc, eq, gte, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { auditEvents, devices, hubIdentities, hubTierChanges, trustBaselines, trustDailyScores, trustSnapshots } from '../../db/schema/index.js';
import { SCORED_DEVICE_STATUSES } from './repo.js';
import type { TrustWindow } from './types.js';

/** A stored snapshot (`dimensions` / `sources` are jsonb objects keyed by dimension). */
export type SnapshotRow = typeof trustSnapshots.$inferSelect;
/** A stored per-day dimension row (`day` = `YYYY-MM-DD`, UTC). */
export type DailyScoreRow = typeof trustDailyScores.$inferSelect;
/** A stored baseline of one dimension (`bins`: proportions summing to 1). */
export type BaselineRow = typeof trustBaselines.$inferSelect;
/** A stored tier change of a hub identity. */
export type TierChangeRow = typeof hubTierChanges.$inferSelect;

/** The newest snapshot of `deviceId` for `window`, or undefined before the engine scored it. */
export async function latestSnapshot(tx: Tx, deviceId: string, window: TrustWindow): Promise<SnapshotRow | undefined> {
  const [row] = await tx
    .select()
    .from(trustSnapshots)
    .where(and(eq(trustSnapshots.deviceId, deviceId), eq(trustSnapshots.window, window)))
    .orderBy(desc(trustSnapshots.computedAt), desc(trustSnapshots.id))
    .limit(1);
  return row;
}

/**
 * The newest `window` snapshot of every agent of the tenant that has one, is not deleted and is
 * still scored (device status in {@link SCORED_DEVICE_STATUSES}: a revoked agent's stale snapshots
 * leave the overview), with the address and tier of the hub identity bound to it (null when
 * none), ordered by device id.
 */
export async function latestSnapshotsOfFleet(tx: Tx, window: TrustWindow): Promise<(SnapshotRow & { hubAddress: string | null; identityTier: string | null })[]> {
  const rows = await tx
    .selectDistinctOn([trustSnapshots.deviceId], { snapshot: trustSnapshots, hubAddress: hubIdentities.hubAddress, identityTier: hubIdentities.trustTier })
    .from(trustSnapshots)
    .innerJoin(devices, and(eq(devices.id, trustSnapshots.deviceId), isNull(devices.deletedAt), inArray(devices.status, [...SCORED_DEVICE_STATUSES])))
    .leftJoin(hubIdentities, eq(hubIdentities.deviceId, trustSnapshots.deviceId))
    .where(eq(trustSnapshots.window, window))
    .orderBy(trustSnapshots.deviceId, desc(trustSnapshots.computedAt), desc(trustSnapshots.id), asc(hubIdentities.createdAt));
  return rows.map((r) => ({ ...r.snapshot, hubAddress: r.hubAddress, identityTier: r.identityTier }));
}

/** `deviceId`'s `window` snapshots computed at or after `since`, oldest first. */
export function snapshotsSince(tx: Tx, deviceId: string, window: TrustWindow, since: Date): Promise<SnapshotRow[]> {
  return tx
    .select()
    .from(trustSnapshots)
    .where(and(eq(trustSnapshots.deviceId, deviceId), eq(trustSnapshots.window, window), gte(trustSnapshots.computedAt, since)))
    .orderBy(asc(trustSnapshots.computedAt), asc(trustSnapshots.id));
}

/** Tier changes of a hub identity recorded at or after `since`, oldest first. */
export function tierChangesSince(tx: Tx, identityId: string, since: Date): Promise<TierChangeRow[]> {
  return tx
    .select()
    .from(hubTierChanges)
    .where(and(eq(hubTierChanges.identityId, identityId), gte(hubTierChanges.createdAt, since)))
    .orderBy(asc(hubTierChanges.createdAt), asc(hubTierChanges.id));
}

/** `deviceId`'s per-day dimension rows from `fromDay` (`YYYY-MM-DD`, inclusive; all when omitted), ascending by day. */
export function dailyScores(tx: Tx, deviceId: string, fromDay?: string): Promise<DailyScoreRow[]> {
  const where = fromDay === undefined ? eq(trustDailyScores.deviceId, deviceId) : and(eq(trustDailyScores.deviceId, deviceId), gte(trustDailyScores.day, fromDay));
  return tx.select().from(trustDailyScores).where(where).orderBy(asc(trustDailyScores.day));
}

/** `deviceId`'s drift baselines, one per dimension that has one. */
export function baselinesOf(tx: Tx, deviceId: string): Promise<BaselineRow[]> {
  return tx.select().from(trustBaselines).where(eq(trustBaselines.deviceId, deviceId)).orderBy(asc(trustBaselines.dimension));
}

/** Replace all of `deviceId`'s baselines by `rows` (manual recalibration, contract §4.12). */
export async function replaceBaselines(tx: Tx, deviceId: string, rows: (typeof trustBaselines.$inferInsert)[]): Promise<void> {
  await tx.delete(trustBaselines).where(eq(trustBaselines.deviceId, deviceId));
  if (rows.length > 0) await tx.insert(trustBaselines).values(rows);
}

/**
 * Policy evaluations where `deviceId` was the sender, since `since`, counted per outcome (allow |
 * block | hold | notify): the recorded rows plus the allow counts (policies/decide.ts), so `allow`
 * counts every allowed delivery as one row each, as older rows do. Outcomes without any are absent.
 */
export async function policyOutcomesSince(tx: Tx, deviceId: string, since: Date): Promise<Record<string, number>> {
  const rows = (await tx.execute(sql`
    select outcome, sum(n)::int as n from (
      select outcome, count(*) as n from policy_evaluations
      where sender_device_id = ${deviceId} and created_at >= ${since.toISOString()}::timestamptz group by outcome
      union all
      select 'allow', sum(allows) from policy_allow_counts
      where sender_device_id = ${deviceId} and created_at >= ${since.toISOString()}::timestamptz
    ) o
    where n > 0
    group by outcome`)) as unknown as { rows: { outcome: string; n: number | string }[] };
  return Object.fromEntries(rows.rows.map((r) => [r.outcome, Number(r.n)]));
}

/**
 * Audit events since `since` that concern an agent: its subject is one of `subjects` (the device
 * id, the hub identity id) or the agent was the actor (`device:<id>`).
 */
export async function countAgentAuditEvents(tx: Tx, subjects: string[], actor: string, since: Date): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(auditEvents)
    .where(and(gte(auditEvents.createdAt, since), or(inArray(auditEvents.subject, subjects), eq(auditEvents.actor, actor))));
  return Number(row?.n ?? 0);
}
