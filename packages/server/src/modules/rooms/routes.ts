/** Room routes (contract §4.6; design §8.5). Thin: the rules live in RoomService. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { actingDevice, agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { badRequest, forbidden } from '../../lib/errors.js';
import type { MessageRate } from '../../lib/message-rate.js';
import type { DeviceService } from '../devices/service.js';
import type { RoomService } from './service.js';

export const roomRoutes: FastifyPluginAsync<{ rooms: RoomService; devices: DeviceService; messageRate: MessageRate }> = async (app, { rooms, devices, messageRate }) => {
  serve(app, ROUTES.createRoom, async (req, reply) => {
    const o = ownerOf(req);
    const { workspace_id: workspaceId, ...input } = req.body;
    if (workspaceId !== undefined) throw badRequest('create team rooms with POST /api/v1/team-rooms (it checks that participants belong to the workspace)');
    return reply.status(201).send(await rooms.create(o.tenantId, o.sub, input, actingDevice(req, false)));
  });

  serve(app, ROUTES.listRooms, async (req) => ({ rooms: await rooms.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.getRoom, async (req) => {
    if (req.principal?.kind === 'owner') return rooms.get(ownerOf(req).tenantId, req.params.id);
    const agent = agentDeviceOf(req);
    return rooms.get(agent.tenantId, req.params.id, agent.deviceId);
  });

  serve(app, ROUTES.updateRoom, async (req) => rooms.update(ownerOf(req).tenantId, req.params.id, req.body));

  serve(app, ROUTES.addRoomMember, async (req, reply) => reply.status(201).send(await rooms.addMember(ownerOf(req).tenantId, req.params.id, req.body.device_id)));

  serve(app, ROUTES.removeRoomMember, async (req, reply) => {
    await rooms.removeMember(ownerOf(req).tenantId, req.params.id, req.params.device_id);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.sendRoomMessage, async (req, reply) => {
    const { tenantId, deviceId } = await devices.actingDevice(ownerOf(req), actingDevice(req, true));
    await messageRate.consume(deviceId);
    return reply.status(201).send(await rooms.send(tenantId, { deviceId, kind: 'owner' }, req.params.id, req.body));
  });

  serve(app, ROUTES.roomTimeline, async (req) => {
    const p = req.principal!;
    const { view, ...page } = req.query;
    if (p.kind !== 'owner') {
      if (view === 'owner') throw forbidden('only owners read the owner view; leave out view');
      const agent = agentDeviceOf(req);
      return rooms.timeline(agent.tenantId, req.params.id, { deviceId: agent.deviceId, asMember: true }, page);
    }
    const header = actingDevice(req, false);
    if (view === 'member' && !header) throw badRequest('view=member needs X-Device-Id: the owner device to read as');
    const { tenantId, deviceId } = header ? await devices.actingDevice(p, header) : { tenantId: ownerOf(req).tenantId, deviceId: undefined };
    return rooms.timeline(tenantId, req.params.id, { ...(deviceId ? { deviceId } : {}), asMember: view === 'member' }, page);
  });
};
