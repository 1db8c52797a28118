/**
 * Rentals (contract §2.13, §3.6, §4.16; design §8.9, §8.24, §8.29, §8.35).
 *
 * pending -> active when the processor confirms the charge (at once, or by a webhook event);
 * pending -> cancelled when it declines (`reason: payment_failed`, the answer is a 402);
 * active -> completed by the renter or at the end of the term (the term job);
 * active | pending -> cancelled by the renter (refund per design §8.24);
 * active <-> suspended on a trust drop (the monitor); active | suspended -> disputed -> resolved.
 *
 * Every transition is one database transaction holding the rental's row lock: the state change,
 * its ledger transaction (charge or refund), the renter's SPT (issued on activation, revoked when
 * the rental is suspended or ends), and a `rental.*` audit event in BOTH tenants' chains. A
 * processor call that moves money (refund) runs inside that transaction with an idempotency key:
 * when it fails nothing is written (502), and a retry cannot move the money twice. After commit
 * both tenants' owner sockets and webhooks get `rental_updated`.
 */
import { randomUUID } from 'node:crypto';
import type { CreateRentalRequest, PricingModel, Rental, RentalListQuery, RentalPage, RentalStatus } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, switchTenant, withTenant } from '../../db/tenant.js';
import { AppError, badRequest, conflict, ErrorCode, forbidden, notFound } from '../../lib/errors.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import type { Notifier } from '../../realtime/notifier.js';
import { appendAuditToParties, type AuditEventType, lockChains, twoPartyEvents } from '../audit/index.js';
import { issueRentalGrant, rentalGrantToken, revokeRentalGrant, type SptTokens } from '../grants/index.js';
import { requireOwnerDeviceOf } from '../devices/index.js';
import { getHubIdentity } from '../hub/index.js';
import { NEUTRAL_SCORE, tierRank } from '@parley/protocol';
import type { MarketCaller } from './caller.js';
import * as ledger from './ledger.js';
import * as listingsRepo from './listings-repo.js';
import { ProcessorError, type PaymentProcessor } from './payments/processor.js';
import { amountOf, cancellationRefund, termHoursOf } from './pricing.js';
import * as repo from './rentals-repo.js';
import { getPaymentMethod } from './settings-repo.js';

/** Dependencies of {@link RentalService}. */
export interface RentalServiceDeps {
  db: Db;
  processor: PaymentProcessor;
  notifier: Notifier;
  tokens: SptTokens;
  /** Platform fee in basis points (`MARKETPLACE_FEE_BPS`, default 2000). */
  feeBps: number;
  /** Audience of rental SPTs (PUBLIC_URL). */
  publicUrl: string;
  listDefault: number;
  listMax: number;
}

/** 402 Payment Required: the processor declined the payment method. */
const paymentDeclined = (detail: string) => new AppError(ErrorCode.PaymentRequired, detail);
/** 502: the payment processor failed or could not be reached. */
export const processorFailed = (err: unknown) => new AppError(ErrorCode.BadGateway, `payment processor error: ${err instanceof Error ? err.message : String(err)}`);

/** A rental row as the caller (renter or developer tenant) sees it; `grant` added by the caller for the renter. */
export function toRental(r: repo.RentalRow, callerTenantId: string): Rental {
  return {
    rental_id: r.id,
    listing_id: r.listingId,
    hub_address: r.hubAddress,
    role: r.tenantId === callerTenantId ? 'renter' : 'developer',
    status: r.status as RentalStatus,
    room_id: r.agentDeviceId ? r.id : null,
    renter_tenant_id: r.tenantId,
    developer_tenant_id: r.partnerTenantId,
    pricing_model: r.pricingModel as PricingModel,
    amount_cents: r.amountCents,
    fee_cents: r.feeCents,
    refunded_cents: r.refundedCents,
    currency: 'usd',
    term_hours: r.termHours,
    starts_at: r.startsAt?.toISOString() ?? null,
    ends_at: r.endsAt?.toISOString() ?? null,
    reason: r.reason,
    created_at: r.createdAt.toISOString(),
  };
}

/** The audit event of each state {@link RentalService.end} moves a rental to. */
const END_EVENTS = { completed: 'rental.completed', cancelled: 'rental.cancelled', suspended: 'rental.suspended' } as const satisfies Record<string, AuditEventType>;

