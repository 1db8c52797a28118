/** Conversation, group and topic queries (tenant-scoped transactions). */
import { asc, eq, inArray, or } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { conversationGroups, conversations, topics } from '../../db/schema/index.js';

export type ConversationRow = typeof conversations.$inferSelect;
export type TopicRow = typeof topics.$inferSelect;

export async function groupOfAgent(tx: Tx, agentDeviceId: string) {
  const [g] = await tx.select().from(conversationGroups).where(eq(conversationGroups.agentDeviceId, agentDeviceId));
  return g;
}

export const insertGroup = (tx: Tx, row: typeof conversationGroups.$inferInsert) => tx.insert(conversationGroups).values(row);
export const insertTopic = (tx: Tx, row: typeof topics.$inferInsert) => tx.insert(topics).values(row).returning();

/** Insert conversations, skipping pairs that already exist. */
export const insertConversations = (tx: Tx, rows: (typeof conversations.$inferInsert)[]) =>
  rows.length === 0 ? Promise.resolve([]) : tx.insert(conversations).values(rows).onConflictDoNothing().returning();

/** ACTIVE, non-deleted devices of a kind, oldest first. */
export const conversationsOfDevice = (tx: Tx, deviceId: string) =>
  tx
    .select()
    .from(conversations)
    .where(or(eq(conversations.agentDeviceId, deviceId), eq(conversations.ownerDeviceId, deviceId)))
    .orderBy(asc(conversations.createdAt));

export const allConversations = (tx: Tx) => tx.select().from(conversations).orderBy(asc(conversations.createdAt));

export async function getConversation(tx: Tx, id: string): Promise<ConversationRow | undefined> {
  const [row] = await tx.select().from(conversations).where(eq(conversations.id, id));
  return row;
}

export const topicsOfGroups = (tx: Tx, groupIds: string[]) =>
  groupIds.length === 0
    ? Promise.resolve([] as TopicRow[])
    : tx.select().from(topics).where(inArray(topics.groupId, groupIds)).orderBy(asc(topics.createdAt));

export const allTopics = (tx: Tx) => tx.select().from(topics).orderBy(asc(topics.createdAt));

export async function getTopic(tx: Tx, id: string, forUpdate = false): Promise<TopicRow | undefined> {
  const q = tx.select().from(topics).where(eq(topics.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

export async function getGroup(tx: Tx, id: string) {
  const [g] = await tx.select().from(conversationGroups).where(eq(conversationGroups.id, id));
  return g;
}

export const updateTopic = (tx: Tx, id: string, set: Partial<typeof topics.$inferInsert>) =>
  tx.update(topics).set(set).where(eq(topics.id, id)).returning();
