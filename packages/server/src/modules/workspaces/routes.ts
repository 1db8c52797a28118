/**
 * Workspace routes (SPEC §2.5, §4.13, §5). `GET /workspaces` accepts an owner JWT or an API key
 * (with optional `X-Workspace-Id`, validated by the authenticator); the rest is owner-only.
 * Thin: rules live in service.ts.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { agentDeviceOf, ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Timestamp, Uuid } from '../../http/schemas.js';
import { WORKSPACE_ROLES, type WorkspaceService } from './service.js';

const Role = Type.Union(WORKSPACE_ROLES.map((r) => Type.Literal(r)));
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const MemberIn = Type.Object({ device_id: Uuid, role: Type.Optional(Role) });
const MemberOut = Type.Object({ device_id: Uuid, name: Type.String(), status: Type.String(), role: Role, added_at: Timestamp });
const WorkspaceOut = Type.Object({ id: Uuid, name: Type.String(), role: Type.Literal('owner'), members: Type.Array(MemberOut), created_at: Timestamp });
const Summary = Type.Object({
  id: Uuid,
  name: Type.String(),
  role: Type.Union([Type.Literal('owner'), Role]),
  member_count: Type.Optional(Type.Integer({ description: 'owners only' })),
});

/** The optional `X-Workspace-Id` header of an owner-or-API-key listing; `description` says what it narrows. */
export const workspaceHeader = (description: string) => Type.Object({ 'x-workspace-id': Type.Optional(Type.String({ description })) });

/**
 * Who calls an owner-or-API-key listing (`GET /workspaces`, `GET /team-rooms`; SPEC §4.13): the
 * owner (the whole tenant), or the agent device an API key acts as with the workspace its
 * `X-Workspace-Id` named (validated by the authenticator; null when absent).
 */
export type WorkspaceViewer = { kind: 'owner' } | { kind: 'agent'; deviceId: string; workspaceId: string | null };

/**
 * The tenant and viewer of a request on an `owner-or-apikey` route. 403 for an API key whose
 * client has not registered key material yet, or an owner without a tenant (auth.ts).
 */
export function workspaceViewerOf(req: FastifyRequest): { tenantId: string; viewer: WorkspaceViewer } {
  const p = req.principal;
  if (p?.kind === 'apikey') {
    const { tenantId, deviceId } = agentDeviceOf(req);
    return { tenantId, viewer: { kind: 'agent', deviceId, workspaceId: p.workspaceId } };
  }
  return { tenantId: ownerOf(req).tenantId, viewer: { kind: 'owner' } };
}

const tags = ['workspaces'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const workspaceRoutes: FastifyPluginAsyncTypebox<{ workspaces: WorkspaceService }> = async (app, { workspaces }) => {
  app.post(
    '/workspaces',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Create a workspace; members must be ACTIVE agent devices of the tenant',
        body: Type.Object({ name: Name, members: Type.Optional(Type.Array(MemberIn, { maxItems: 500 })) }),
        response: { 201: WorkspaceOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await workspaces.create(o.tenantId, o.sub, req.body));
    },
  );

  app.get(
    '/workspaces',
    {
      config: { auth: 'owner-or-apikey', allowUnregisteredKey: true },
      schema: {
        tags,
        security: [{ ownerJwt: [] }, { apiKey: [] }],
        summary: "List workspaces: every tenant workspace for the owner, the key's own workspaces for an API key",
        headers: workspaceHeader('API-key callers: list only this workspace (the key must be a member)'),
        response: { 200: Type.Object({ workspaces: Type.Array(Summary) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      if (unregisteredKeyOnOpenRoute(req)) return { workspaces: [] };
      const { tenantId, viewer } = workspaceViewerOf(req);
      return { workspaces: await (viewer.kind === 'agent' ? workspaces.listForAgent(tenantId, viewer.deviceId, viewer.workspaceId) : workspaces.listForOwner(tenantId)) };
    },
  );

  app.get(
    '/workspaces/:id',
    { config: owner, schema: { tags, security, summary: 'Workspace details with members', params: IdParams, response: { 200: WorkspaceOut, ...errorResponses(400, 401, 403, 404) } } },
    async (req) => workspaces.get(ownerOf(req).tenantId, req.params.id),
  );

  app.post(
    '/workspaces/:id/members',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Add a member (an ACTIVE agent device) or set its role; idempotent',
        params: IdParams,
        body: MemberIn,
        response: { 200: WorkspaceOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => workspaces.addMember(ownerOf(req).tenantId, req.params.id, req.body),
  );

  app.delete(
    '/workspaces/:id/members/:device_id',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Remove a member',
        params: Type.Object({ id: Uuid, device_id: Uuid }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await workspaces.removeMember(ownerOf(req).tenantId, req.params.id, req.params.device_id);
      return reply.status(204).send(null);
    },
  );
};
