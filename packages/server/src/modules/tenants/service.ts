/**
 * Tenant provisioning (contract §4.2, design §7): the creator becomes `OWNER_ADMIN`. The tenant row
 * and the membership are written in one transaction under the new tenant's own RLS scope.
 */
import { randomUUID } from 'node:crypto';
import type { Tenant } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { memberships, tenants } from '../../db/schema/index.js';
import { withTenant } from '../../db/tenant.js';

export const OWNER_ADMIN = 'OWNER_ADMIN';

export async function createTenant(db: Db, ownerSub: string, name: string): Promise<Tenant> {
  const id = randomUUID();
  await withTenant(db, id, async (tx) => {
    await tx.insert(tenants).values({ id, name });
    await tx.insert(memberships).values({ tenantId: id, userSub: ownerSub, role: OWNER_ADMIN });
  });
  return { tenant_id: id, name, role: OWNER_ADMIN };
}