/** What a transition step changes, for the audit event and the notification. */
interface Step {
  row: repo.RentalRow;
  type: AuditEventType;
  data?: Record<string, unknown>;
}

export class RentalService {
  constructor(private readonly deps: RentalServiceDeps) {}

  /**
   * Rent a published listing of another tenant (contract §4.16). The payment method is the body's or
   * the tenant's default. @throws 400 no payment method; 404 listing not published,
   * or `X-Device-Id` unknown; 403 `X-Device-Id` not one of the owner's own owner devices; 409 own
   * listing, the agent suspended, or the identity no longer meets the listing's tier/score; 402 declined
   * (the rental is recorded as cancelled, `payment_failed`); 502 processor failure.
   */
  async create(c: MarketCaller, input: CreateRentalRequest): Promise<Rental> {
    const { db, processor } = this.deps;
    const rental = await withTenant(db, c.tenantId, async (tx) => {
      // The renter's device recorded on the rental must be one of the calling owner's own.
      if (c.kind === 'owner' && c.deviceId) await requireOwnerDeviceOf(tx, c.actor, c.deviceId);
      const paymentMethod = input.payment_method ?? (await getPaymentMethod(tx, c.tenantId));
      if (!paymentMethod) throw badRequest('no payment_method given and the tenant has no default one: set it with PUT /api/v1/marketplace/payment-method');
      const l = await listingsRepo.getListing(tx, input.listing_id);
      if (!l || l.status !== 'published') throw notFound('published listing');
      if (l.tenantId === c.tenantId) throw conflict('a tenant cannot rent its own listing');
      if (l.agentSuspended) throw conflict('the listed agent is suspended: it cannot be rented now');
      if (tierRank(l.trustTier) < tierRank(l.minTier)) throw conflict(`the listed agent is ${l.trustTier}, below the listing's ${l.minTier} tier: it cannot be rented now`);
      if (l.minScore !== null && (l.trustScore ?? NEUTRAL_SCORE) < l.minScore) throw conflict('the listed agent is below the listing’s trust score floor: it cannot be rented now');
      const model = l.pricingModel as PricingModel;
      const hours = termHoursOf(model, l.termHours);
      const amount = amountOf(model, l.priceCents, hours);
      const id = randomUUID();
      const [row] = await repo.insertRental(tx, {
        id,
        tenantId: c.tenantId,
        partnerTenantId: l.tenantId,
        listingId: l.id,
        identityId: l.identityId,
        hubAddress: l.hubAddress,
        paymentMethod,
        pricingModel: model,
        priceCents: l.priceCents,
        amountCents: amount,
        feeCents: ledger.feeOf(amount, this.deps.feeBps),
        termHours: hours,
        processor: processor.name,
        renterDeviceId: c.deviceId,
        createdBy: c.actor,
      });
      await appendAuditToParties(tx, c.tenantId, twoPartyEvents(c.tenantId, l.tenantId, c.actor, { type: 'rental.created', subject: id, data: { listing_id: l.id, amount_cents: amount, status: 'pending' } }));
      return row!;
    });
    let charge;
    try {
      charge = await processor.charge({
        amountCents: rental.amountCents,
        currency: 'usd',
        paymentMethod: rental.paymentMethod,
        description: `Parley rental of ${rental.hubAddress}`,
        metadata: { rental_id: rental.id, listing_id: rental.listingId },
        idempotencyKey: `rental-charge:${rental.id}`,
      });
    } catch (err) {
      await this.settleCharge(rental.id, null, 'failed', 'payment processor unavailable');
      throw err instanceof ProcessorError ? processorFailed(err) : err;
    }
    if (charge.status === 'declined') {
      await this.settleCharge(rental.id, charge.chargeId, 'failed', charge.declineReason ?? 'declined');
      throw paymentDeclined(`payment declined: ${charge.declineReason ?? 'the payment method was declined'}`);
    }
    if (charge.status === 'succeeded') {
      const row = await this.settleCharge(rental.id, charge.chargeId, 'succeeded');
      return this.view(row ?? rental, c.tenantId);
    }
    const pending = await withTenant(db, c.tenantId, async (tx) => (await repo.updateRental(tx, rental.id, { chargeId: charge.chargeId }))[0]!);
    return toRental(pending, c.tenantId);
  }

