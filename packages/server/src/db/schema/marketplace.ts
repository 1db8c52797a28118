/**
 * Marketplace (contract §2.13, §3.6–§3.8, §4.16; design §8.23–§8.26, §8.35): listings, rentals,
 * disputes and their notes, payouts, connected processor accounts, default payment methods, the
 * double-entry ledger and the processed-event registry of the payment processor.
 *
 * - `marketplace_listings` is a tenant table whose PUBLISHED rows every scope may read (a second,
 *   SELECT-only RLS policy, migration 0021): search runs under RLS like every other query.
 * - `marketplace_rentals`, `marketplace_disputes` and `marketplace_dispute_notes` are two-party
 *   rows (`tenant_id` = the renter, `partner_tenant_id` = the developer who owns the listing),
 *   visible to both, like federation agreements.
 * - `ledger_transactions`, `ledger_entries` and `processor_events` are platform tables (the money
 *   of every tenant and the platform's own accounts), reached through `crossTenant` by the ledger
 *   and the webhook handler only; so is `local_processor_events`, the embedded processor's own.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts, tsvector } from './columns.js';
import { tenants } from './tenants.js';
import { workspaces } from './workspaces.js';
import { hubIdentities } from './hub.js';

/** Listings (design §8.23): status draft | published | paused | delisted. */
export const marketplaceListings = pgTable(
  'marketplace_listings',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    identityId: uuid('identity_id').notNull().references(() => hubIdentities.id, { onDelete: 'cascade' }),
    hubAddress: text('hub_address').notNull(),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    category: text('category').notNull(),
    capabilities: jsonb('capabilities').notNull().default([]),
    pricingModel: text('pricing_model').notNull(),
    priceCents: integer('price_cents').notNull(),
    currency: text('currency').notNull().default('usd'),
    sla: jsonb('sla').notNull().default({}),
    termHours: integer('term_hours'),
    minTier: text('min_tier').notNull().default('certified'),
    minScore: doublePrecision('min_score'),
    status: text('status').notNull().default('draft'),
    /** The identity's live tier and composite score, kept by a trigger on hub_identities (migration 0021) so that other tenants' searches need not read hub_identities. */
    trustTier: text('trust_tier').notNull().default('unverified'),
    trustScore: doublePrecision('trust_score'),
    /**
     * The identity is one verify-agent calls `suspended` (suspended, or its bound device revoked or
     * deleted), kept by triggers on hub_identities and devices (migration 0045): the catalogue
     * leaves such listings out without reading other tenants' identities.
     */
    agentSuspended: boolean('agent_suspended').notNull().default(false),
    searchDocument: tsvector('search_document'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    publishedAt: ts('published_at'),
    delistedAt: ts('delisted_at'),
  },
  (t) => [
    index('marketplace_listings_tenant_idx').on(t.tenantId),
    index('marketplace_listings_status_idx').on(t.status, t.publishedAt, t.id),
    index('marketplace_listings_search_idx').using('gin', t.searchDocument),
    index('marketplace_listings_capabilities_idx').using('gin', t.capabilities),
  ],
);

/**
 * Rentals (contract §3.6, design §8.9/§8.35): pending | active | suspended | completed | cancelled |
 * disputed | resolved. Two-party: `tenant_id` renter, `partner_tenant_id` developer. Money is
 * integer cents; `amount_cents` is what the renter was charged, `fee_cents` the platform's part.
 */
export const marketplaceRentals = pgTable(
  'marketplace_rentals',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    listingId: uuid('listing_id').notNull().references(() => marketplaceListings.id, { onDelete: 'cascade' }),
    identityId: uuid('identity_id').notNull(),
    hubAddress: text('hub_address').notNull(),
    agentDeviceId: uuid('agent_device_id'),
    status: text('status').notNull().default('pending'),
    paymentMethod: text('payment_method').notNull(),
    pricingModel: text('pricing_model').notNull(),
    priceCents: integer('price_cents').notNull(),
    amountCents: integer('amount_cents').notNull(),
    feeCents: integer('fee_cents').notNull(),
    refundedCents: integer('refunded_cents').notNull().default(0),
    currency: text('currency').notNull().default('usd'),
    termHours: integer('term_hours'),
    processor: text('processor').notNull(),
    chargeId: text('charge_id'),
    /** The SPT issued to the renter (skill_grants.id), revoked on suspension and at the end. */
    grantId: uuid('grant_id'),
    /** The renter's owner device the grant and the rental room are bound to (X-Device-Id at creation). */
    renterDeviceId: uuid('renter_device_id'),
    /** Why a rental ended or was suspended (payment_failed, trust_drop, term_ended, …). */
    reason: text('reason'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    startsAt: ts('starts_at'),
    endsAt: ts('ends_at'),
    activatedAt: ts('activated_at'),
    suspendedAt: ts('suspended_at'),
    endedAt: ts('ended_at'),
    taskStartedAt: ts('task_started_at'),
  },
  (t) => [
    index('marketplace_rentals_tenant_idx').on(t.tenantId, t.status),
    index('marketplace_rentals_partner_idx').on(t.partnerTenantId, t.status),
    index('marketplace_rentals_identity_idx').on(t.identityId, t.status),
    index('marketplace_rentals_ends_idx').on(t.status, t.endsAt),
    uniqueIndex('marketplace_rentals_charge_idx').on(t.processor, t.chargeId),
  ],
);

/**
 * The rental room's messages (contract §4.16 "renting creates a cross-tenant encrypted room"): one row
 * per envelope (pairwise, one ciphertext per recipient) between the renter's owner devices and the
 * rented agent; two-party like the rental. `outcome` delivered | notified | held | blocked
 * (blocked and denied rows keep no ciphertext); `hold_reason` policy | suspension.
 */
