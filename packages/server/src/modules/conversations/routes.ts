/** Conversation, message and topic routes (SPEC §4.5). Thin: rules live in the services. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actingDevice, ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, MessageFields, MessageList, MessageOut, PageQuery, Timestamp, Uuid } from '../../http/schemas.js';
import type { MessageService } from './messages.js';
import type { DeviceService } from '../devices/service.js';
import type { ConversationService } from './service.js';

const Topic = Type.Object({ topic_id: Uuid, group_id: Uuid, name: Type.String(), is_default: Type.Boolean(), archived: Type.Boolean(), created_at: Timestamp });
const Conversation = Type.Object({
  conversation_id: Uuid,
  message_group_id: Uuid,
  agent_device_id: Uuid,
  owner_device_id: Uuid,
  created_at: Timestamp,
  topics: Type.Array(Topic),
});
const TopicName = Type.String({ minLength: 1, maxLength: 100 });
const DeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "the owner's acting device" })) });

const tags = ['conversations'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const conversationRoutes: FastifyPluginAsyncTypebox<{ conversations: ConversationService; messages: MessageService; devices: DeviceService }> = async (
  app,
  { conversations, messages, devices },
) => {
  app.get(
    '/conversations',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'List conversations with topic metadata',
        querystring: Type.Object({ device_id: Type.Optional(Uuid) }),
        response: { 200: Type.Object({ conversations: Type.Array(Conversation) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => ({ conversations: await conversations.list(ownerOf(req).tenantId, req.query.device_id) }),
  );

  app.post(
    '/conversations/:id/messages',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Store an encrypted message sent by the owner device named in X-Device-Id',
        params: IdParams,
        headers: DeviceHeader,
        body: Type.Object(MessageFields),
        response: { 201: MessageOut, ...errorResponses(400, 401, 403, 404, 413) },
      },
    },
    async (req, reply) => {
      const { tenantId, deviceId } = await devices.actingDevice(ownerOf(req), actingDevice(req, true));
      return reply.status(201).send(await messages.send(tenantId, deviceId, { ...req.body, conversation_id: req.params.id }));
    },
  );

  app.get(
    '/conversations/:id/messages',
    {
      config: owner,
      schema: { tags, security, summary: 'History, oldest first; since = ISO timestamp or next_cursor', params: IdParams, querystring: Type.Object(PageQuery), response: { 200: MessageList, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => messages.historyForConversation(ownerOf(req).tenantId, req.params.id, req.query),
  );

  app.get(
    '/conversations/:id/keys',
    {
      config: { auth: 'owner-or-device' as const },
      schema: {
        tags,
        security: [{ ownerJwt: [] }, { deviceJwt: [] }],
        summary: 'Counterparty public keys for key agreement',
        params: IdParams,
        headers: DeviceHeader,
        response: {
          200: Type.Object({
            conversation_id: Uuid,
            device_id: Uuid,
            identity_public_key: Type.String(),
            ephemeral_public_key: Type.String(),
            fingerprint: Type.String(),
            kind: Type.String(),
            status: Type.String(),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => conversations.keys(req.principal!, req.params.id, req.principal!.kind === 'owner' ? actingDevice(req, false) : undefined),
  );

  app.get(
    '/topics',
    {
      config: owner,
      schema: { tags: ['topics'], security, summary: "List topics (a group's, or all)", querystring: Type.Object({ group_id: Type.Optional(Uuid) }), response: { 200: Type.Object({ topics: Type.Array(Topic) }), ...errorResponses(400, 401, 403) } },
    },
    async (req) => ({ topics: await conversations.listTopics(ownerOf(req).tenantId, req.query.group_id) }),
  );

  app.post(
    '/topics',
    {
      config: owner,
      schema: { tags: ['topics'], security, summary: 'Create a topic in a conversation group', body: Type.Object({ group_id: Uuid, name: TopicName }), response: { 201: Topic, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req, reply) => reply.status(201).send(await conversations.createTopic(ownerOf(req).tenantId, req.body.group_id, req.body.name)),
  );

  app.patch(
    '/topics/:id',
    {
      config: owner,
      schema: { tags: ['topics'], security, summary: 'Rename a topic', params: IdParams, body: Type.Object({ name: TopicName }), response: { 200: Topic, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => conversations.renameTopic(ownerOf(req).tenantId, req.params.id, req.body.name),
  );

  app.post(
    '/topics/:id/archive',
    {
      config: owner,
      schema: { tags: ['topics'], security, summary: 'Archive a topic (409 for the default topic)', params: IdParams, response: { 200: Topic, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req) => conversations.archiveTopic(ownerOf(req).tenantId, req.params.id),
  );
};
