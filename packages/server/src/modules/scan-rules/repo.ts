/** Scan rule set queries (tenant-scoped transactions; versioned, the newest is current). */
import { desc, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { scanRuleSets } from '../../db/schema/index.js';

export type ScanRuleSetRow = typeof scanRuleSets.$inferSelect;

/** The tenant's newest rule set, if it ever saved one. */
export async function latestRuleSet(tx: Tx): Promise<ScanRuleSetRow | undefined> {
  const [row] = await tx.select().from(scanRuleSets).orderBy(desc(scanRuleSets.version)).limit(1);
  return row;
}

/** Every saved version, newest first, without the rules (their count instead). */
export const listVersions = (tx: Tx) =>
  tx
    .select({
      version: scanRuleSets.version,
      ruleCount: sql<number>`jsonb_array_length(${scanRuleSets.rules})::int`,
      createdBy: scanRuleSets.createdBy,
      createdAt: scanRuleSets.createdAt,
    })
    .from(scanRuleSets)
    .orderBy(desc(scanRuleSets.version));

export const insertRuleSet = (tx: Tx, row: typeof scanRuleSets.$inferInsert) => tx.insert(scanRuleSets).values(row).returning();

/** Serialize new versions of one tenant's rule set until the transaction ends (advisory lock). */
export async function lockRuleSets(tx: Tx, tenantId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`scan_rules:${tenantId}`}, 0))`);
}
