/**
 * Policies, held messages and policy evaluations (contract §2.7, §3.8, §4.9; design §8.3, §8.5).
 */
import { bigint, boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { tenants } from './tenants.js';
import { rooms, roomEnvelopes } from './rooms.js';

/**
 * Policies (contract §2.7, §4.9; design §8.5): `conditions` is the JSON condition object, `action`
 * allow | block | hold | notify, `scope_room_id` / `scope_skill` narrow it (both null = tenant-wide).
 */
export const policies = pgTable(
  'policies',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    scopeRoomId: uuid('scope_room_id').references(() => rooms.id, { onDelete: 'cascade' }),
    scopeSkill: text('scope_skill'),
    priority: integer('priority').notNull().default(0),
    conditions: jsonb('conditions').notNull().default({}),
    action: text('action').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('policies_tenant_idx').on(t.tenantId)],
);

/**
 * Held messages (contract §3.8; design §8.3): `held` -> `approved` | `denied` | `expired` (72 h).
 * Points at the held room envelope or A2A message, which keeps the ciphertext until decided.
 */
export const heldMessages = pgTable(
  'held_messages',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomId: uuid('room_id').references(() => rooms.id, { onDelete: 'cascade' }),
    envelopeId: uuid('envelope_id').references(() => roomEnvelopes.id, { onDelete: 'cascade' }),
    channelId: uuid('channel_id'),
    a2aMessageId: uuid('a2a_message_id'),
    /** A held message of a marketplace rental room (its rental and message). */
    rentalId: uuid('rental_id'),
    rentalMessageId: uuid('rental_message_id'),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id'),
    policyId: uuid('policy_id'),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    status: text('status').notNull().default('held'),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    decidedAt: ts('decided_at'),
    decidedBy: text('decided_by'),
  },
  (t) => [index('held_messages_status_idx').on(t.tenantId, t.status, t.expiresAt)],
);

/**
 * `svc.policy.evaluate` records: one row per (message, recipient)
 * evaluation whose outcome is NOT `allow` (block, hold, notify), read by trust scoring (compliance
 * dimension, contract §2.9) and the compliance report. Allowed deliveries are counted in
 * {@link policyAllowCounts} instead (older rows may still have outcome `allow`;
 * readers count them too). `matched_policy_ids` lists every matching enabled policy; `policy_id`
 * is the one whose action won (null = default).
 */
export const policyEvaluations = pgTable(
  'policy_evaluations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    subjectKind: text('subject_kind').notNull(),
    subjectId: uuid('subject_id').notNull(),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id'),
    outcome: text('outcome').notNull(),
    policyId: uuid('policy_id'),
    matchedPolicyIds: jsonb('matched_policy_ids').notNull().default([]),
    durationUs: integer('duration_us').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('policy_evaluations_sender_idx').on(t.tenantId, t.senderDeviceId, t.createdAt)],
);

/**
 * Allowed policy evaluations, counted: one row per (policy decision call, sender,
 * subject kind) with how many of its evaluations were `allow`. `created_at` is the deciding
 * transaction's time, which is exactly the `created_at` the per-delivery `policy_evaluations` rows
 * had, so every time-range count (trust days, report periods) equals the count of those rows.
 */
export const policyAllowCounts = pgTable(
  'policy_allow_counts',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    subjectKind: text('subject_kind').notNull(),
    senderDeviceId: uuid('sender_device_id').notNull(),
    allows: integer('allows').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('policy_allow_counts_sender_idx').on(t.tenantId, t.senderDeviceId, t.createdAt)],
);

/**
 * The version of each tenant's policy set: bumped by a trigger on every insert, update
 * and delete of `policies` (migration 0029), whoever writes. The policy engine's compiled-rule
 * cache compares it on every decision (policies/compiled.ts). No foreign key: the trigger also
 * fires while a tenant's rows are cascade-deleted.
 */
export const policyEpochs = pgTable('policy_epochs', {
  tenantId: uuid('tenant_id').primaryKey(),
  epoch: bigint('epoch', { mode: 'number' }).notNull(),
});
