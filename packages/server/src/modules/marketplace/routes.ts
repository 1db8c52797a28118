/**
 * Marketplace routes (contract §4.16; design §8.23–§8.26, §8.29, §8.35): thin handlers on the
 * contract's rows. Listing search and detail are public (reduced view for anonymous callers);
 * the rest is workspace auth, except the operator routes (disputes review and resolution, ledger
 * check) and the processor webhooks (their signature is the credential).
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { deviceIdHeader, agentDeviceOf, operatorOf, ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { notFound, unauthorized } from '../../lib/errors.js';
import { marketCallerOf, optionalMarketCallerOf } from './caller.js';
import type { DisputeService } from './disputes.js';
import { verifyLedger } from './ledger.js';
import type { ListingService } from './listings.js';
import { processorInfo, type MarketplaceSettings } from './settings.js';
import type { PayoutService } from './payouts.js';
import type { ProcessorEventHandler } from './processor-events.js';
import type { RentalService } from './rentals.js';
import type { RentalRoom, RoomCaller } from './room.js';
import type { Db } from '../../db/client.js';

/** Services the marketplace routes call. */
export interface MarketplaceRouteDeps {
  db: Db;
  listings: ListingService;
  rentals: RentalService;
  room: RentalRoom;
  disputes: DisputeService;
  payouts: PayoutService;
  settings: MarketplaceSettings;
  events: ProcessorEventHandler;
  /** Which processor webhook route is live (the other answers 404). */
  processor: 'stripe' | 'local';
  /** `STRIPE_PUBLISHABLE_KEY` (Stripe.js in the web app), null when unset or not Stripe. */
  publishableKey: string | null;
}

/** The owner's tenant (null when it has none) and operator flag, for the `owner-any` dispute routes. */
function reviewer(req: FastifyRequest): { tenantId: string | null; operator: { sub: string } | null } {
  const p = req.principal;
  if (p?.kind !== 'owner') return { tenantId: null, operator: null };
  return { tenantId: p.tenantId, operator: p.operator ? { sub: p.sub } : null };
}

/** The tenant and device acting in a rental room: an owner with `X-Device-Id` (checked by the room as one of its owner devices), a device JWT, or an API key's registered device. */
function roomCallerOf(req: FastifyRequest): RoomCaller {
  const p = req.principal;
  if (p?.kind === 'owner') {
    const o = ownerOf(req);
    return { tenantId: o.tenantId, deviceId: deviceIdHeader(req, false) ?? null, ownerSub: o.sub };
  }
  if (p?.kind === 'device' || p?.kind === 'apikey') {
    const a = agentDeviceOf(req);
    return { tenantId: a.tenantId, deviceId: a.deviceId, ownerSub: null };
  }
  throw unauthorized();
}

export const marketplaceRoutes: FastifyPluginAsync<MarketplaceRouteDeps> = async (app, d) => {
  serve(app, ROUTES.searchListings, async (req) => d.listings.search(optionalMarketCallerOf(req), req.query));
  serve(app, ROUTES.getListing, async (req) => d.listings.get(optionalMarketCallerOf(req), req.params.id));
  serve(app, ROUTES.listingCapabilities, async (req) => ({ capabilities: await d.listings.capabilities(marketCallerOf(req), req.params.id) }));
  serve(app, ROUTES.createListing, async (req, reply) => reply.status(201).send(await d.listings.create(marketCallerOf(req), req.body)));
  serve(app, ROUTES.updateListing, async (req) => d.listings.update(marketCallerOf(req), req.params.id, req.body));
  serve(app, ROUTES.publishListing, async (req) => d.listings.publish(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.pauseListing, async (req) => d.listings.pause(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.resumeListing, async (req) => d.listings.resume(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.delistListing, async (req) => d.listings.delist(marketCallerOf(req), req.params.id));

  serve(app, ROUTES.createRental, async (req, reply) => reply.status(201).send(await d.rentals.create(marketCallerOf(req), req.body)));
  serve(app, ROUTES.listRentals, async (req) => d.rentals.list(marketCallerOf(req), req.query));
  serve(app, ROUTES.getRental, async (req) => d.rentals.get(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.cancelRental, async (req) => d.rentals.cancel(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.completeRental, async (req) => d.rentals.complete(marketCallerOf(req), req.params.id));
  serve(app, ROUTES.rentalMembers, async (req) => d.room.members(roomCallerOf(req), req.params.id));
  serve(app, ROUTES.sendRentalMessage, async (req, reply) => reply.status(201).send(await d.room.send(roomCallerOf(req), req.params.id, req.body)));
  serve(app, ROUTES.rentalMessages, async (req) => d.room.history(roomCallerOf(req), req.params.id, req.query));
  serve(app, ROUTES.fileDispute, async (req, reply) => reply.status(201).send(await d.disputes.file(marketCallerOf(req), req.params.id, req.body)));

  serve(app, ROUTES.listDisputes, async (req) => {
    const r = reviewer(req);
    return d.disputes.list(r.tenantId, r.operator, req.query);
  });
  serve(app, ROUTES.getDispute, async (req) => {
    const r = reviewer(req);
    return d.disputes.get(r.tenantId, r.operator, req.params.id);
  });
  serve(app, ROUTES.addDisputeNote, async (req, reply) => reply.status(201).send(await d.disputes.addNote(marketCallerOf(req), req.params.id, req.body)));
  serve(app, ROUTES.resolveDispute, async (req) => d.disputes.resolve({ sub: operatorOf(req).sub }, req.params.id, req.body));

  serve(app, ROUTES.listPayouts, async (req) => d.payouts.list(marketCallerOf(req), req.query));
  serve(app, ROUTES.payoutSummary, async (req) => d.payouts.summary(marketCallerOf(req)));
  serve(app, ROUTES.connectDashboard, async (req) => d.payouts.dashboard(marketCallerOf(req)));
  serve(app, ROUTES.getPaymentMethod, async (req) => d.settings.getPaymentMethod(marketCallerOf(req)));
  serve(app, ROUTES.setPaymentMethod, async (req) => {
    const o = ownerOf(req);
    return d.settings.setPaymentMethod(o.tenantId, o.sub, req.body.payment_method);
  });
  serve(app, ROUTES.paymentProcessor, async () => processorInfo(d.processor, d.publishableKey));
  serve(app, ROUTES.verifyLedger, async (req) => {
    operatorOf(req);
    return verifyLedger(d.db);
  });

  // Processor webhooks: the raw body is what the signature covers, so JSON is not parsed here.
  await app.register(async (hooks) => {
    hooks.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    const headersOf = (req: FastifyRequest) => Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(',') : v]));
    serve(hooks, ROUTES.stripeWebhook, async (req) => {
      if (d.processor !== 'stripe') throw notFound('Stripe webhook endpoint (STRIPE_SECRET_KEY is not set)');
      return d.events.handle(String(req.body ?? ''), headersOf(req));
    });
    serve(hooks, ROUTES.localProcessorWebhook, async (req) => {
      if (d.processor !== 'local') throw notFound('local processor webhook endpoint (Stripe is configured)');
      return d.events.handle(String(req.body ?? ''), headersOf(req));
    });
  });
};
