/** API key queries (tenant-scoped transactions). */
import { asc, eq } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.js';
import { apiKeys, devices } from '../../db/schema/index.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const insertApiKey = (tx: Tx, row: typeof apiKeys.$inferInsert) => tx.insert(apiKeys).values(row).returning();
export const listApiKeys = (tx: Tx) => tx.select().from(apiKeys).orderBy(asc(apiKeys.createdAt));
export const updateApiKey = (tx: Tx, id: string, set: Partial<typeof apiKeys.$inferInsert>) =>
  tx.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning();
export const deleteApiKey = (tx: Tx, id: string) => tx.delete(apiKeys).where(eq(apiKeys.id, id));

export async function getApiKey(tx: Tx, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id)).for('update');
  return row;
}

/**
 * The key with this hash, across tenants (the raw key is the credential; call through a
 * cross-tenant helper), with the status of its bound device when it has one: one statement.
 */
export async function findByHash(q: Queryable, keyHash: string): Promise<(ApiKeyRow & { device: { status: string; deletedAt: Date | null } | null }) | undefined> {
  const [row] = await q
    .select({ key: apiKeys, deviceStatus: devices.status, deviceDeletedAt: devices.deletedAt })
    .from(apiKeys)
    .leftJoin(devices, eq(devices.id, apiKeys.deviceId))
    .where(eq(apiKeys.keyHash, keyHash));
  if (!row) return undefined;
  return { ...row.key, device: row.deviceStatus === null ? null : { status: row.deviceStatus, deletedAt: row.deviceDeletedAt } };
}
