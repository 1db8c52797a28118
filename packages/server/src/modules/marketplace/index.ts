/**
 * The marketplace's composition (contract §4.16; design §8.23–§8.26): the payment processor chosen
 * from configuration (Stripe Connect when `STRIPE_SECRET_KEY` is set, else the embedded local
 * processor, whose asynchronous events are delivered in process to the same handler as its
 * webhook route and kept in the database until delivered), the services, and the scheduled work:
 * the cluster-wide weekly payout run and each instance's rental poll (terms that ended, trust
 * monitoring, the local processor's undelivered events, which it also picks up at start). Used by
 * `app.ts` and the CLI. This file is the area's public surface: {@link createMarketplace} and the
 * listing and rental lookups A2A uses.
 */
import { runJob, type Metrics } from '../../lib/metrics.js';
import { randomBytes } from 'node:crypto';
import type { MarketplaceConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_PREFIX, type Area } from '../../http/area.js';
import { scheduleClusterJob } from '../../jobs/cluster-schedule.js';
import type { MessageRate } from '../../lib/message-rate.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { SptTokens } from '../grants/index.js';
import type { PolicyService } from '../policies/index.js';
import { registerRentalFrames } from './frames.js';
import { RentalRoom } from './room.js';
import { DisputeService } from './disputes.js';
import { ListingService } from './listings.js';
import { RentalMonitor } from './monitor.js';
import { LocalProcessor } from './payments/local.js';
import { DbLocalEventStore } from './payments/local-store.js';
import type { PaymentProcessor } from './payments/processor.js';
import { StripeProcessor } from './payments/stripe.js';
import { MINIMUM_PAYOUT_CENTS, PayoutService } from './payouts.js';
import { ProcessorEventHandler } from './processor-events.js';
import { marketplaceRoutes } from './routes.js';
import { RentalService } from './rentals.js';
import { MarketplaceSettings } from './settings.js';

/** `scheduled_jobs.name` of the weekly payout run. */
export const PAYOUT_JOB = 'marketplace_payouts';
/** The per-instance rental poll (rentals due to end, trust watch), as counted in `parley_job_runs_total`. */
export const RENTAL_POLL_JOB = 'marketplace_rentals';

/** What the marketplace needs from the composition root. */
export interface MarketplaceDeps {
  db: Db;
  config: MarketplaceConfig;
  notifier: Notifier;
  tokens: SptTokens;
  /** Both tenants' policies decide rental-room messages; approved held ones come back through the `rental` releaser. */
  policies: Pick<PolicyService, 'decide' | 'hold' | 'holdAll' | 'alert' | 'registerReleaser'>;
  /** contract §8's per-device message budget, shared with the socket and the other send routes. */
  messageRate: MessageRate;
  /** Largest ciphertext of one envelope (design §8.12). */
  maxCiphertextBytes: number;
  publicUrl: string;
  listDefault: number;
  listMax: number;
  jobPollMs: number;
  log: { warn: (o: object, msg: string) => void };
  /** Counts payout runs (`parley_job_runs_total`). */
  metrics?: Metrics;
}

/** The marketplace's services, its routes and frames, and its scheduled work. */
export interface Marketplace extends Area {
  processor: PaymentProcessor;
  listings: ListingService;
  rentals: RentalService;
  disputes: DisputeService;
  payouts: PayoutService;
  settings: MarketplaceSettings;
  monitor: RentalMonitor;
  room: RentalRoom;
  events: ProcessorEventHandler;
  /** Start the payout job and the rental poll (and recover the local processor's events). */
  start(): void;
  /** Stop the scheduled work (once started) and close the processor (pending local events are delivered or cancelled). */
  close(): Promise<void>;
}

/** Build the marketplace (see the module comment). */
export function createMarketplace(d: MarketplaceDeps): Marketplace {
  const processor: PaymentProcessor = d.config.stripe
    ? new StripeProcessor(d.config.stripe)
    : new LocalProcessor({
        webhookSecret: d.config.localWebhookSecret ?? `whsec_${randomBytes(32).toString('base64')}`,
        baseUrl: d.publicUrl,
        asyncDelayMs: d.config.localDelayMs,
        transferDelayMs: d.config.localDelayMs,
        deliver: async (raw, headers) => {
          await events.handle(raw, headers); // defined below; called only after construction
        },
        onDeliveryError: (err, ev) => d.log.warn({ err, event: ev }, 'local payment processor event failed'),
        store: new DbLocalEventStore(d.db),
      });
  const common = { db: d.db, notifier: d.notifier, listDefault: d.listDefault, listMax: d.listMax };
  const rentals = new RentalService({ ...common, processor, tokens: d.tokens, feeBps: d.config.feeBps, publicUrl: d.publicUrl });
  const payouts = new PayoutService({ ...common, processor, publicUrl: d.publicUrl, minimumCents: d.config.minimumPayoutCents ?? MINIMUM_PAYOUT_CENTS });
  const events = new ProcessorEventHandler({ db: d.db, processor, rentals, payouts });
  const room = new RentalRoom({ db: d.db, notifier: d.notifier, policies: d.policies, messageRate: d.messageRate, maxCiphertextBytes: d.maxCiphertextBytes, listDefault: d.listDefault, listMax: d.listMax });
  d.policies.registerReleaser('rental', (held) => room.release(held));
  const monitor = new RentalMonitor({ db: d.db, rentals, room });
  const closeProcessor = async () => {
    if (processor instanceof LocalProcessor) await processor.close();
  };
  let stop: (() => Promise<void>) | undefined;
  /** The local processor's events a previous run (or a stopped instance) left undelivered. */
  const recoverEvents = async () => (processor instanceof LocalProcessor ? processor.recover() : 0);
  const services = {
    processor,
    listings: new ListingService(d.db),
    rentals,
    disputes: new DisputeService({ ...common, rentals }),
    payouts,
    settings: new MarketplaceSettings(d.db),
    monitor,
    room,
    events,
  };
  return {
    ...services,
    frames: (gateway) => registerRentalFrames(gateway, room),
    async routes(app) {
      await app.register(marketplaceRoutes, { prefix: API_PREFIX, db: d.db, ...services, processor: processor.name, publishableKey: d.config.stripe?.publishableKey ?? null });
    },
    async close() {
      await (stop ?? closeProcessor)();
      stop = undefined;
    },
    start() {
      const stopPayouts = scheduleClusterJob({
        db: d.db,
        name: PAYOUT_JOB,
        intervalMs: d.config.payoutIntervalMs,
        pollMs: d.jobPollMs,
        firstRunAfterMs: d.config.payoutIntervalMs,
        onError: (err) => d.log.warn({ err }, 'payout run failed'),
        ...(d.metrics ? { metrics: d.metrics } : {}),
        run: async () => ({ ...(await payouts.run()) }),
      });
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let inFlight: Promise<unknown> = recoverEvents().catch((err: unknown) => d.log.warn({ err }, 'local payment processor: recovering undelivered events failed'));
      const poll = () => {
        if (stopped) return;
        timer = setTimeout(() => {
          inFlight = runJob(d.metrics, RENTAL_POLL_JOB, () => Promise.all([rentals.completeDue(), monitor.check(), recoverEvents()]), (err: unknown) => d.log.warn({ err }, 'rental poll failed')).finally(poll);
        }, d.config.rentalPollMs);
        timer.unref();
      };
      poll();
      stop = async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        await inFlight;
        await stopPayouts();
        await closeProcessor();
      };
    },
  };
}

export { getListing } from './listings-repo.js';
export { activeRentalOf, getRental } from './rentals-repo.js';
