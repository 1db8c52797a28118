/** Audit event queries (tenant-scoped transactions; the app role may only SELECT and INSERT). */
import { and, asc, desc, eq, gte, lt, lte, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { auditEvents } from '../../db/schema/index.js';

export type AuditRow = typeof auditEvents.$inferSelect;

/** Serialise appends of one tenant until the transaction ends (DESIGN §8.10). */
export async function lockChain(tx: Tx, tenantId: string): Promise<void> {
  await xactLock(tx, `audit:${tenantId}`);
}

/** The newest link of the tenant's chain, or undefined when it is empty. */
export async function lastLink(tx: Tx, tenantId: string): Promise<{ seq: number; hash: string } | undefined> {
  const [row] = await tx
    .select({ seq: auditEvents.seq, hash: auditEvents.hash })
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(desc(auditEvents.seq))
    .limit(1);
  return row;
}

export const insertAuditEvent = (tx: Tx, row: typeof auditEvents.$inferInsert) => tx.insert(auditEvents).values(row);

/** Filters of `GET /audit/events` (DESIGN §8.22); `beforeSeq` is the cursor (exclusive). */
export interface AuditFilter {
  type?: string;
  actor?: string;
  subject?: string;
  since?: Date;
  until?: Date;
  beforeSeq?: number;
  limit: number;
}

/** One page, newest first (by `seq`). */
export function listAuditEvents(tx: Tx, tenantId: string, f: AuditFilter): Promise<AuditRow[]> {
  const where: SQL[] = [eq(auditEvents.tenantId, tenantId)];
  if (f.type !== undefined) where.push(eq(auditEvents.type, f.type));
  if (f.actor !== undefined) where.push(eq(auditEvents.actor, f.actor));
  if (f.subject !== undefined) where.push(eq(auditEvents.subject, f.subject));
  if (f.since) where.push(gte(auditEvents.createdAt, f.since));
  if (f.until) where.push(lte(auditEvents.createdAt, f.until));
  if (f.beforeSeq !== undefined) where.push(lt(auditEvents.seq, f.beforeSeq));
  return tx
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(desc(auditEvents.seq))
    .limit(f.limit);
}

/** The tenant's whole chain in `seq` order (for verification). */
export const chainOf = (tx: Tx, tenantId: string) =>
  tx.select().from(auditEvents).where(eq(auditEvents.tenantId, tenantId)).orderBy(asc(auditEvents.seq));
