/**
 * Devices (contract §2.3): enrolment, token-renewal challenges (design §5) and hourly presence
 * (contract §2.9 `uptime`, written with `last_seen` and read by the trust engine).
 */
import { boolean, index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';

/** contract §2.3. `kind` is owner|agent; owner devices carry the owner's `owner_sub`. */
export const devices = pgTable(
  'devices',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    identityPublicKey: text('identity_public_key').notNull(),
    ephemeralPublicKey: text('ephemeral_public_key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    name: text('name').notNull(),
    platform: text('platform'),
    ownerSub: text('owner_sub'),
    inviteId: uuid('invite_id'),
    webhookUrl: text('webhook_url'),
    webhookSecret: text('webhook_secret'),
    enrolledAt: createdAt(),
    approvedAt: ts('approved_at'),
    activatedAt: ts('activated_at'),
    revokedAt: ts('revoked_at'),
    deletedAt: ts('deleted_at'),
    lastSeen: ts('last_seen'),
    /** The device sends read receipts (the tenant's `read_receipts_enabled` setting can still turn them off). */
    readReceipts: boolean('read_receipts').notNull().default(true),
  },
  (t) => [index('devices_tenant_idx').on(t.tenantId, t.kind), index('devices_identity_public_key_idx').on(t.identityPublicKey)],
);

/**
 * Spent device-token renewal challenges (design §5). Challenges themselves are stateless (HMAC,
 * auth/renewal-challenges.ts); a row is written only by a renewal whose identity-key signature
 * verified, and lives until the challenge expires, so each challenge renews once.
 */
export const deviceChallenges = pgTable('device_challenges', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
  deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
  challenge: text('challenge').notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
  createdAt: createdAt(),
});

/**
 * Device presence by hour (contract §2.9 `uptime`, design §8.2): one row per device and UTC hour in
 * which the device was seen; written with `last_seen` (throttled), read by the trust engine.
 */
export const devicePresence = pgTable(
  'device_presence',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    hour: ts('hour').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.hour] }), index('device_presence_tenant_idx').on(t.tenantId, t.hour)],
);

/**
 * Spent key-binding nonces (docs/decisions.md "Key bindings"; modules/key-binding). Nonces are
 * stateless (HMAC, auth/stateless-challenges.ts); a row is written only by the registration or
 * activation whose binding verified, in its transaction, and lives until the nonce expires, so
 * each nonce binds once.
 */
export const keyBindingNonces = pgTable(
  'key_binding_nonces',
  {
    nonce: text('nonce').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    purpose: text('purpose').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at').notNull().defaultNow(),
  },
  (t) => [index('key_binding_nonces_tenant_expires_idx').on(t.tenantId, t.expiresAt)],
);
