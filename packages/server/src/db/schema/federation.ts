/**
 * Federation agreements and agent-to-agent channels and messages (contract §2.11, §2.12, §3.5).
 * These two-party tables carry `tenant_id` (initiator / proposer) and `partner_tenant_id`
 * (responder / partner) and are visible to both tenants (`parley_enable_two_party_rls`,
 * migration 0007).
 */
import { bigint, boolean, doublePrecision, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts } from './columns.js';
import { marketplaceRentals } from './marketplace.js';
import { tenants } from './tenants.js';

/**
 * Federation agreements (contract §2.12): proposed by `tenant_id`, accepted by `partner_tenant_id`.
 * `status` pending | active | revoked; expiry is derived from `expires_at`. A renewal asked by one
 * party waits in `renewal_expires_at` / `renewal_by` for the other party's accept.
 */
export const federationAgreements = pgTable(
  'federation_agreements',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    trustFloor: doublePrecision('trust_floor').notNull(),
    allowedCapabilities: jsonb('allowed_capabilities').notNull().default([]),
    auditSharing: boolean('audit_sharing').notNull().default(false),
    status: text('status').notNull().default('pending'),
    expiresAt: ts('expires_at').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    acceptedAt: ts('accepted_at'),
    acceptedBy: text('accepted_by'),
    revokedAt: ts('revoked_at'),
    /** A renewal one party asked for (the new expiry) and which party asked (its tenant id); it applies when the other party accepts. */
    renewalExpiresAt: ts('renewal_expires_at'),
    renewalBy: uuid('renewal_by'),
  },
  (t) => [index('federation_agreements_tenant_idx').on(t.tenantId), index('federation_agreements_partner_idx').on(t.partnerTenantId)],
);

/**
 * Agent-to-agent channels (contract §2.11, §3.5): initiator side in `tenant_id`, responder side in
 * `partner_tenant_id` (equal for a same-tenant channel). Status pending | approved | active |
 * rejected | revoked. A federated channel is backed by a federation agreement (`agreement_id`)
 * or, when the initiator's tenant rents the responder's identity, by that marketplace rental
 * (`rental_id`; docs/decisions.md "A2A channels backed by rentals").
 */
export const a2aChannels = pgTable(
  'a2a_channels',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    initiatorHubAddress: text('initiator_hub_address').notNull(),
    responderHubAddress: text('responder_hub_address').notNull(),
    initiatorDeviceId: uuid('initiator_device_id').notNull(),
    responderDeviceId: uuid('responder_device_id').notNull(),
    conversationId: uuid('conversation_id'),
    capability: text('capability'),
    agreementId: uuid('agreement_id').references(() => federationAgreements.id, { onDelete: 'set null' }),
    rentalId: uuid('rental_id').references(() => marketplaceRentals.id, { onDelete: 'set null' }),
    status: text('status').notNull().default('pending'),
    initiatorKeysAt: ts('initiator_keys_at'),
    responderKeysAt: ts('responder_keys_at'),
    createdAt: createdAt(),
    approvedAt: ts('approved_at'),
    activatedAt: ts('activated_at'),
    closedAt: ts('closed_at'),
    closedReason: text('closed_reason'),
  },
  (t) => [index('a2a_channels_tenant_idx').on(t.tenantId), index('a2a_channels_partner_idx').on(t.partnerTenantId)],
);

/** Messages relayed on an A2A channel (ciphertext only; `traceparent` is W3C Trace Context). */
export const a2aMessages = pgTable(
  'a2a_messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    partnerTenantId: uuid('partner_tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    channelId: uuid('channel_id').notNull().references(() => a2aChannels.id, { onDelete: 'cascade' }),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id').notNull(),
    headerBlob: bytea('header_blob'),
    ciphertext: bytea('ciphertext'),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    traceparent: text('traceparent'),
    outcome: text('outcome').notNull(),
    createdAt: createdAt(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [index('a2a_messages_channel_seq_idx').on(t.channelId, t.seq)],
);
