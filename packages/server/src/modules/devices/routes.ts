/** Enrollment and device routes (contract §4.3, §4.4; design §5, §7). Thin: rules live in service.ts. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { actingDevice, agentDeviceOf, deviceOf, ownDeviceOnly, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import type { DeviceService } from './service.js';

export const deviceRoutes: FastifyPluginAsync<{ devices: DeviceService; rateLimits: RateLimitConfig }> = async (
  app,
  { devices, rateLimits },
) => {
  const limits = routeLimits(rateLimits);

  serve(app, ROUTES.enroll, async (req, reply) => reply.status(201).send(await devices.enroll(req.body)), { config: { rateLimit: limits.enroll } });

  serve(app, ROUTES.listDevices, async (req) => ({ devices: await devices.list(ownerOf(req).tenantId) }));

  serve(app, ROUTES.deviceStatus, async (req) => devices.status(req.params.id), { config: { rateLimit: limits.deviceStatus } });

  serve(app, ROUTES.activateDevice, async (req) => devices.activate(req.params.id, req.body));

  serve(app, ROUTES.tokenChallenge, async (req, reply) => reply.status(201).send(devices.tokenChallenge(req.params.id)));

  serve(app, ROUTES.renewToken, async (req) => devices.renewToken(req.params.id, req.body.challenge, req.body.signature));

  serve(app, ROUTES.devicePresence, async (req) => devices.presence(ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.deviceKeys, async (req) => devices.keys(ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.devicePending, async (req) => {
    const d = deviceOf(req);
    ownDeviceOnly(d.deviceId, req.params.id);
    return devices.pending(d.tenantId, d.deviceId);
  });

  serve(app, ROUTES.approveDevice, async (req) => devices.approve(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));
  serve(app, ROUTES.rejectDevice, async (req) => devices.reject(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));
  serve(app, ROUTES.revokeDevice, async (req) => devices.revoke(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub));

  serve(app, ROUTES.setSelfWebhook, async (req) => {
    const d = deviceOf(req);
    return devices.setWebhook(d.tenantId, d.deviceId, req.body.url, `device:${d.deviceId}`);
  });

  serve(app, ROUTES.setDeviceWebhook, async (req) => devices.setWebhook(ownerOf(req).tenantId, req.params.id, req.body.url, ownerOf(req).sub));

  serve(app, ROUTES.getSelfDeviceSettings, async (req) => {
    const d = agentDeviceOf(req);
    return devices.settings(d.tenantId, d.deviceId);
  });

  serve(app, ROUTES.updateSelfDeviceSettings, async (req) => {
    const d = agentDeviceOf(req);
    return devices.setSettings(d.tenantId, d.deviceId, req.body, `device:${d.deviceId}`);
  });

  serve(app, ROUTES.getDeviceSettings, async (req) => devices.settings(ownerOf(req).tenantId, req.params.id));

  serve(app, ROUTES.updateDeviceSettings, async (req) => devices.setSettings(ownerOf(req).tenantId, req.params.id, req.body, ownerOf(req).sub));

  serve(app, ROUTES.renameDevice, async (req) => devices.rename(ownerOf(req).tenantId, req.params.id, req.body.name, ownerOf(req).sub));

  serve(app, ROUTES.deleteDevice, async (req, reply) => {
    await devices.delete(ownerOf(req).tenantId, req.params.id, ownerOf(req).sub);
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.removeOwnerDevice, async (req, reply) => {
    await devices.removeOwnerDevice(ownerOf(req), req.params.id, actingDevice(req, true));
    return reply.status(204).send(null);
  });

  serve(app, ROUTES.registerOwnerDevice, async (req, reply) => reply.status(201).send(await devices.registerOwnerDevice(ownerOf(req), req.body)));

  serve(app, ROUTES.relinkDevice, async (req) => devices.relink(ownerOf(req).tenantId, req.params.id));
};
