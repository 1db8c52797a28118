/** Conversation, message and topic routes (contract §4.5). Thin: rules live in the services. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../db/client.js';
import { agentDeviceOf, deviceIdHeader, ownDeviceOnly, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { MessageRate } from '../../lib/message-rate.js';
import type { MessageService } from './messages.js';
import { actingDevice } from '../devices/index.js';
import type { ConversationService } from './service.js';

export const conversationRoutes: FastifyPluginAsync<{ conversations: ConversationService; messages: MessageService; db: Db; messageRate: MessageRate }> = async (
  app,
  { conversations, messages, db, messageRate },
) => {
  serve(app, ROUTES.listConversations, async (req) => ({ conversations: await conversations.list(ownerOf(req).tenantId, req.query.device_id) }));

  serve(app, ROUTES.sendMessage, async (req, reply) => {
    const { tenantId, deviceId } = await actingDevice({ db }, ownerOf(req), deviceIdHeader(req, true));
    await messageRate.consume(deviceId);
    return reply.status(201).send(await messages.send(tenantId, deviceId, { ...req.body, conversation_id: req.params.id }));
  });

  serve(app, ROUTES.conversationMessages, async (req) => {
    // With X-Device-Id the owner reads as that device: what the page hands over to it is delivered.
    const header = deviceIdHeader(req, false);
    const reader = header ? await actingDevice({ db }, ownerOf(req), header) : undefined;
    return messages.historyForConversation(ownerOf(req).tenantId, req.params.id, req.query, reader?.deviceId);
  });

  serve(app, ROUTES.conversationKeys, async (req) =>
    conversations.keys(req.principal!, req.params.id, req.principal!.kind === 'owner' ? deviceIdHeader(req, false) : undefined),
  );

  serve(app, ROUTES.listTopics, async (req) => ({ topics: await conversations.listTopics(ownerOf(req).tenantId, req.query.group_id) }));

  serve(app, ROUTES.createTopic, async (req, reply) => reply.status(201).send(await conversations.createTopic(ownerOf(req).tenantId, req.body.group_id, req.body.name)));

  serve(app, ROUTES.renameTopic, async (req) => conversations.renameTopic(ownerOf(req).tenantId, req.params.id, req.body.name));

  serve(app, ROUTES.archiveTopic, async (req) => conversations.archiveTopic(ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.deviceMessages, async (req) => {
    // A device JWT, or an API key acting as its registered device (catch-up after a restart).
    const d = agentDeviceOf(req);
    ownDeviceOnly(d.deviceId, req.params.id);
    return messages.historyForDevice(d.tenantId, d.deviceId, req.query);
  });
};
