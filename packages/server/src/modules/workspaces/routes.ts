/**
 * Workspace routes (contract §2.5, §4.13, §5). `GET /workspaces` accepts an owner JWT, an API key
 * (with optional `X-Workspace-Id`, validated by the authenticator) or an agent device's own JWT;
 * the rest is owner-only. Thin: rules live in service.ts.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { agentDeviceOf, ownerOf, unregisteredKeyOnOpenRoute } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { forbidden } from '../../lib/errors.js';
import type { WorkspaceService } from './service.js';

/**
 * Who calls a workspace or team-room listing (`GET /workspaces`, `GET /team-rooms`; contract §4.13):
 * the owner (the whole tenant), or the agent device an API key or a device JWT acts as, with the
 * workspace an API key's `X-Workspace-Id` named (validated by the authenticator; null when absent,
 * and always for a device JWT).
 */
export type WorkspaceViewer = { kind: 'owner' } | { kind: 'agent'; deviceId: string; workspaceId: string | null };

/**
 * The tenant and viewer of a request on such a listing. 403 for an API key whose client has not
 * registered key material yet, an owner device's JWT (owners list with the owner JWT), or an
 * owner without a tenant (auth.ts).
 */
export function workspaceViewerOf(req: FastifyRequest): { tenantId: string; viewer: WorkspaceViewer } {
  const p = req.principal;
  if (p?.kind === 'apikey' || p?.kind === 'device') {
    const { tenantId, deviceId, kind } = agentDeviceOf(req);
    if (kind !== 'agent') throw forbidden('an owner device lists workspaces and team rooms with the owner token, not its device token');
    return { tenantId, viewer: { kind: 'agent', deviceId, workspaceId: p.kind === 'apikey' ? p.workspaceId : null } };
  }
  return { tenantId: ownerOf(req).tenantId, viewer: { kind: 'owner' } };
}

export const workspaceRoutes: FastifyPluginAsync<{ workspaces: WorkspaceService }> = async (app, { workspaces }) => {
  serve(app, ROUTES.createWorkspace, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await workspaces.create(o.tenantId, o.sub, req.body));
  });

  serve(
    app,
    ROUTES.listWorkspaces,
    async (req) => {
      if (unregisteredKeyOnOpenRoute(req)) return { workspaces: [] };
      const { tenantId, viewer } = workspaceViewerOf(req);
      return { workspaces: await (viewer.kind === 'agent' ? workspaces.listForAgent(tenantId, viewer.deviceId, viewer.workspaceId) : workspaces.listForOwner(tenantId)) };
    },
    { config: { allowUnregisteredKey: true } },
  );

  serve(app, ROUTES.getWorkspace, async (req) => workspaces.get(ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.addWorkspaceMember, async (req) => workspaces.addMember(ownerOf(req).tenantId, req.params.id, req.body));

  serve(app, ROUTES.removeWorkspaceMember, async (req, reply) => {
    await workspaces.removeMember(ownerOf(req).tenantId, req.params.id, req.params.device_id);
    return reply.status(204).send(null);
  });
};
