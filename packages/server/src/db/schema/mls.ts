/**
 * The key directory: MLS KeyPackages (contract §1.3; RFC 9420 §10) and the post-quantum prekeys of the
 * X3DH fallback (PQXDH), and the X25519 signed and one-time prekeys of X3DH
 * (Signal, revision 1, §3.2). Opaque bytes to the service.
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { bytea, createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { devices } from './devices.js';

/**
 * MLS KeyPackages (RFC 9420 §10) published by a device and claimed one at a time by whoever adds
 * that device to a group. Opaque bytes to the service.
 */
export const mlsKeyPackages = pgTable(
  'mls_key_packages',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    keyPackage: bytea('key_package').notNull(),
    /** The ciphersuite label its publisher gave (RFC 9420 number; 3 = the classical suite, before X-Wing every KeyPackage's). */
    cipherSuite: integer('cipher_suite').notNull().default(3),
    createdAt: createdAt(),
    claimedAt: ts('claimed_at'),
    claimedBy: uuid('claimed_by'),
  },
  (t) => [index('mls_key_packages_available_idx').on(t.deviceId, t.createdAt).where(sql`claimed_at is null`)],
);

/** The kinds of prekey in {@link pqPrekeys}: PQXDH KEM prekeys and X3DH X25519 prekeys. */
export const PREKEY_KINDS = ['kem', 'x25519'] as const;
export type PrekeyKind = (typeof PREKEY_KINDS)[number];

/**
 * Prekeys of a device, by `kind`: signed post-quantum (KEM) prekeys of PQXDH (`kem`) and X25519
 * prekeys of X3DH (`x25519`). Per device and kind at most one `last_resort` prekey (the KEM
 * last-resort prekey, the X25519 signed prekey; replaced on publish, never consumed) and any number
 * of one-time prekeys (claimed once). `key_id`, `public_key` and `signature` are the client's,
 * stored as given; `signature` is null for X25519 one-time prekeys (unsigned, X3DH §3.2).
 */
export const pqPrekeys = pgTable(
  'pq_prekeys',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    publicKey: bytea('public_key').notNull(),
    kind: text('kind', { enum: PREKEY_KINDS }).notNull().default('kem'),
    signature: bytea('signature'),
    lastResort: boolean('last_resort').notNull(),
    createdAt: createdAt(),
    claimedAt: ts('claimed_at'),
    claimedBy: uuid('claimed_by'),
  },
  (t) => [
    uniqueIndex('pq_prekeys_last_resort_idx').on(t.deviceId, t.kind).where(sql`last_resort`),
    index('pq_prekeys_one_time_available_idx').on(t.deviceId, t.kind, t.createdAt).where(sql`claimed_at is null and not last_resort`),
  ],
);
