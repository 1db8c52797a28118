/**
 * Workspaces, team rooms and connections (contract §2.5, §4.10, §4.13): schemas and route rows.
 * `GET /workspaces` and `GET /team-rooms` accept an owner JWT, an API key (with an optional
 * `X-Workspace-Id`, validated by the authenticator) or an agent device's own JWT (the agent's
 * view, as its API key without the header; design §8.27); the rest is owner-only.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';
import { Device } from './devices.js';
import { MAX_MEMBERS, Room, RoomSecurityLevel } from './rooms.js';

// ---------------------------------------------------------------- workspaces (contract §2.5, §4.13)

/** Roles of a device in a workspace (contract §2.5). */
export const WORKSPACE_ROLES = ['admin', 'member'] as const;
export const WorkspaceRole = lit(WORKSPACE_ROLES);
/** A member's role in a workspace (contract §2.5). */
export type WorkspaceRole = Static<typeof WorkspaceRole>;

/** A workspace member: an ACTIVE agent device of the tenant, with its name, status and role. */
export const WorkspaceMember = Type.Object({ device_id: Uuid, name: Type.String(), status: Type.String(), role: WorkspaceRole, added_at: Timestamp });
export type WorkspaceMember = Static<typeof WorkspaceMember>;

/** A workspace with its members, as answered to owners (`role` is always `owner`; `POST /workspaces`, `GET /workspaces/{id}`, `POST …/members`). */
export const Workspace = Type.Object({ id: Uuid, name: Type.String(), role: Type.Literal('owner'), members: Type.Array(WorkspaceMember), created_at: Timestamp });
export type Workspace = Static<typeof Workspace>;

/** One row of `GET /api/v1/workspaces` (contract §2.5 summary `{id, name, role}`): owners get `role: "owner"` and `member_count`, agents their own role. */
export const WorkspaceSummary = Type.Object({
  id: Uuid,
  name: Type.String(),
  role: Type.Union([Type.Literal('owner'), WorkspaceRole]),
  member_count: Type.Optional(Type.Integer({ description: 'owners only' })),
});
export type WorkspaceSummary = Static<typeof WorkspaceSummary>;

/** `GET /api/v1/workspaces`. */
export const WorkspaceList = Type.Object({ workspaces: Type.Array(WorkspaceSummary) });
export type WorkspaceList = Static<typeof WorkspaceList>;

/** A member to add: an ACTIVE agent device of the tenant; `role` defaults to `member` (`POST /workspaces/{id}/members` body). */
export const AddWorkspaceMemberRequest = Type.Object({ device_id: Uuid, role: Type.Optional(WorkspaceRole) });
export type AddWorkspaceMemberRequest = Static<typeof AddWorkspaceMemberRequest>;

/** `POST /api/v1/workspaces` body (contract §4.13): name 1-100 characters (not blank); members ACTIVE agent devices (default role `member`). */
export const CreateWorkspaceRequest = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  members: Type.Optional(Type.Array(AddWorkspaceMemberRequest, { maxItems: 500 })),
});
export type CreateWorkspaceRequest = Static<typeof CreateWorkspaceRequest>;

/** `DELETE /api/v1/workspaces/{id}/members/{device_id}` path. */
const WorkspaceMemberParams = Type.Object({ id: Uuid, device_id: Uuid });

// ---------------------------------------------------------------- team rooms (contract §2.5, §4.13)

/** A team room (contract §2.5, §4.13): a room in a workspace; `id` equals `room_id`. */
export const TeamRoom = Type.Object({ id: Uuid, ...Room.properties });
export type TeamRoom = Static<typeof TeamRoom>;

/** `POST /api/v1/team-rooms` body (contract §4.13): participants are workspace members or owner devices. */
export const CreateTeamRoomRequest = Type.Object({
  workspace_id: Uuid,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  member_device_ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_MEMBERS }),
  security_level: Type.Optional(RoomSecurityLevel),
});
export type CreateTeamRoomRequest = Static<typeof CreateTeamRoomRequest>;

/** One row of `GET /api/v1/team-rooms` (contract §2.5 summary, plus the workspace it belongs to). */
export const TeamRoomSummary = Type.Object({ id: Uuid, name: Type.String(), participant_count: Type.Integer(), workspace_id: Uuid });
export type TeamRoomSummary = Static<typeof TeamRoomSummary>;

/** `GET /api/v1/team-rooms`. */
export const TeamRoomList = Type.Object({ team_rooms: Type.Array(TeamRoomSummary) });
export type TeamRoomList = Static<typeof TeamRoomList>;

/** `GET /api/v1/team-rooms` query: one workspace's team rooms. */
export const TeamRoomListQuery = Type.Object({ workspace_id: Type.Optional(Uuid) });
export type TeamRoomListQuery = Static<typeof TeamRoomListQuery>;

// ---------------------------------------------------------------- connections (contract §4.10)

