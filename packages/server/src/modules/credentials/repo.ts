/** Queries of the issued-credential registry (`issued_credentials`, design §8.16). */
import { eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { issuedCredentials } from '../../db/schema/index.js';

/** A credential the service issued (the revocation registry row). */
export type IssuedCredentialRow = typeof issuedCredentials.$inferSelect;

export const insertIssuedCredential = (tx: Tx, row: typeof issuedCredentials.$inferInsert) => tx.insert(issuedCredentials).values(row);

/** The registry row of credential `id`; `forUpdate` locks it. Tenant-scoped unless run inside crossTenant. */
export async function getIssuedCredential(tx: Tx, id: string, forUpdate = false): Promise<IssuedCredentialRow | undefined> {
  const q = tx.select().from(issuedCredentials).where(eq(issuedCredentials.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

export const setRevoked = (tx: Tx, id: string, at: Date) => tx.update(issuedCredentials).set({ revokedAt: at }).where(eq(issuedCredentials.id, id)).returning();