  /**
   * Apply the processor's verdict on a rental's charge (at creation, or from a webhook event, once
   * per event): pending -> active (charge posted, SPT issued) or pending -> cancelled
   * (`payment_failed`). A success for a rental that is no longer pending (cancelled meanwhile)
   * refunds the charge in full. Answers the updated row (null when the rental is unknown).
   */
  async settleCharge(
    rentalId: string,
    chargeId: string | null,
    outcome: 'succeeded' | 'failed',
    failure?: string,
    /** Records the processor event in the same transaction; false when it was processed before (nothing then happens). */
    recordEvent?: (tx: Tx) => Promise<boolean>,
  ): Promise<repo.RentalRow | null> {
    const tenants = await this.partiesOf(rentalId);
    if (!tenants) return null;
    const result = await withTenant(this.deps.db, tenants.renter, async (tx) => {
      await lockChains(tx, [tenants.renter, tenants.developer]);
      if (recordEvent && !(await recordEvent(tx))) return null;
      const r = await repo.getRental(tx, rentalId, true);
      if (!r) return null;
      if (r.status !== 'pending') {
        if (outcome === 'succeeded' && chargeId && r.status === 'cancelled' && r.reason !== 'payment_failed' && r.refundedCents < r.amountCents) {
          // Paid after the renter cancelled a pending rental: post the charge and give it all back.
          await ledger.post(tx, { kind: 'charge', reference: r.id, rentalId: r.id, postings: ledger.chargePostings(r.tenantId, r.partnerTenantId, r.amountCents, r.feeCents) });
          const refunded = await this.refundIn(tx, { ...r, chargeId }, r.amountCents - r.refundedCents);
          return { row: refunded.row, previous: r.status };
        }
        return null;
      }
      const now = new Date();
      if (outcome === 'failed') {
        const [row] = await repo.updateRental(tx, r.id, { status: 'cancelled', reason: 'payment_failed', chargeId, endedAt: now });
        await this.audit(tx, r, { row: row!, type: 'rental.payment_failed', data: { reason: failure ?? 'declined' } });
        return { row: row!, previous: r.status };
      }
      const endsAt = new Date(now.getTime() + (r.termHours ?? 24) * 3_600_000);
      await ledger.post(tx, { kind: 'charge', reference: r.id, rentalId: r.id, postings: ledger.chargePostings(r.tenantId, r.partnerTenantId, r.amountCents, r.feeCents) });
      const { grantId, agentDeviceId } = await this.issueGrant(tx, r, endsAt);
      const [row] = await repo.updateRental(tx, r.id, { status: 'active', chargeId, startsAt: now, endsAt, activatedAt: now, taskStartedAt: now, grantId, agentDeviceId });
      await this.audit(tx, r, { row: row!, type: 'rental.activated', data: { ends_at: endsAt.toISOString(), amount_cents: r.amountCents } });
      return { row: row!, previous: r.status };
    });
    if (!result) return null;
    await this.notify(result.row, result.previous);
    return result.row;
  }

  /** The caller's rentals on one side (default renter), newest first. */
  async list(c: MarketCaller, q: RentalListQuery): Promise<RentalPage> {
    const limit = pageLimit(q.limit, this.deps);
    const after = q.cursor !== undefined ? decodeKeyset(q.cursor) : undefined;
    const rows = await withTenant(this.deps.db, c.tenantId, (tx) => repo.listRentals(tx, { tenantId: c.tenantId, role: q.role ?? 'renter', status: q.status, after, limit: limit + 1 }));
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { rentals: page.map((r) => toRental(r, c.tenantId)), next_cursor: rows.length > limit && last ? encodeKeyset(last.createdAt, last.id) : null };
  }

  /** One rental (either party); the renter also gets its SPT while active. @throws 404. */
  async get(c: MarketCaller, id: string): Promise<Rental> {
    const r = await withTenant(this.deps.db, c.tenantId, (tx) => repo.getRental(tx, id));
    if (!r) throw notFound('rental');
    return this.view(r, c.tenantId);
  }

  /** active -> completed by the renter. @throws 404; 403 the developer; 409 not active. */
  complete(c: MarketCaller, id: string): Promise<Rental> {
    return this.renterTransition(c, id, async (tx, r) => {
      if (r.status !== 'active') throw conflict(`only an active rental can be completed; this one is ${r.status}`);
      return this.end(tx, r, 'completed', 'completed_by_renter');
    });
  }