/** The kinds of connection of a tenant (contract §4.10). */
export const CONNECTION_TYPES = ['device', 'a2a_channel', 'federation'] as const;
export const ConnectionType = lit(CONNECTION_TYPES);
/** The kinds of connection of a tenant (contract §4.10). */
export type ConnectionType = Static<typeof ConnectionType>;

/** The fields of a listed connection, shared with its detailed form. */
export const ConnectionFields = {
  connection_id: Uuid,
  type: ConnectionType,
  status: Type.String({ description: 'devices: PENDING | APPROVED | ACTIVE | REVOKED; A2A channels: contract §2.11; agreements: pending | active | revoked | expired' }),
  label: Type.String(),
  peer: Type.Optional(Type.String({ description: "A2A: the other side's hub address; federation: the other tenant's id" })),
  created_at: Timestamp,
  last_seen: Type.Optional(Nullable(Timestamp)),
};

/**
 * One connection (contract §4.10): `status` is the device status, the A2A channel status (contract §2.11)
 * or the agreement status; `peer` the other side's hub address (A2A) or tenant id (federation);
 * `last_seen` for devices only.
 */
export const Connection = Type.Object(ConnectionFields);
export type Connection = Static<typeof Connection>;

/** `GET /api/v1/connections`. */
export const ConnectionList = Type.Object({ connections: Type.Array(Connection) });
export type ConnectionList = Static<typeof ConnectionList>;

/** `GET /api/v1/connections` query: one type of connection. */
export const ConnectionListQuery = Type.Object({ type: Type.Optional(ConnectionType) });
export type ConnectionListQuery = Static<typeof ConnectionListQuery>;

/** A2A channel details of a connection, as seen by one of its tenants; the other tenant's device ids are withheld (null). */
export const ConnectionA2aChannel = Type.Object({
  channel_id: Uuid,
  direction: lit(['outbound', 'inbound', 'internal'] as const),
  initiator_hub_address: Type.String(),
  responder_hub_address: Type.String(),
  initiator_device_id: Nullable(Uuid),
  responder_device_id: Nullable(Uuid),
  conversation_id: Nullable(Uuid),
  capability: Nullable(Type.String()),
  agreement_id: Nullable(Uuid),
  approved_at: Nullable(Timestamp),
  activated_at: Nullable(Timestamp),
  closed_at: Nullable(Timestamp),
  closed_reason: Nullable(Type.String()),
});
export type ConnectionA2aChannel = Static<typeof ConnectionA2aChannel>;

