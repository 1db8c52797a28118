/**
 * Hub identities, their DID verification methods, capabilities and tier changes (contract §2.8,
 * §3.3; design §8.15), and the registry of issued verifiable credentials (contract §2.10; design §8.16).
 */
import { doublePrecision, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts, tsvector } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';
import { apiKeys } from './api-keys.js';

/**
 * Hub identities (contract §2.8): the platform-wide unique `hub_address` of an agent device.
 * The address registry, the identity's keys, profile and search document.
 */
export const hubIdentities = pgTable(
  'hub_identities',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    hubAddress: text('hub_address').notNull(),
    deviceId: uuid('device_id').references(() => devices.id, { onDelete: 'set null' }),
    /**
     * The API key created with this identity by `POST /hub/agents` (docs/decisions.md "Agent
     * self-registration"): while `device_id` is null, the key's first `client_key_register` binds
     * its new device here. Null for identities registered by `POST /hub/register`.
     */
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    displayName: text('display_name').notNull(),
    description: text('description'),
    publicKey: text('public_key'),
    capabilities: jsonb('capabilities').notNull().default([]),
    trustTier: text('trust_tier').notNull().default('unverified'),
    trustScore: doublePrecision('trust_score'),
    /** active | suspended (contract §4.11 verify status). */
    status: text('status').notNull().default('active'),
    /** The `timestamp` of the last accepted `PATCH /hub/{address}/did` (replay protection, design §8.15). */
    didUpdatedAt: ts('did_updated_at'),
    certifiedAt: ts('certified_at'),
    /** `computed` (trust engine / certify) or `operator` (design §8.25 operator certification). */
    tierSource: text('tier_source').notNull().default('computed'),
    /** The operator's tier grant: its reason and expiry (null: no grant, or no expiry). */
    tierGrantReason: text('tier_grant_reason'),
    tierGrantExpiresAt: ts('tier_grant_expires_at'),
    lastAttestationAt: ts('last_attestation_at'),
    /**
     * The signed A2A Agent Card its agent published (`PUT /hub/{address}/agent-card`), stored as
     * given once its JWS verified against the DID document; null until one is published.
     */
    agentCard: jsonb('agent_card'),
    agentCardUpdatedAt: ts('agent_card_updated_at'),
    /** Full-text search document over names, description and capabilities (kept by the hub service). */
    searchDocument: tsvector('search_document'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('hub_identities_address_idx').on(t.hubAddress),
    index('hub_identities_device_idx').on(t.deviceId),
    index('hub_identities_api_key_idx').on(t.apiKeyId),
    index('hub_identities_search_idx').using('gin', t.searchDocument),
  ],
);

/**
 * Verification methods of a hub identity's DID document beyond `#owner-key` (design §8.15):
 * `key_id` is `key-<n>`; `public_key_multibase` is `z` + base58btc(0xed 0x01 ‖ key).
 */
export const hubVerificationMethods = pgTable(
  'hub_verification_methods',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    identityId: uuid('identity_id').notNull().references(() => hubIdentities.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    type: text('type').notNull(),
    publicKeyMultibase: text('public_key_multibase').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('hub_verification_methods_key_idx').on(t.identityId, t.keyId)],
);

/** Registered capabilities of a hub identity (contract §2.8): JSON Schema input, SLA, certification tier. */
export const hubCapabilities = pgTable(
  'hub_capabilities',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    identityId: uuid('identity_id').notNull().references(() => hubIdentities.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    version: text('version').notNull(),
    description: text('description'),
    inputSchema: jsonb('input_schema').notNull(),
    sla: jsonb('sla'),
    certificationTier: text('certification_tier').notNull().default('unverified'),
    registeredAt: ts('registered_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('hub_capabilities_name_idx').on(t.identityId, t.name, t.version)],
);

/** Every trust-tier change of a hub identity (contract §3.3: recorded; certification checks kept). */
export const hubTierChanges = pgTable(
  'hub_tier_changes',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    identityId: uuid('identity_id').notNull().references(() => hubIdentities.id, { onDelete: 'cascade' }),
    fromTier: text('from_tier').notNull(),
    toTier: text('to_tier').notNull(),
    reason: text('reason').notNull(),
    checks: jsonb('checks').notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [index('hub_tier_changes_identity_idx').on(t.identityId, t.createdAt)],
);

/**
 * Verifiable credentials issued by the service (contract §2.10; design §8.16): the revocation
 * registry. `id` is the credential `id` (e.g. `urn:uuid:…`); `revoked_at` set = revoked.
 */
export const issuedCredentials = pgTable(
  'issued_credentials',
  {
    id: text('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    identityId: uuid('identity_id').references(() => hubIdentities.id, { onDelete: 'set null' }),
    type: text('type').notNull(),
    subject: text('subject').notNull(),
    issuedAt: ts('issued_at').notNull().defaultNow(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('issued_credentials_tenant_idx').on(t.tenantId)],
);