  /**
   * Cancel by the renter (pending or active -> cancelled) with the refund of design §8.24.
   * @throws 404; 403 the developer; 409 other states; 502 the processor refused the refund.
   */
  cancel(c: MarketCaller, id: string): Promise<Rental> {
    return this.renterTransition(c, id, async (tx, r) => {
      if (r.status !== 'active' && r.status !== 'pending') throw conflict(`only a pending or active rental can be cancelled; this one is ${r.status}`);
      const refund = r.status === 'active' ? cancellationRefund({ ...r, pricingModel: r.pricingModel as PricingModel }, new Date()) : 0;
      const refunded = refund > 0 ? (await this.refundIn(tx, r, refund)).row : r;
      return this.end(tx, refunded, 'cancelled', 'cancelled_by_renter', { refund_cents: refund });
    });
  }

  /** Complete every active rental whose term has ended (the term job; cross-tenant). Answers how many. */
  async completeDue(now = new Date(), batch = 100): Promise<number> {
    const due = await crossTenant(this.deps.db, 'rental term job: rentals of every tenant', (tx) => repo.dueRentals(tx, now, batch));
    let n = 0;
    for (const d of due) {
      const row = await withTenant(this.deps.db, d.tenantId, async (tx) => {
        await lockChains(tx, [d.tenantId, d.partnerTenantId]);
        const r = await repo.getRental(tx, d.id, true);
        if (!r || r.status !== 'active' || !r.endsAt || r.endsAt > now) return null;
        return this.end(tx, r, 'completed', 'term_ended');
      });
      if (row) {
        n++;
        await this.notify(row, 'active');
      }
    }
    return n;
  }

  /**
   * Refund `cents` of a rental's charge inside `tx` (renter scope, row locked): the processor
   * first (idempotency key per rental and cumulative amount), then the ledger and the row.
   * @throws 502 when the processor fails (the caller's transaction then rolls back).
   */
  async refundIn(tx: Tx, r: repo.RentalRow, cents: number): Promise<{ row: repo.RentalRow }> {
    if (cents <= 0) return { row: r };
    if (!r.chargeId) throw conflict('the rental has no captured charge to refund');
    const reference = `${r.id}:${r.refundedCents + cents}`;
    try {
      await this.deps.processor.refund({ chargeId: r.chargeId, amountCents: cents, metadata: { rental_id: r.id }, idempotencyKey: `rental-refund:${reference}` });
    } catch (err) {
      throw err instanceof ProcessorError ? processorFailed(err) : err;
    }
    await ledger.post(tx, { kind: 'refund', reference, rentalId: r.id, postings: ledger.refundPostings(r.tenantId, r.partnerTenantId, cents, r) });
    const [row] = await repo.updateRental(tx, r.id, { refundedCents: r.refundedCents + cents });
    return { row: row! };
  }

  /** Move `r` to a final or dispute state inside `tx`: revoke its SPT, audit in both chains. */
  async end(tx: Tx, r: repo.RentalRow, status: keyof typeof END_EVENTS, reason: string, data: Record<string, unknown> = {}): Promise<repo.RentalRow> {
    await this.revokeGrant(tx, r, reason);
    const final = status !== 'suspended';
    if (final) await repo.dropSuspensionHeld(tx, r.id);
    const [row] = await repo.updateRental(tx, r.id, { status, reason, ...(final ? { endedAt: new Date() } : { suspendedAt: new Date() }) });
    const type = END_EVENTS[status as keyof typeof END_EVENTS];
    await this.audit(tx, r, { row: row!, type, data: { from: r.status, to: status, reason, ...data } });
    return row!;
  }

  /** suspended -> active inside `tx` (the monitor, the agent is back): a new SPT until the rental's end; audited in both chains. */
  async resumeIn(tx: Tx, r: repo.RentalRow): Promise<repo.RentalRow> {
    const endsAt = r.endsAt ?? new Date(Date.now() + 3_600_000);
    const grantId = endsAt.getTime() > Date.now() ? (await this.issueGrant(tx, r, endsAt)).grantId : null;
    const [row] = await repo.updateRental(tx, r.id, { status: 'active', reason: null, grantId, suspendedAt: null });
    await this.audit(tx, r, { row: row!, type: 'rental.resumed', data: { from: 'suspended', to: 'active' } });
    return row!;
  }