/** Federation agreement details of a connection (contract §2.12); `direction` is `proposed` by this tenant or `received`. */
export const ConnectionFederation = Type.Object({
  agreement_id: Uuid,
  direction: lit(['proposed', 'received'] as const),
  proposer_tenant_id: Uuid,
  partner_tenant_id: Uuid,
  peer_tenant_name: Nullable(Type.String()),
  trust_floor: Type.Number(),
  allowed_capabilities: Type.Array(Type.String()),
  audit_sharing: Type.Boolean(),
  expires_at: Timestamp,
  accepted_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
export type ConnectionFederation = Static<typeof ConnectionFederation>;

/** `connection_id` path parameter. */
export const ConnectionIdParams = Type.Object({ connection_id: Uuid });

/** `GET /api/v1/connections/{connection_id}`: a connection with the details of its type (the device, the channel or the agreement). */
export const ConnectionDetail = Type.Object({
  ...ConnectionFields,
  device: Type.Optional(Device),
  a2a_channel: Type.Optional(ConnectionA2aChannel),
  federation: Type.Optional(ConnectionFederation),
});
export type ConnectionDetail = Static<typeof ConnectionDetail>;

/** One row of `GET /api/v1/owner-connections` (contract §4.10): an owner device of the caller with its presence. */
export const OwnerConnection = Type.Intersect([Device, Type.Object({ online: Type.Boolean() })]);
export type OwnerConnection = Static<typeof OwnerConnection>;

/** `GET /api/v1/owner-connections`. */
export const OwnerConnectionList = Type.Object({ owner_connections: Type.Array(OwnerConnection) });
export type OwnerConnectionList = Static<typeof OwnerConnectionList>;

// ---------------------------------------------------------------- routes

/** The optional `X-Workspace-Id` header of an owner-or-API-key listing; `description` says what it narrows. */
const workspaceHeader = (description: string) => Type.Object({ 'x-workspace-id': Type.Optional(Type.String({ description })) });

export const workspacesRoutes = {
  createWorkspace: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces',
    auth: 'owner',
    tags: ['workspaces'],
    summary: 'Create a workspace; members must be ACTIVE agent devices of the tenant',
    description:
      'Creates a workspace (a named group of agents that work together) with optional initial members, each an ACTIVE agent device of the tenant with a role, in one transaction. Answers 201 with the workspace and its members. 400 when a member is not an ACTIVE agent device of the tenant or is named twice.',
    body: CreateWorkspaceRequest,
    responses: { 201: Workspace },
    errors: [400, 401, 403],
  }),
  listWorkspaces: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces',
    auth: 'any',
    tags: ['workspaces'],
    summary: "List workspaces: every tenant workspace for the owner, the agent's own for an API key or an agent device JWT",
    description:
      'Workspaces as the caller sees them: every workspace of the tenant with its member count for an owner; for an agent (device JWT or API key) the workspaces it belongs to with its role there, narrowed to the one an API key\'s `X-Workspace-Id` names. An API key that has not registered key material yet gets an empty list. 403 also for an owner device\'s JWT (owners list with the owner JWT).',
    headers: workspaceHeader('API-key callers: list only this workspace (the key must be a member)'),
    responses: { 200: WorkspaceList },
    errors: [400, 401, 403],
  }),
  getWorkspace: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{id}',
    auth: 'owner',
    tags: ['workspaces'],
    summary: 'Workspace details with members',
    description: 'One workspace with its members (device, role, time added). 404 when the workspace is unknown in the tenant.',
    params: IdParams,
    responses: { 200: Workspace },
    errors: [400, 401, 403, 404],
  }),
  addWorkspaceMember: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{id}/members',
    auth: 'owner',
    tags: ['workspaces'],
    summary: 'Add a member (an ACTIVE agent device) or set its role; idempotent',
    description:
      'Adds an ACTIVE agent device of the tenant to a workspace with a role, or changes the role of a member; idempotent. Answers the workspace. 400 when the device is not an ACTIVE agent device of the tenant. 404 when the workspace is unknown in the tenant.',
    params: IdParams,
    body: AddWorkspaceMemberRequest,
    responses: { 200: Workspace },
    errors: [400, 401, 403, 404],
  }),
  removeWorkspaceMember: defineRoute({
    method: 'DELETE',
    path: '/api/v1/workspaces/{id}/members/{device_id}',
    auth: 'owner',
    tags: ['workspaces'],
    summary: 'Remove a member',
    description:
      'Removes a device from a workspace; the team rooms it joined keep it until an owner removes it there. Answers 204. 404 when the workspace is unknown in the tenant or the device is not a member.',
    params: WorkspaceMemberParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404],
  }),
  createTeamRoom: defineRoute({
    method: 'POST',
    path: '/api/v1/team-rooms',
    auth: 'owner',
    tags: ['team-rooms'],
    summary: 'Create a team room in a workspace; participants are workspace members or owner devices',
    description:
      'Creates a room within a workspace: participants must be members of the workspace or owner devices of the tenant; otherwise it is created as `POST /rooms` creates a room (pairwise conversations, `room_joined` and `member_joined` events). Answers 201 with the room, `id` equal to `room_id`. 400 when a participant is neither a workspace member nor an owner device, is not ACTIVE, or there are more than 100. 404 when the workspace is unknown in the tenant.',
    body: CreateTeamRoomRequest,
    responses: { 201: TeamRoom },
    errors: [400, 401, 403, 404],
  }),
  listTeamRooms: defineRoute({
    method: 'GET',
    path: '/api/v1/team-rooms',
    auth: 'any',
    tags: ['team-rooms'],
    summary: "List team rooms: all of the tenant's for the owner, those the agent participates in for an API key or an agent device JWT",
    description:
      'Team rooms that are not archived, oldest first, optionally of one `workspace_id`: every one of the tenant for an owner; for an agent (device JWT or API key) those it participates in, within the workspace an API key\'s `X-Workspace-Id` names. An API key that has not registered key material yet gets an empty list. 403 also for an owner device\'s JWT (owners list with the owner JWT).',
    headers: workspaceHeader("API-key callers: only this workspace's team rooms (the key must be a member)"),
    query: TeamRoomListQuery,
    responses: { 200: TeamRoomList },
    errors: [400, 401, 403],
  }),
  listConnections: defineRoute({
    method: 'GET',
    path: '/api/v1/connections',
    auth: 'owner',
    tags: ['connections'],
    summary: 'All connections of the tenant: agent devices, A2A channels, federation agreements',
    description:
      'Everything the tenant is connected to, newest first, optionally of one `type`: its agent devices, its A2A channels and its federation agreements, each with a status and the peer\'s name where known.',
    query: ConnectionListQuery,
    responses: { 200: ConnectionList },
    errors: [400, 401, 403],
  }),
  getConnection: defineRoute({
    method: 'GET',
    path: '/api/v1/connections/{connection_id}',
    auth: 'owner',
    tags: ['connections'],
    summary: 'One connection with the details of its type',
    description:
      'One connection by id with the details of its type: the agent device, the A2A channel or the federation agreement. 404 when no connection of the tenant has this id.',
    params: ConnectionIdParams,
    responses: { 200: ConnectionDetail },
    errors: [400, 401, 403, 404],
  }),
  ownerConnections: defineRoute({
    method: 'GET',
    path: '/api/v1/owner-connections',
    auth: 'owner',
    tags: ['connections'],
    summary: "The caller's owner devices with health, last_seen and presence",
    description: 'The signed-in owner\'s own owner devices with their health, last-seen time and whether they have a socket open now.',
    responses: { 200: OwnerConnectionList },
    errors: [401, 403],
  }),
};
