/**
 * Platform tables (no `tenant_id`, no grant to the application role; no contract section of their own):
 * the JWT signing keys (design §5), the non-JWT platform keys such as the VC issuer key
 * (contract §2.10; design §8.16) and the cluster-wide schedule of periodic jobs (design §8 "jobs").
 */
import { boolean, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';

/** The service's own JWT signing keys (device JWTs), shared by every instance. Platform table. */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  privateJwk: text('private_jwk').notNull(),
  publicJwk: text('public_jwk').notNull(),
  active: boolean('active').notNull().default(true),
  createdAt: createdAt(),
});

/**
 * The service's own non-JWT keys, one per `purpose` (today `vc-issuer`: the Ed25519 key that signs
 * TrustTierCredentials under the platform DID, design §8.16), shared by every instance. Platform
 * table (no tenant_id; the application role has no grant on it). Keys are multibase
 * (`z` + base58btc of the multicodec-prefixed key, as Ed25519VerificationKey2020 exports them).
 */
export const platformKeys = pgTable('platform_keys', {
  purpose: text('purpose').primaryKey(),
  publicKeyMultibase: text('public_key_multibase').notNull(),
  privateKeyMultibase: text('private_key_multibase').notNull(),
  /** The key's name where a format names keys (the audit log's C2SP key name `<host>/audit-log`); null otherwise. */
  keyName: text('key_name'),
  createdAt: createdAt(),
});

/**
 * Cluster-wide schedule of periodic jobs (platform table, no tenant_id): a run is claimed by the
 * one instance whose `UPDATE … WHERE next_run_at <= now() RETURNING` succeeds (design §8 "jobs").
 */
export const scheduledJobs = pgTable('scheduled_jobs', {
  name: text('name').primaryKey(),
  nextRunAt: ts('next_run_at').notNull(),
  lastRunAt: ts('last_run_at'),
  lastRunBy: text('last_run_by'),
  lastResult: jsonb('last_result'),
});
