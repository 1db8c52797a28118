/**
 * Connection queries not already offered by the devices, A2A and federation repos. Tenant-scoped
 * transactions (the two-party tables are visible to both of their tenants under RLS), except
 * {@link tenantNames}, which runs inside `crossTenant`.
 */
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { devices, federationAgreements, tenants } from '../../db/schema/index.js';
import type { AgreementRow } from '../federation/index.js';

/** Agent devices of the tenant that are not deleted, oldest first. */
export const listAgentDevices = (tx: Tx) =>
  tx
    .select()
    .from(devices)
    .where(and(eq(devices.kind, 'agent'), isNull(devices.deletedAt)))
    .orderBy(asc(devices.enrolledAt), asc(devices.id));

/** Owner devices registered by one user, not deleted, oldest first. */
export const listOwnerDevicesOf = (tx: Tx, sub: string) =>
  tx
    .select()
    .from(devices)
    .where(and(eq(devices.kind, 'owner'), eq(devices.ownerSub, sub), isNull(devices.deletedAt)))
    .orderBy(asc(devices.enrolledAt), asc(devices.id));

/** One federation agreement the tenant is a party to (proposer or partner), without a lock. */
export async function getAgreement(tx: Tx, id: string): Promise<AgreementRow | undefined> {
  const [row] = await tx.select().from(federationAgreements).where(eq(federationAgreements.id, id));
  return row;
}

/** Names of the given tenants (call inside `crossTenant`, only with ids of federation partners). */
export async function tenantNames(tx: Tx, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.select({ id: tenants.id, name: tenants.name }).from(tenants).where(inArray(tenants.id, ids));
  return new Map(rows.map((r) => [r.id, r.name]));
}