export const marketplaceRentalMessages = pgTable(
  'marketplace_rental_messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    rentalId: uuid('rental_id').notNull().references(() => marketplaceRentals.id, { onDelete: 'cascade' }),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id').notNull(),
    headerBlob: bytea('header_blob'),
    ciphertext: bytea('ciphertext'),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    outcome: text('outcome').notNull(),
    holdReason: text('hold_reason'),
    createdAt: createdAt(),
    releasedAt: ts('released_at'),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [index('marketplace_rental_messages_rental_idx').on(t.rentalId, t.seq)],
);

/** Disputes (contract §2.13, design §8.25): open | resolved; outcome refund | partial | none. Two-party like the rental. */
export const marketplaceDisputes = pgTable(
  'marketplace_disputes',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    rentalId: uuid('rental_id').notNull().references(() => marketplaceRentals.id, { onDelete: 'cascade' }),
    filedByTenantId: uuid('filed_by_tenant_id').notNull(),
    filedBy: text('filed_by').notNull(),
    reason: text('reason').notNull(),
    evidenceRefs: jsonb('evidence_refs').notNull().default([]),
    status: text('status').notNull().default('open'),
    outcome: text('outcome'),
    amountCents: integer('amount_cents'),
    resolutionNote: text('resolution_note'),
    resolvedBy: text('resolved_by'),
    createdAt: createdAt(),
    resolvedAt: ts('resolved_at'),
  },
  (t) => [uniqueIndex('marketplace_disputes_rental_idx').on(t.rentalId), index('marketplace_disputes_status_idx').on(t.status, t.createdAt)],
);

/** Notes and further evidence added to a dispute by either party. */
export const marketplaceDisputeNotes = pgTable(
  'marketplace_dispute_notes',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    disputeId: uuid('dispute_id').notNull().references(() => marketplaceDisputes.id, { onDelete: 'cascade' }),
    authorTenantId: uuid('author_tenant_id').notNull(),
    author: text('author').notNull(),
    note: text('note').notNull(),
    evidenceRefs: jsonb('evidence_refs').notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [index('marketplace_dispute_notes_dispute_idx').on(t.disputeId, t.createdAt)],
);

/** Payouts (contract §3.8): pending | completed | failed, one per developer tenant per run. */
export const marketplacePayouts = pgTable(
  'marketplace_payouts',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    amountCents: integer('amount_cents').notNull(),
    currency: text('currency').notNull().default('usd'),
    status: text('status').notNull().default('pending'),
    processor: text('processor').notNull(),
    accountId: text('account_id').notNull(),
    transferId: text('transfer_id'),
    failureReason: text('failure_reason'),
    runId: uuid('run_id').notNull(),
    createdAt: createdAt(),
    completedAt: ts('completed_at'),
  },
  (t) => [index('marketplace_payouts_tenant_idx').on(t.tenantId, t.createdAt), uniqueIndex('marketplace_payouts_run_idx').on(t.runId, t.tenantId)],
);

/** A tenant's connected account at the payment processor (design §8.26): status onboarding | ready. */
export const connectedAccounts = pgTable('marketplace_connected_accounts', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  processor: text('processor').notNull(),
  accountId: text('account_id').notNull(),
  status: text('status').notNull().default('onboarding'),
  createdAt: createdAt(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** The tenant's default payment method (design §8.29: `PUT /marketplace/payment-method`). */
export const paymentMethods = pgTable('marketplace_payment_methods', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  paymentMethod: text('payment_method').notNull(),
  setBy: text('set_by').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * Ledger transactions (design §8.24): one per money movement (charge, refund, payout,
 * payout_reversal), unique per (kind, reference) so a retried step posts nothing twice.
 */
export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    kind: text('kind').notNull(),
    reference: text('reference').notNull(),
    rentalId: uuid('rental_id'),
    payoutId: uuid('payout_id'),
    memo: text('memo'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('ledger_transactions_ref_idx').on(t.kind, t.reference)],
);

/**
 * Ledger entries (design §8.24): signed integer cents on one account, optionally of one tenant;
 * the entries of a transaction sum to zero. Accounts: renter_charges, platform_fees,
 * developer_payable, refunds, payouts, processor_clearing.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    transactionId: uuid('transaction_id')
      .notNull()
      .references(() => ledgerTransactions.id, { onDelete: 'restrict' }),
    account: text('account').notNull(),
    /** The tenant whose balance the entry moves (renter, developer), null for platform accounts; not `tenant_id`: the ledger is a platform table, not a tenant one. */
    partyTenantId: uuid('party_tenant_id'),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('ledger_entries_tx_idx').on(t.transactionId), index('ledger_entries_account_idx').on(t.account, t.partyTenantId)],
);

/** Payment-processor events processed once (design §8.26), by (processor, event id). */
export const processorEvents = pgTable(
  'processor_events',
  {
    processor: text('processor').notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.processor, t.eventId] })],
);

/**
 * Events the embedded local payment processor has promised and not delivered yet (design §8.26;
 * payments/local.ts): a `pm_card_async` charge's confirmation, a transfer's settlement. A row
 * stays undelivered until the handler accepted the event, so a restart delivers it. A platform
 * table (processor ids and metadata, no tenant data), reached through `crossTenant`.
 */
export const localProcessorEvents = pgTable(
  'local_processor_events',
  {
    eventId: text('event_id').primaryKey(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    deliverAt: ts('deliver_at').notNull(),
    deliveredAt: ts('delivered_at'),
    createdAt: createdAt(),
  },
  (t) => [index('local_processor_events_pending_idx').on(t.deliverAt).where(sql`delivered_at is null`)],
);