  /** Issue the renter's SPT in the developer's scope (switching and back); answers it and the agent device the room joins. */
  private async issueGrant(tx: Tx, r: repo.RentalRow, expiresAt: Date): Promise<{ grantId: string | null; agentDeviceId: string | null }> {
    await switchTenant(tx, r.partnerTenantId);
    try {
      const identity = await getHubIdentity(tx, r.identityId);
      const listing = await listingsRepo.getListing(tx, r.listingId);
      if (!identity?.deviceId) return { grantId: null, agentDeviceId: null };
      const g = await issueRentalGrant(tx, this.deps.tokens, {
        developerTenantId: r.partnerTenantId,
        deviceId: identity.deviceId,
        hubAddress: identity.hubAddress,
        tier: identity.trustTier,
        skills: (listing?.capabilities as string[] | undefined) ?? [],
        audience: this.deps.publicUrl,
        rentalId: r.id,
        expiresAt,
      });
      return { grantId: g.jti, agentDeviceId: identity.deviceId };
    } finally {
      await switchTenant(tx, r.tenantId);
    }
  }

  /** Revoke the rental's SPT (developer scope, then back to the renter's). */
  async revokeGrant(tx: Tx, r: repo.RentalRow, reason: string): Promise<void> {
    if (!r.grantId) return;
    await switchTenant(tx, r.partnerTenantId);
    try {
      await revokeRentalGrant(tx, r.grantId, `rental ${reason}`);
    } finally {
      await switchTenant(tx, r.tenantId);
    }
  }

  /** Append the step's event to both tenants' chains (`tx` in the renter's scope). */
  async audit(tx: Tx, r: repo.RentalRow, s: Step, actor = 'system', actingTenant = r.tenantId): Promise<void> {
    const other = actingTenant === r.tenantId ? r.partnerTenantId : r.tenantId;
    await appendAuditToParties(tx, r.tenantId, twoPartyEvents(actingTenant, other, actor, { type: s.type, subject: r.id, data: { status: s.row.status, ...s.data } }));
  }

  /** `rental_updated` to both tenants' owner sockets and webhooks (after commit). */
  async notify(r: repo.RentalRow, previous?: string): Promise<void> {
    const base = { rental_id: r.id, listing_id: r.listingId, status: r.status, previous_status: previous ?? null, reason: r.reason };
    await this.deps.notifier.toOwners(r.tenantId, 'rental_updated', { ...base, role: 'renter' });
    await this.deps.notifier.toOwners(r.partnerTenantId, 'rental_updated', { ...base, role: 'developer' });
  }

  /** The renter and developer tenants of a rental (cross-tenant lookup for event handlers), or null. */
  private async partiesOf(rentalId: string, tx0?: Tx): Promise<{ renter: string; developer: string } | null> {
    const look = async (tx: Tx) => {
      const r = await repo.getRental(tx, rentalId);
      return r ? { renter: r.tenantId, developer: r.partnerTenantId } : null;
    };
    return tx0 ? look(tx0) : crossTenant(this.deps.db, 'processor events name a rental, not a tenant', look);
  }

  private async view(r: repo.RentalRow, tenantId: string): Promise<Rental> {
    const out = toRental(r, tenantId);
    if (out.role !== 'renter' || r.status !== 'active' || !r.grantId) return out;
    const g = await withTenant(this.deps.db, r.partnerTenantId, (tx) => rentalGrantToken(tx, this.deps.tokens, r.grantId!));
    return g ? { ...out, grant: { grant_id: g.jti, spt_token: g.token, expires_at: g.expiresAt.toISOString() } } : out;
  }

  /** Lock a rental in the renter's scope, run `fn` (renter only), notify after commit. */
  private async renterTransition(c: MarketCaller, id: string, fn: (tx: Tx, r: repo.RentalRow) => Promise<repo.RentalRow>): Promise<Rental> {
    const { row, previous } = await withTenant(this.deps.db, c.tenantId, async (tx) => {
      const peek = await repo.getRental(tx, id);
      if (!peek) throw notFound('rental');
      if (peek.tenantId !== c.tenantId) throw forbidden('only the renter can do this');
      await lockChains(tx, [peek.tenantId, peek.partnerTenantId]);
      const r = (await repo.getRental(tx, id, true))!;
      return { row: await fn(tx, r), previous: r.status };
    });
    await this.notify(row, previous);
    return this.view(row, c.tenantId);
  }
}
