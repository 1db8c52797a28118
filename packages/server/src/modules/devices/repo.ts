/** Device queries (tenant-scoped transactions unless named otherwise). */
import { and, asc, eq, isNull, lte, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { deviceChallenges, deviceMessageCounts, devices } from '../../db/schema/index.js';

export type DeviceRow = typeof devices.$inferSelect;

export const insertDevice = (tx: Tx, row: typeof devices.$inferInsert) => tx.insert(devices).values(row).returning();

export async function getDevice(tx: Tx, id: string, forUpdate = false): Promise<DeviceRow | undefined> {
  const q = tx.select().from(devices).where(and(eq(devices.id, id), isNull(devices.deletedAt)));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** Tenant of a device id, across tenants (unauthenticated status polling, activation, renewal). */
export async function findDeviceTenant(tx: Tx, id: string): Promise<string | undefined> {
  const [row] = await tx.select({ tenantId: devices.tenantId }).from(devices).where(and(eq(devices.id, id), isNull(devices.deletedAt)));
  return row?.tenantId;
}

export const listDevices = (tx: Tx) => tx.select().from(devices).where(isNull(devices.deletedAt)).orderBy(asc(devices.enrolledAt));

export const updateDevice = (tx: Tx, id: string, set: Partial<typeof devices.$inferInsert>) =>
  tx.update(devices).set(set).where(eq(devices.id, id)).returning();

/**
 * Set last_seen to `at` unless it is already later, and record the UTC hour of `at` in
 * `device_presence` (contract §2.9 `uptime`; one row per device and hour, `on conflict do nothing`),
 * both in the caller's transaction. LastSeenTracker throttles calls to one per 30 s per device.
 */
export async function touchDevice(tx: Tx, id: string, at: Date): Promise<void> {
  await tx
    .update(devices)
    .set({ lastSeen: at })
    .where(and(eq(devices.id, id), sql`(${devices.lastSeen} is null or ${devices.lastSeen} < ${at.toISOString()})`));
  const hour = new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
  await tx.execute(sql`
    insert into device_presence (tenant_id, device_id, hour)
    select tenant_id, id, ${hour.toISOString()}::timestamptz from devices where id = ${id}
    on conflict do nothing`);
}

/**
 * Messages addressed to `deviceId` not delivered yet (contract §4 `GET /devices/{id}/pending`): its
 * `received` count less its `delivered` count (`device_message_counts`, kept by the statements that
 * write messages and their receipts), two rows instead of a scan of the device's history. Never
 * below 0: a receipt written just after its message was deleted counts as delivered.
 */
export async function pendingCount(tx: Tx, deviceId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<string>`coalesce(sum(case when ${deviceMessageCounts.kind} = 'received' then ${deviceMessageCounts.n} else -${deviceMessageCounts.n} end), 0)` })
    .from(deviceMessageCounts)
    .where(eq(deviceMessageCounts.deviceId, deviceId));
  return Math.max(0, Number(row?.n ?? 0));
}

/**
 * Record a renewal challenge as spent (the device row locked FOR UPDATE by the caller, so two
 * renewals with one challenge are serialized): forgets the device's spent challenges that have
 * expired anyway, then answers false when `challenge` was already spent, true after recording it.
 */
export async function spendChallenge(tx: Tx, row: { id: string; tenantId: string; deviceId: string; challenge: string; expiresAt: Date }, now: Date): Promise<boolean> {
  await tx.delete(deviceChallenges).where(and(eq(deviceChallenges.deviceId, row.deviceId), lte(deviceChallenges.expiresAt, now)));
  const [spent] = await tx
    .select({ id: deviceChallenges.id })
    .from(deviceChallenges)
    .where(and(eq(deviceChallenges.deviceId, row.deviceId), eq(deviceChallenges.challenge, row.challenge)));
  if (spent) return false;
  await tx.insert(deviceChallenges).values({ ...row, usedAt: now });
  return true;
}

/** The tenant's ACTIVE (not deleted) devices of `kind`, oldest enrollment first. */
export const activeDevices = (tx: Tx, kind: 'owner' | 'agent') =>
  tx
    .select()
    .from(devices)
    .where(and(eq(devices.kind, kind), eq(devices.status, 'ACTIVE'), sql`${devices.deletedAt} is null`))
    .orderBy(asc(devices.enrolledAt));
