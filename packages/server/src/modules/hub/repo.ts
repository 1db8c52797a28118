/** Hub identity queries (tenant-scoped transactions unless named otherwise). */
import { asc, eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { hubIdentities } from '../../db/schema.js';

/** A stored hub identity (SPEC §2.8). */
export type HubIdentityRow = typeof hubIdentities.$inferSelect;

export const insertHubIdentity = (tx: Tx, row: typeof hubIdentities.$inferInsert) => tx.insert(hubIdentities).values(row).returning();
export const listHubIdentities = (tx: Tx) => tx.select().from(hubIdentities).orderBy(asc(hubIdentities.createdAt), asc(hubIdentities.id));

export async function getHubIdentity(tx: Tx, id: string): Promise<HubIdentityRow | undefined> {
  const [row] = await tx.select().from(hubIdentities).where(eq(hubIdentities.id, id));
  return row;
}

/** The identity with this (lowercase) address; platform-wide when called inside crossTenant. */
export async function getByAddress(tx: Tx, hubAddress: string): Promise<HubIdentityRow | undefined> {
  const [row] = await tx.select().from(hubIdentities).where(eq(hubIdentities.hubAddress, hubAddress));
  return row;
}

/** The identity bound to a device (at most one, DESIGN §8.18). */
export async function getByDevice(tx: Tx, deviceId: string): Promise<HubIdentityRow | undefined> {
  const [row] = await tx.select().from(hubIdentities).where(eq(hubIdentities.deviceId, deviceId)).orderBy(asc(hubIdentities.createdAt)).limit(1);
  return row;
}

/**
 * True when `err` (or its drizzle-wrapped `cause`) is a PostgreSQL unique violation (23505) of
 * the named constraint or index.
 */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const x = e as { code?: unknown; constraint?: unknown; message?: unknown };
    if (x.code === '23505' && (x.constraint === constraint || (typeof x.message === 'string' && x.message.includes(constraint)))) return true;
  }
  return false;
}
