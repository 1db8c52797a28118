/** API key queries (tenant-scoped transactions). */
import { asc, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
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

type KeyWithDevice = ApiKeyRow & { device: { status: string; deletedAt: Date | null } | null };
type KeyRow = { key: ApiKeyRow; deviceStatus: string | null; deviceDeletedAt: Date | null };

/** The lookup by hash, prepared once per database (it runs on every API-key request). */
const byHash = new WeakMap<Db, { execute(p: { hash: string }): Promise<KeyRow[]> }>();

/**
 * The key with this hash, across tenants (the raw key is the credential; call through a
 * cross-tenant helper), with the status of its bound device when it has one: one prepared
 * statement.
 */
export async function findByHash(db: Db, keyHash: string): Promise<KeyWithDevice | undefined> {
  let query = byHash.get(db);
  if (!query) {
    query = db
      .select({ key: apiKeys, deviceStatus: devices.status, deviceDeletedAt: devices.deletedAt })
      .from(apiKeys)
      .leftJoin(devices, eq(devices.id, apiKeys.deviceId))
      .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
      .prepare('parley_api_key_by_hash');
    byHash.set(db, query);
  }
  const [row] = await query.execute({ hash: keyHash });
  if (!row) return undefined;
  return { ...row.key, device: row.deviceStatus === null ? null : { status: row.deviceStatus, deletedAt: row.deviceDeletedAt } };
}
