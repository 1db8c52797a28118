/** Enrollment and device routes (contract §4.3, §4.4; design §5, §7). Thin: each calls the operation it serves with the area's deps. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { agentDeviceOf, deviceIdHeader, deviceOf, ownDeviceOnly, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import { activateDevice, enrollDevice } from './enrollment.js';
import type { DeviceServiceDeps } from './internal.js';
import { approveDevice, deleteDevice, rejectDevice, revokeDevice } from './lifecycle.js';
import { registerOwnerDevice, relinkOwnerDevice, removeOwnerDevice } from './owner-devices.js';
import { deviceKeys, devicePresence, deviceSettings, deviceStatus, listDevices, pendingCount, renameDevice, setDeviceSettings, setDeviceWebhook } from './reads.js';
import { renewToken, tokenChallenge } from './tokens.js';

export const deviceRoutes: FastifyPluginAsync<{ deps: DeviceServiceDeps; rateLimits: RateLimitConfig }> = async (app, { deps, rateLimits }) => {
  const limits = routeLimits(rateLimits);

  serve(app, ROUTES.enroll, async (req, reply) => reply.status(201).send(await enrollDevice(deps, req.body)), { config: { rateLimit: limits.enroll } });

  serve(app, ROUTES.listDevices, async (req) => ({ devices: await listDevices(deps, ownerOf(req).tenantId) }));

  serve(app, ROUTES.deviceStatus, async (req) => deviceStatus(deps, req.params.id), { config: { rateLimit: limits.deviceStatus } });

  serve(app, ROUTES.activateDevice, async (req) => activateDevice(deps, req.params.id, req.body));

  serve(app, ROUTES.tokenChallenge, async (req, reply) => reply.status(201).send(tokenChallenge(deps, req.params.id)));

  serve(app, ROUTES.renewToken, async (req) => renewToken(deps, req.params.id, req.body.challenge, req.body.signature));

  serve(app, ROUTES.devicePresence, async (req) => devicePresence(deps, ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.deviceKeys, async (req) => deviceKeys(deps, ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.devicePending, async (req) => {
    const d = deviceOf(req);
    ownDeviceOnly(d.deviceId, req.params.id);
    return pendingCount(deps, d.tenantId, d.deviceId);
  });

  serve(app, ROUTES.approveDevice, async (req) => approveDevice(deps, ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));
  serve(app, ROUTES.rejectDevice, async (req) => rejectDevice(deps, ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));
  serve(app, ROUTES.revokeDevice, async (req) => revokeDevice(deps, ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));

  serve(app, ROUTES.setSelfWebhook, async (req) => {
    const d = deviceOf(req);
    return setDeviceWebhook(deps, d.tenantId, d.deviceId, req.body.url, `device:${d.deviceId}`);
  });

  serve(app, ROUTES.setDeviceWebhook, async (req) => setDeviceWebhook(deps, ownerOf(req).tenantId, req.params.id, req.body.url, ownerOf(req).sub));

  serve(app, ROUTES.getSelfDeviceSettings, async (req) => {
    const d = agentDeviceOf(req);
    return deviceSettings(deps, d.tenantId, d.deviceId);
  });

  serve(app, ROUTES.updateSelfDeviceSettings, async (req) => {
    const d = agentDeviceOf(req);
    return setDeviceSettings(deps, d.tenantId, d.deviceId, req.body, `device:${d.deviceId}`);
  });

  serve(app, ROUTES.getDeviceSettings, async (req) => deviceSettings(deps, ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.updateDeviceSettings, async (req) => setDeviceSettings(deps, ownerOf(req).tenantId, req.params.id, req.body, ownerOf(req).sub));

  serve(app, ROUTES.renameDevice, async (req) => renameDevice(deps, ownerOf(req).tenantId, req.params.id, req.body.name, ownerOf(req).sub));

  serve(app, ROUTES.deleteDevice, async (req, reply) => {
    await deleteDevice(deps, ownerOf(req).tenantId, req.params.id, ownerOf(req).sub);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.removeOwnerDevice, async (req, reply) => {
    await removeOwnerDevice(deps, ownerOf(req), req.params.id, deviceIdHeader(req, true));
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.registerOwnerDevice, async (req, reply) => reply.status(201).send(await registerOwnerDevice(deps, ownerOf(req), req.body)));

  serve(app, ROUTES.relinkDevice, async (req) => relinkOwnerDevice(deps, ownerOf(req).tenantId, req.params.id));
};
