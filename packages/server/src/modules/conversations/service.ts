/**
 * Conversations and topics (contract §4.5; design §7): listing with topic metadata, counterparty
 * keys, topic create / rename / archive (the default topic cannot be archived: 409).
 * New topics are announced with `topic_created` to every device of the group.
 */
import { randomUUID } from 'node:crypto';
import type { Conversation, ConversationKeys, Topic } from '@parley/protocol';
import type { Principal } from '../../auth/authenticator.js';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import { getDevice, keysOf, requireOwnerDeviceOf } from '../devices/index.js';
import * as repo from './repo.js';

const topicOut = (t: repo.TopicRow): Topic => ({
  topic_id: t.id,
  group_id: t.groupId,
  name: t.name,
  is_default: t.isDefault,
  archived: t.archived,
  created_at: t.createdAt.toISOString(),
});

export class ConversationService {
  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
  ) {}

  /** Every conversation of the tenant (optionally of one device) with its group's topics. */
  list(tenantId: string, deviceId?: string): Promise<Conversation[]> {
    return withTenant(this.db, tenantId, async (tx) => {
      const convs = deviceId ? await repo.conversationsOfDevice(tx, deviceId) : await repo.allConversations(tx);
      const topics = await repo.topicsOfGroups(tx, [...new Set(convs.map((c) => c.groupId))]);
      return convs.map((c) => ({
        conversation_id: c.id,
        message_group_id: c.groupId,
        agent_device_id: c.agentDeviceId,
        owner_device_id: c.ownerDeviceId,
        created_at: c.createdAt.toISOString(),
        topics: topics.filter((t) => t.groupId === c.groupId).map(topicOut),
      }));
    });
  }

  /**
   * Counterparty public keys (contract §4.5). Owners: the side other than their acting device
   * (`X-Device-Id`), or the agent side when no device is named. Devices (device JWT): the other
   * side of a conversation they are part of (403 otherwise), so an agent can key a conversation
   * with an owner device registered after its activation.
   */
  keys(principal: Principal, conversationId: string, actingDeviceId?: string): Promise<ConversationKeys> {
    const tenantId = principal.tenantId;
    if (!tenantId) throw forbidden('the user belongs to no tenant');
    return withTenant(this.db, tenantId, async (tx) => {
      const c = await repo.getConversation(tx, conversationId);
      if (!c) throw notFound('conversation');
      let peerId = c.agentDeviceId;
      const self = principal.kind === 'device' ? principal.deviceId : actingDeviceId;
      if (principal.kind === 'device' && self !== c.agentDeviceId && self !== c.ownerDeviceId) {
        throw forbidden('the device is not part of this conversation');
      }
      if (principal.kind === 'owner' && actingDeviceId) await requireOwnerDeviceOf(tx, principal.sub, actingDeviceId);
      if (self) peerId = self === c.agentDeviceId ? c.ownerDeviceId : c.agentDeviceId;
      const peer = await getDevice(tx, peerId);
      if (!peer) throw notFound('counterparty device');
      return { conversation_id: c.id, ...keysOf(peer), kind: peer.kind, status: peer.status };
    });
  }

  listTopics(tenantId: string, groupId?: string): Promise<Topic[]> {
    return withTenant(this.db, tenantId, async (tx) =>
      (groupId ? await repo.topicsOfGroups(tx, [groupId]) : await repo.allTopics(tx)).map(topicOut),
    );
  }

  /** Create a topic in a conversation group; its devices receive `topic_created`. */
  async createTopic(tenantId: string, groupId: string, name: string): Promise<Topic> {
    const { topic, deviceIds } = await withTenant(this.db, tenantId, async (tx) => {
      const group = await repo.getGroup(tx, groupId);
      if (!group) throw notFound('conversation group');
      const [row] = await repo.insertTopic(tx, { id: randomUUID(), tenantId, groupId, name });
      const convs = await repo.conversationsOfDevice(tx, group.agentDeviceId);
      return { topic: row!, deviceIds: [group.agentDeviceId, ...convs.map((c) => c.ownerDeviceId)] };
    });
    const out = topicOut(topic);
    await this.notifier.toDevices(tenantId, deviceIds, 'topic_created', out);
    return out;
  }

  renameTopic(tenantId: string, id: string, name: string): Promise<Topic> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await repo.getTopic(tx, id, true))) throw notFound('topic');
      const [row] = await repo.updateTopic(tx, id, { name });
      return topicOut(row!);
    });
  }

  /** Archive a topic; 409 for the group's default topic. */
  archiveTopic(tenantId: string, id: string): Promise<Topic> {
    return withTenant(this.db, tenantId, async (tx) => {
      const t = await repo.getTopic(tx, id, true);
      if (!t) throw notFound('topic');
      if (t.isDefault) throw conflict('the default topic cannot be archived');
      const [row] = await repo.updateTopic(tx, id, { archived: true });
      return topicOut(row!);
    });
  }
}

