/**
 * Key directory routes: MLS KeyPackages (RFC 9420 §10), the PQXDH prekeys of the X3DH
 * fallback and the X3DH signed and one-time prekeys (X3DH §3.2). Device
 * JWT, API key acting as its registered device (403 before `client_key_register`), or owner JWT
 * acting as its device (X-Device-Id).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Db } from '../../db/client.js';
import { deviceIdHeader } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { actingDevice } from '../devices/index.js';
import type { MlsService } from './service.js';

export const mlsRoutes: FastifyPluginAsync<{ mls: MlsService; db: Db }> = async (app, { mls, db }) => {
  const acting = (req: FastifyRequest) => actingDevice({ db }, req.principal!, deviceIdHeader(req, false));

  serve(app, ROUTES.publishKeyPackages, async (req, reply) => {
    const { tenantId, deviceId } = await acting(req);
    return reply.status(201).send(await mls.publish(tenantId, deviceId, req.body.key_packages, req.body.cipher_suite));
  });

  serve(app, ROUTES.keyPackageCount, async (req) => mls.available((await acting(req)).tenantId, req.params.device_id));

  serve(app, ROUTES.claimKeyPackage, async (req) => {
    const { tenantId, deviceId } = await acting(req);
    return mls.claim(tenantId, req.body.device_id.toLowerCase(), deviceId, req.body.cipher_suites);
  });

  serve(app, ROUTES.publishPqPrekeys, async (req, reply) => {
    const { tenantId, deviceId } = await acting(req);
    return reply.status(201).send(await mls.pqPrekeys.publish(tenantId, deviceId, req.body));
  });

  serve(app, ROUTES.pqPrekeyCount, async (req) => mls.pqPrekeys.holdings((await acting(req)).tenantId, req.params.device_id.toLowerCase()));

  serve(app, ROUTES.claimPqPrekey, async (req) => {
    const { tenantId, deviceId } = await acting(req);
    return mls.pqPrekeys.claim(tenantId, req.body.device_id.toLowerCase(), deviceId);
  });

  serve(app, ROUTES.publishPrekeys, async (req, reply) => {
    const { tenantId, deviceId } = await acting(req);
    return reply.status(201).send(await mls.prekeys.publish(tenantId, deviceId, req.body));
  });

  serve(app, ROUTES.prekeyCount, async (req) => mls.prekeys.holdings((await acting(req)).tenantId, req.params.device_id.toLowerCase()));

  serve(app, ROUTES.claimPrekeyBundle, async (req) => {
    const { tenantId, deviceId } = await acting(req);
    return mls.prekeys.claim(tenantId, req.body.device_id.toLowerCase(), deviceId);
  });
};
