/** Tenant settings queries (tenant-scoped transactions; one row per tenant, design §8.22). */
import { eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { tenantSettings } from '../../db/schema/index.js';

export type SettingsRow = typeof tenantSettings.$inferSelect;

/** The tenant's settings row (locked for update when `lock`), or undefined when it never set any. */
export async function getSettingsRow(tx: Tx, tenantId: string, lock = false): Promise<SettingsRow | undefined> {
  const q = tx.select().from(tenantSettings).where(eq(tenantSettings.tenantId, tenantId));
  const [row] = await (lock ? q.for('update') : q);
  return row;
}

/** Insert or replace the tenant's stored overrides. */
export const upsertSettings = (tx: Tx, tenantId: string, settings: Record<string, unknown>, updatedBy: string) =>
  tx
    .insert(tenantSettings)
    .values({ tenantId, settings, updatedBy, updatedAt: new Date() })
    .onConflictDoUpdate({ target: tenantSettings.tenantId, set: { settings, updatedBy, updatedAt: new Date() } });
