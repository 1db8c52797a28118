/**
 * Database schema (drizzle-orm). Every tenant-owned table carries `tenant_id` and is protected by
 * the row-level security policy of DESIGN §4, created in the SQL migration `0001_rls.sql`.
 * Tables without `tenant_id` (`signing_keys`) are platform tables the application role cannot read.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/** `bytea` as a Node Buffer (pg returns Buffer, PGlite Uint8Array: both normalised to Buffer). */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v)),
  toDriver: (v) => v,
});

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

/** Owner users of a tenant (DESIGN §5: tenant resolution by membership). */
export const memberships = pgTable(
  'memberships',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    userSub: text('user_sub').notNull(),
    role: text('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userSub] }), index('memberships_user_sub_idx').on(t.userSub)],
);

/** SPEC §2.2. `status` stores active|revoked|consumed; `expired` is derived from `expires_at`. */
export const invites = pgTable(
  'invites',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    label: text('label'),
    status: text('status').notNull().default('active'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    revokedAt: ts('revoked_at'),
    deletedAt: ts('deleted_at'),
    deviceId: uuid('device_id'),
  },
  (t) => [uniqueIndex('invites_token_hash_idx').on(t.tokenHash), index('invites_tenant_idx').on(t.tenantId)],
);

/** SPEC §2.3. `kind` is owner|agent; owner devices carry the owner's `owner_sub`. */
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
  },
  (t) => [index('devices_tenant_idx').on(t.tenantId, t.kind)],
);

/** Server-issued challenges for device-token renewal (DESIGN §5), single use. */
export const deviceChallenges = pgTable('device_challenges', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
  deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
  challenge: text('challenge').notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
  createdAt: createdAt(),
});

/** A conversation group (`message_group_id`): one agent device and its conversations (DESIGN §7). */
export const conversationGroups = pgTable('conversation_groups', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
  agentDeviceId: uuid('agent_device_id').notNull(),
  createdAt: createdAt(),
});

/** A pairwise conversation: `agent_device_id` and `owner_device_id` (DESIGN §7). */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull().references(() => conversationGroups.id, { onDelete: 'cascade' }),
    agentDeviceId: uuid('agent_device_id').notNull(),
    ownerDeviceId: uuid('owner_device_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('conversations_pair_idx').on(t.agentDeviceId, t.ownerDeviceId),
    index('conversations_tenant_idx').on(t.tenantId),
    index('conversations_owner_idx').on(t.ownerDeviceId),
  ],
);

export const topics = pgTable(
  'topics',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull().references(() => conversationGroups.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    archived: boolean('archived').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index('topics_group_idx').on(t.groupId)],
);

/**
 * SPEC §2.4 messages. `seq` is a global identity column giving a total order for cursors;
 * `recipient_device_id` is the other side of the pairwise conversation; `delivered_at` is set
 * once the message reached a socket of the recipient or was fetched by it.
 */
export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id').notNull(),
    topicId: uuid('topic_id').notNull(),
    senderDeviceId: uuid('sender_device_id').notNull(),
    recipientDeviceId: uuid('recipient_device_id').notNull(),
    headerBlob: bytea('header_blob').notNull(),
    ciphertext: bytea('ciphertext').notNull(),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    createdAt: ts('created_at').notNull().default(sql`now()`),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [
    uniqueIndex('messages_seq_idx').on(t.seq),
    index('messages_conversation_seq_idx').on(t.conversationId, t.seq),
    index('messages_undelivered_idx').on(t.recipientDeviceId).where(sql`delivered_at is null`),
  ],
);

/** The service's own JWT signing keys (device JWTs), shared by every instance. Platform table. */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  privateJwk: text('private_jwk').notNull(),
  publicJwk: text('public_jwk').notNull(),
  active: boolean('active').notNull().default(true),
  createdAt: createdAt(),
});

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
    createdAt: createdAt(),
    claimedAt: ts('claimed_at'),
    claimedBy: uuid('claimed_by'),
  },
  (t) => [index('mls_key_packages_available_idx').on(t.deviceId, t.createdAt).where(sql`claimed_at is null`)],
);

/**
 * API keys (SPEC §2.6, §4.8): `svc_agent_sk_{env}_{64 hex}`; only the BLAKE2b-256 hash is
 * stored. `device_id` is the device bound on first use (trust on first use); deleting the key
 * deletes that device.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    env: text('env').notNull(),
    keyHash: text('key_hash').notNull(),
    /** The first characters of the raw key, for recognising it in lists (`svc_agent_sk_dev_1a2b…`). */
    prefix: text('prefix').notNull(),
    status: text('status').notNull().default('active'),
    deviceId: uuid('device_id'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    revokedAt: ts('revoked_at'),
    rotatedFrom: uuid('rotated_from'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_idx').on(t.keyHash), index('api_keys_tenant_idx').on(t.tenantId)],
);

/** Encrypted attachments (SPEC §2.5, §4.7): metadata here, bytes in the blob store. */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    contentType: text('content_type').notNull(),
    storageKey: text('storage_key').notNull(),
    uploadedByDevice: uuid('uploaded_by_device'),
    uploadedBySub: text('uploaded_by_sub'),
    createdAt: createdAt(),
  },
  (t) => [index('attachments_tenant_idx').on(t.tenantId)],
);

/** Mobile push tokens per device (SPEC §4.7). */
export const pushTokens = pgTable(
  'push_tokens',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    platform: text('platform').notNull(),
    token: text('token').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('push_tokens_device_token_idx').on(t.deviceId, t.token)],
);
