/** Attachment metadata queries (tenant-scoped transactions; the bytes live in the blob store). */
import { eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { attachments } from '../../db/schema/index.js';

export type AttachmentRow = typeof attachments.$inferSelect;

/** Insert one attachment row and return it (with its `created_at`). */
export async function insertAttachment(tx: Tx, row: typeof attachments.$inferInsert): Promise<AttachmentRow> {
  const [created] = await tx.insert(attachments).values(row).returning();
  return created!;
}

/** The attachment with this id, if it is visible in the transaction's tenant scope. */
export async function getAttachment(tx: Tx, id: string): Promise<AttachmentRow | undefined> {
  const [row] = await tx.select().from(attachments).where(eq(attachments.id, id));
  return row;
}
