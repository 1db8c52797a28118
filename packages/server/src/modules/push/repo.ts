/** Push-token queries (tenant-scoped transactions). */
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { pushTokens } from '../../db/schema/index.js';

export type PushTokenRow = typeof pushTokens.$inferSelect;

/**
 * Insert a push token, or return the existing row for the same (device, token) with its platform
 * updated: registration is idempotent.
 */
export async function upsertPushToken(tx: Tx, row: typeof pushTokens.$inferInsert): Promise<PushTokenRow> {
  const [saved] = await tx
    .insert(pushTokens)
    .values(row)
    .onConflictDoUpdate({ target: [pushTokens.deviceId, pushTokens.token], set: { platform: sql`excluded.platform` } })
    .returning();
  return saved!;
}
