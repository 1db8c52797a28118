/** Audit event queries (tenant-scoped transactions; the app role may only SELECT and INSERT). */
import { and, asc, desc, eq, gte, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { xactLock } from '../../db/locks.js';
import { auditEvents, hubIdentities } from '../../db/schema/index.js';

export type AuditRow = typeof auditEvents.$inferSelect;

/** Serialise appends of one tenant until the transaction ends (design §8.10). */
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

/**
 * What an append needs, in one statement: the newest link of the tenant's chain and the frontier
 * of its Merkle tree (tree.ts): for each set bit `l` of the leaf count `n` (= the newest seq), the
 * complete subtree (`l`, (n >> l) - 1) at the tree's right edge, by level. Undefined for an empty chain.
 */
export async function appendPoint(tx: Tx, tenantId: string): Promise<{ seq: number; hash: string; frontier: Map<number, Buffer> } | undefined> {
  const res = (await tx.execute(sql`
    select e.seq::float8 as seq, e.hash,
      (select coalesce(json_agg(json_build_array(n.level, encode(n.hash, 'hex'))), '[]'::json)
         from audit_tree_nodes n
        where n.tenant_id = e.tenant_id
          and (n.level, n.idx) in (select l, (e.seq >> l) - 1 from generate_series(0, 62) as l where (e.seq >> l) & 1 = 1)) as frontier
    from audit_events e where e.tenant_id = ${tenantId} order by e.seq desc limit 1`)) as unknown as { rows: { seq: number; hash: string; frontier: [number, string][] | string }[] };
  const row = res.rows[0];
  if (!row) return undefined;
  const frontier = typeof row.frontier === 'string' ? (JSON.parse(row.frontier) as [number, string][]) : row.frontier;
  return { seq: Number(row.seq), hash: row.hash, frontier: new Map(frontier.map(([level, hash]) => [level, Buffer.from(hash, 'hex')])) };
}

export const insertAuditEvent = (tx: Tx, row: typeof auditEvents.$inferInsert) => tx.insert(auditEvents).values(row);

/** Filters of `GET /audit/events` (design §8.22); `beforeSeq` is the cursor (exclusive). */
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

/** The hub address bound to `deviceId` (the actor of an `agent.action` event), or null. */
export async function hubAddressOfDevice(tx: Tx, deviceId: string): Promise<string | null> {
  const [row] = await tx.select({ hubAddress: hubIdentities.hubAddress }).from(hubIdentities).where(eq(hubIdentities.deviceId, deviceId)).orderBy(asc(hubIdentities.createdAt)).limit(1);
  return row?.hubAddress ?? null;
}
