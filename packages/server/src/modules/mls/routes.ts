/** MLS KeyPackage routes (SPEC §1.3; RFC 9420 §10). Device JWT, or owner JWT acting as its device (X-Device-Id). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { actingDevice } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Base64, Uuid } from '../../http/schemas.js';
import type { DeviceService } from '../devices/service.js';
import { MAX_AVAILABLE, type MlsService } from './service.js';

const tags = ['mls'];
const security: { [scheme: string]: string[] }[] = [{ deviceJwt: [] }, { ownerJwt: [] }];
const auth = { auth: 'owner-or-device' as const };
const DeviceIdHeader = Type.Object({ 'x-device-id': Type.Optional(Type.String({ description: "owner callers: the owner device acting" })) });

export const mlsRoutes: FastifyPluginAsyncTypebox<{ mls: MlsService; devices: DeviceService }> = async (app, { mls, devices }) => {
  const acting = (req: FastifyRequest) => devices.actingDevice(req.principal!, actingDevice(req, false));

  app.post(
    '/mls/key-packages',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: "Publish MLS KeyPackages of the calling device",
        headers: DeviceIdHeader,
        body: Type.Object({ key_packages: Type.Array(Base64, { minItems: 1, maxItems: 100 }) }),
        response: { 201: Type.Object({ device_id: Uuid, published: Type.Integer(), available: Type.Integer({ maximum: MAX_AVAILABLE }) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const { tenantId, deviceId } = await acting(req);
      return reply.status(201).send(await mls.publish(tenantId, deviceId, req.body.key_packages));
    },
  );

  app.get(
    '/mls/key-packages/:device_id',
    {
      config: auth,
      schema: { tags, security, summary: 'How many unclaimed KeyPackages a device of the tenant has', params: Type.Object({ device_id: Uuid }), response: { 200: Type.Object({ device_id: Uuid, available: Type.Integer() }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => mls.available((await acting(req)).tenantId, req.params.device_id),
  );

  app.post(
    '/mls/key-packages/claim',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'Claim (consume) one KeyPackage of an ACTIVE device of the tenant; 404 when none is left',
        headers: DeviceIdHeader,
        body: Type.Object({ device_id: Uuid }),
        response: { 200: Type.Object({ device_id: Uuid, key_package_id: Uuid, key_package: Type.String() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { tenantId, deviceId } = await acting(req);
      return mls.claim(tenantId, req.body.device_id.toLowerCase(), deviceId);
    },
  );
};
