/**
 * A2A channel routes (contract §4.13, §3.5; design §8.5; docs/decisions.md "A2A channels"). Thin:
 * each calls the operation it serves (channels.ts, messages.ts) with the area's {@link A2aCore}. Channel objects use contract §2.11's camelCase field names.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { agentDeviceOf, ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { forbidden } from '../../lib/errors.js';
import type { MessageRate } from '../../lib/message-rate.js';
import { auditActor } from '../audit/index.js';
import * as channels from './channels.js';
import type { A2aActor, A2aCore } from './internal.js';
import * as messages from './messages.js';

/**
 * The caller of a channel route open to owners and agents: the owner's tenant, or the agent
 * device acting as itself — an API key's bound device (403 before it registered key material) or
 * an agent device's own JWT (docs/decisions.md "A2A channels": enrolled agents request like API
 * keys do). An owner device's JWT is 403: owners act through the owner JWT.
 */
function actorOf(req: FastifyRequest): A2aActor {
  if (req.principal?.kind === 'owner') {
    const o = ownerOf(req);
    return { kind: 'owner', tenantId: o.tenantId, actor: o.sub };
  }
  const { tenantId, deviceId, kind } = agentDeviceOf(req);
  if (kind !== 'agent') throw forbidden('an owner device acts on channels through the owner token; agents use their device token or API key');
  return { kind: 'agent', tenantId, deviceId, actor: auditActor(req.principal!) };
}

export const a2aRoutes: FastifyPluginAsync<{ a2a: A2aCore; messageRate: MessageRate }> = async (app, { a2a, messageRate }) => {
  serve(app, ROUTES.requestA2aChannel, async (req, reply) => reply.status(201).send(await channels.request(a2a, actorOf(req), req.body)));

  serve(app, ROUTES.listA2aChannels, async (req) => ({ channels: unregisteredKeyOnOpenRoute(req) ? [] : await channels.list(a2a, actorOf(req), req.query.status) }), {
    config: { allowUnregisteredKey: true },
  });

  serve(app, ROUTES.approveA2aChannel, async (req) => {
    const o = ownerOf(req);
    return channels.approve(a2a, o.tenantId, req.params.id, o.sub);
  });

  serve(app, ROUTES.rejectA2aChannel, async (req) => {
    const o = ownerOf(req);
    return channels.reject(a2a, o.tenantId, req.params.id, o.sub);
  });

  serve(app, ROUTES.revokeA2aChannel, async (req) => channels.revoke(a2a, actorOf(req), req.params.id));

  serve(app, ROUTES.sendA2aMessage, async (req, reply) => {
    const sender = agentDeviceOf(req);
    await messageRate.consume(sender.deviceId);
    return reply.status(201).send(await messages.send(a2a, sender, req.params.id, req.body));
  });

  serve(app, ROUTES.a2aChannelPeer, async (req) => channels.peerKeys(a2a, agentDeviceOf(req), req.params.id));

  serve(app, ROUTES.a2aHistory, async (req) => messages.history(a2a, agentDeviceOf(req), req.params.id, req.query));
};
