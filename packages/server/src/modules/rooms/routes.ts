/** Room routes (contract §4.6; design §8.5). Thin: each calls the room operation it serves with the area's {@link RoomContext}. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { agentDeviceOf, deviceIdHeader, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { badRequest, forbidden } from '../../lib/errors.js';
import type { MessageRate } from '../../lib/message-rate.js';
import { actingDevice } from '../devices/index.js';
import type { RoomContext } from './internal.js';
import { addMember, createRoom, getRoom, listRooms, removeMember, updateRoom } from './management.js';
import { sendRoomMessage } from './send.js';
import { roomTimeline } from './timeline.js';

export const roomRoutes: FastifyPluginAsync<{ rooms: RoomContext; messageRate: MessageRate }> = async (app, { rooms, messageRate }) => {
  serve(app, ROUTES.createRoom, async (req, reply) => {
    const o = ownerOf(req);
    const { workspace_id: workspaceId, ...input } = req.body;
    if (workspaceId !== undefined) throw badRequest('create team rooms with POST /api/v1/team-rooms (it checks that participants belong to the workspace)');
    return reply.status(201).send(await createRoom(rooms, o.tenantId, o.sub, input, deviceIdHeader(req, false)));
  });

  serve(app, ROUTES.listRooms, async (req) => ({ rooms: await listRooms(rooms, ownerOf(req).tenantId) }));

  serve(app, ROUTES.getRoom, async (req) => {
    if (req.principal?.kind === 'owner') return getRoom(rooms, ownerOf(req).tenantId, req.params.id);
    const agent = agentDeviceOf(req);
    return getRoom(rooms, agent.tenantId, req.params.id, agent.deviceId);
  });

  serve(app, ROUTES.updateRoom, async (req) => updateRoom(rooms, ownerOf(req).tenantId, req.params.id, req.body));

  serve(app, ROUTES.addRoomMember, async (req, reply) => reply.status(201).send(await addMember(rooms, ownerOf(req).tenantId, req.params.id, req.body.device_id)));

  serve(app, ROUTES.removeRoomMember, async (req, reply) => {
    await removeMember(rooms, ownerOf(req).tenantId, req.params.id, req.params.device_id);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.sendRoomMessage, async (req, reply) => {
    const { tenantId, deviceId } = await actingDevice(rooms.deps, ownerOf(req), deviceIdHeader(req, true));
    await messageRate.consume(deviceId);
    return reply.status(201).send(await sendRoomMessage(rooms, tenantId, { deviceId, kind: 'owner' }, req.params.id, req.body));
  });

  serve(app, ROUTES.roomTimeline, async (req) => {
    const p = req.principal!;
    const { view, ...page } = req.query;
    if (p.kind !== 'owner') {
      if (view === 'owner') throw forbidden('only owners read the owner view; leave out view');
      const agent = agentDeviceOf(req);
      return roomTimeline(rooms, agent.tenantId, req.params.id, { deviceId: agent.deviceId, asMember: true }, page);
    }
    const header = deviceIdHeader(req, false);
    if (view === 'member' && !header) throw badRequest('view=member needs X-Device-Id: the owner device to read as');
    const { tenantId, deviceId } = header ? await actingDevice(rooms.deps, p, header) : { tenantId: ownerOf(req).tenantId, deviceId: undefined };
    return roomTimeline(rooms, tenantId, req.params.id, { ...(deviceId ? { deviceId } : {}), asMember: view === 'member' }, page);
  });
};
