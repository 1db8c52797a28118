/**
 * DID routes (contract §4.10, §8; design §8.15): resolution by address, the DID document, its update
 * by owner-key signature, and the DIF Universal Resolver driver path `/1.0/identifiers/{did}`
 * (served at the root, outside `/api/v1`: {@link didResolverRoutes}).
 *
 * Reads are public (a sent credential is verified, 401 when invalid) and limited per contract §8:
 * 60/min per IP, 600/min per API key. Resolution routes always answer a DID resolution result,
 * errors included (`didResolutionMetadata.error`), plus a `detail` string on errors (design §7).
 */
import { RESOLUTION_CONTENT_TYPE, ROUTES, type DidDocument } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import { AgentCardService, type CardPublisher } from './agent-card.js';
import type { HubDidService, Resolution } from './did-service.js';

export { RESOLUTION_CONTENT_TYPE } from '@parley/protocol';

/** Send a resolution with its status; errors also carry `detail` (design §7). */
function sendResolution(reply: FastifyReply, r: Resolution, contentType?: string) {
  if (contentType) void reply.header('content-type', contentType);
  const error = 'error' in r.body.didResolutionMetadata ? r.body.didResolutionMetadata.error : undefined;
  return reply.status(r.status).send(error ? { ...r.body, detail: `DID resolution failed: ${error}` } : r.body);
}

export interface DidRouteOptions {
  hubDid: HubDidService;
  rateLimits: RateLimitConfig;
  /** Agent Cards (`/hub/{hub_address}/agent-card`); mounted with the DID routes, which they extend. */
  agentCards?: AgentCardService;
}

/** `/hub/resolve/{address}`, `/hub/{hub_address}/did` (GET, PATCH), `/hub/{hub_address}/agent-card` (GET, PUT); mounted under `/api/v1`. */
export const hubDidRoutes: FastifyPluginAsync<DidRouteOptions> = async (app, { hubDid, rateLimits, agentCards }) => {
  const limited = { config: { rateLimit: routeLimits(rateLimits).did } };

  serve(app, ROUTES.resolveHub, async (req, reply) => sendResolution(reply, await hubDid.resolveAddress(req.params.address)), limited);

  // The platform's issuer document is typed `object` by its hook; the response schema lets extra properties through.
  serve(app, ROUTES.getDidDocument, async (req) => (await hubDid.document(req.params.hub_address)) as DidDocument, limited);

  serve(app, ROUTES.updateDid, async (req) => {
    const o = ownerOf(req);
    return hubDid.addVerificationMethod(o.tenantId, req.params.hub_address, req.body, o.sub);
  });

  if (!agentCards) return;
  serve(app, ROUTES.getAgentCard, async (req) => agentCards.get(req.params.hub_address), limited);

  serve(app, ROUTES.publishAgentCard, async (req) => {
    let publisher: CardPublisher;
    if (req.principal?.kind === 'owner') {
      const o = ownerOf(req);
      publisher = { tenantId: o.tenantId, actor: o.sub, deviceId: null };
    } else {
      const a = agentDeviceOf(req);
      publisher = { tenantId: a.tenantId, actor: req.principal?.kind === 'apikey' ? `api_key:${req.principal.apiKeyId}` : `device:${a.deviceId}`, deviceId: a.deviceId };
    }
    return agentCards.publish(publisher, req.params.hub_address, req.body);
  });
};

/** `GET /1.0/identifiers/{did}` (DIF Universal Resolver driver interface); mounted at the root. */
export const didResolverRoutes: FastifyPluginAsync<DidRouteOptions> = async (app, { hubDid, rateLimits }) => {
  serve(app, ROUTES.resolveDid, async (req, reply) => sendResolution(reply, await hubDid.resolveDid(req.params.did), RESOLUTION_CONTENT_TYPE), {
    config: { rateLimit: routeLimits(rateLimits).did },
  });
};
