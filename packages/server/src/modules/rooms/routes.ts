/** Room routes (SPEC §4.6; DESIGN §8.5). Thin: the rules live in RoomService. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actingDevice, agentDeviceOf, ownerOf } from '../../http/auth.js';
import { badRequest, forbidden } from '../../lib/errors.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, PageQuery, Timestamp, Uuid } from '../../http/schemas.js';
import type { DeviceService } from '../devices/service.js';
import { RoomSendFields, RoomSendOut } from './frames.js';
import { MAX_MEMBERS, SECURITY_LEVELS, type RoomService } from './service.js';

export const SecurityLevel = Type.Union(SECURITY_LEVELS.map((l) => Type.Literal(l)));
const Kind = Type.Union([Type.Literal('owner'), Type.Literal('agent')]);
const Name = Type.String({ minLength: 1, maxLength: 100 });
const Member = Type.Object({ device_id: Uuid, kind: Kind, identity_public_key: Type.String(), ephemeral_public_key: Type.String(), fingerprint: Type.String() });
const summaryFields = {
  room_id: Uuid,
  conversation_id: Type.String({ format: 'uuid', description: 'the room timeline' }),
  name: Type.String(),
  security_level: SecurityLevel,
  workspace_id: Nullable(Uuid),
  archived: Type.Boolean(),
  created_at: Timestamp,
  mls_capable: Type.Boolean({ description: 'every member published an MLS KeyPackage' }),
  members: Type.Array(Member),
  policies: Type.Array(Uuid, { description: 'ids of the policies scoped to this room' }),
};
const RoomSummary = Type.Object(summaryFields);
export const RoomDetails = Type.Object({
  ...summaryFields,
  conversations: Type.Array(Type.Object({ conversation_id: Uuid, device_ids: Type.Array(Uuid, { minItems: 2, maxItems: 2 }) })),
});
const TimelineEntry = Type.Object({
  room_message_id: Uuid,
  sender_device_id: Uuid,
  message_type: Type.String(),
  priority: Type.String(),
  timestamp: Timestamp,
  cursor: Type.String({ description: 'opaque, total-ordered position (owner view: send order; member view: release order); usable as `since`' }),
  deliveries: Type.Array(Type.Object({ recipient_device_id: Uuid, outcome: Type.String() })),
  envelope: Type.Optional(Type.Object({ header_blob: Type.String(), ciphertext: Type.String() })),
});
const DeviceHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "the owner's acting device" })) });
const TimelineView = Type.Union([Type.Literal('owner'), Type.Literal('member')], {
  description:
    'owner (default for owner tokens): every message by send order; member (devices and API keys always; owners with X-Device-Id): what the device sent or received, by release order (an approved held message appears when released)',
});

const tags = ['rooms'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };
const anyPrincipal = { auth: 'any' as const };
const anySecurity: { [scheme: string]: string[] }[] = [{ ownerJwt: [] }, { deviceJwt: [] }, { apiKey: [] }];

export const roomRoutes: FastifyPluginAsyncTypebox<{ rooms: RoomService; devices: DeviceService }> = async (app, { rooms, devices }) => {
  app.post(
    '/rooms',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Create a room with members and pairwise conversations; the owner device named in X-Device-Id joins it',
        headers: DeviceHeader,
        body: Type.Object({
          name: Name,
          member_device_ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_MEMBERS }),
          security_level: Type.Optional(SecurityLevel),
          workspace_id: Type.Optional(Type.String({ format: 'uuid', description: 'refused (400): team rooms are created with POST /team-rooms, which checks workspace membership' })),
        }),
        response: { 201: RoomDetails, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      const { workspace_id: workspaceId, ...input } = req.body;
      if (workspaceId !== undefined) throw badRequest('create team rooms with POST /api/v1/team-rooms (it checks that participants belong to the workspace)');
      return reply.status(201).send(await rooms.create(o.tenantId, o.sub, input, actingDevice(req, false)));
    },
  );

  app.get(
    '/rooms',
    { config: owner, schema: { tags, security, summary: 'List active rooms', response: { 200: Type.Object({ rooms: Type.Array(RoomSummary) }), ...errorResponses(401, 403) } } },
    async (req) => ({ rooms: await rooms.list(ownerOf(req).tenantId) }),
  );

  app.get(
    '/rooms/:id',
    {
      config: anyPrincipal,
      schema: { tags, security: anySecurity, summary: 'Room details with members (and their public keys) and conversations; a device must be a member', params: IdParams, response: { 200: RoomDetails, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      if (req.principal?.kind === 'owner') return rooms.get(ownerOf(req).tenantId, req.params.id);
      const agent = agentDeviceOf(req);
      return rooms.get(agent.tenantId, req.params.id, agent.deviceId);
    },
  );

  app.patch(
    '/rooms/:id',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Rename, change the security level, scope existing policies to the room',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            security_level: Type.Optional(SecurityLevel),
            policies: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'policy ids to scope to this room' })),
          },
          { minProperties: 1 },
        ),
        response: { 200: RoomDetails, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => rooms.update(ownerOf(req).tenantId, req.params.id, req.body),
  );

  app.post(
    '/rooms/:id/members',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Add a member (pairwise conversations with every member)',
        params: IdParams,
        body: Type.Object({ device_id: Uuid }),
        response: { 201: RoomDetails, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await rooms.addMember(ownerOf(req).tenantId, req.params.id, req.body.device_id)),
  );

  app.delete(
    '/rooms/:id/members/:device_id',
    {
      config: owner,
      schema: { tags, security, summary: 'Remove a member (history stays)', params: Type.Object({ id: Uuid, device_id: Uuid }), response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (req, reply) => {
      await rooms.removeMember(ownerOf(req).tenantId, req.params.id, req.params.device_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/rooms/:id/messages',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Fan out an encrypted message (one envelope per recipient, or "*" for MLS); policies are evaluated per recipient',
        params: IdParams,
        headers: DeviceHeader,
        body: Type.Object(RoomSendFields),
        response: { 201: RoomSendOut, ...errorResponses(400, 401, 403, 404, 409, 413) },
      },
    },
    async (req, reply) => {
      const { tenantId, deviceId } = await devices.actingDevice(ownerOf(req), actingDevice(req, true));
      return reply.status(201).send(await rooms.send(tenantId, deviceId, req.params.id, req.body));
    },
  );

  app.get(
    '/rooms/:id/messages',
    {
      config: anyPrincipal,
      schema: {
        tags,
        security: anySecurity,
        summary: 'Aggregated timeline, oldest first; since = ISO timestamp or next_cursor (of the same view)',
        params: IdParams,
        headers: DeviceHeader,
        querystring: Type.Object({ since: PageQuery.since, limit: PageQuery.limit, view: Type.Optional(TimelineView) }),
        response: { 200: Type.Object({ messages: Type.Array(TimelineEntry), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
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
    },
  );
};
