/**
 * Conversation provisioning (design §7 "Conversation groups and topics"): a conversation joins
 * exactly two devices, an agent device and one ACTIVE owner device. Activation gives an agent its
 * conversation group (`message_group_id`) with a default topic and one conversation per ACTIVE
 * owner device; registering or relinking an owner device adds the conversations it lacks.
 * Every function runs inside the caller's tenant-scoped transaction and is idempotent.
 */
import { randomUUID } from 'node:crypto';
import type { Tx } from '../../db/client.js';
import { activeDevices } from '../devices/index.js';
import * as repo from './repo.js';

export const DEFAULT_TOPIC_NAME = 'General';

export interface ProvisionedGroup {
  groupId: string;
  defaultTopicId: string;
  /** All conversations of the agent, oldest owner device first. */
  conversations: repo.ConversationRow[];
}

/** Ensure an agent device's group, default topic and a conversation with each ACTIVE owner device. */
export async function provisionAgent(tx: Tx, tenantId: string, agentDeviceId: string): Promise<ProvisionedGroup> {
  let group = await repo.groupOfAgent(tx, agentDeviceId);
  let defaultTopicId: string;
  if (!group) {
    const groupId = randomUUID();
    await repo.insertGroup(tx, { id: groupId, tenantId, agentDeviceId });
    group = { id: groupId, tenantId, agentDeviceId, createdAt: new Date() };
    defaultTopicId = randomUUID();
    await repo.insertTopic(tx, { id: defaultTopicId, tenantId, groupId, name: DEFAULT_TOPIC_NAME, isDefault: true });
  } else {
    const topics = await repo.topicsOfGroups(tx, [group.id]);
    defaultTopicId = topics.find((t) => t.isDefault)!.id;
  }
  const owners = await activeDevices(tx, 'owner');
  await repo.insertConversations(
    tx,
    owners.map((o) => ({ id: randomUUID(), tenantId, groupId: group.id, agentDeviceId, ownerDeviceId: o.id })),
  );
  const all = await repo.conversationsOfDevice(tx, agentDeviceId);
  const order = new Map(owners.map((o, i) => [o.id, i]));
  all.sort((a, b) => (order.get(a.ownerDeviceId) ?? Infinity) - (order.get(b.ownerDeviceId) ?? Infinity));
  return { groupId: group.id, defaultTopicId, conversations: all };
}

/**
 * Ensure an owner device has a conversation with every ACTIVE agent device. Returns all of its
 * conversations and the ones created now.
 */
export async function provisionOwnerDevice(tx: Tx, tenantId: string, ownerDeviceId: string): Promise<{ all: repo.ConversationRow[]; created: repo.ConversationRow[] }> {
  const agents = await activeDevices(tx, 'agent');
  const rows = [];
  for (const agent of agents) {
    const group = await repo.groupOfAgent(tx, agent.id);
    if (!group) continue;
    rows.push({ id: randomUUID(), tenantId, groupId: group.id, agentDeviceId: agent.id, ownerDeviceId });
  }
  const created = await repo.insertConversations(tx, rows);
  return { all: await repo.conversationsOfDevice(tx, ownerDeviceId), created };
}
