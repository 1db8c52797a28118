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
  doublePrecision,
  integer,
  jsonb,
  index,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/** PostgreSQL `tsvector` (full-text search documents), read and written as text. */
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

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

/**
 * Spent device-token renewal challenges (DESIGN §5). Challenges themselves are stateless (HMAC,
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
 * The service's own non-JWT keys, one per `purpose` (today `vc-issuer`: the Ed25519 key that signs
 * TrustTierCredentials under the platform DID, DESIGN §8.16), shared by every instance. Platform
 * table (no tenant_id; the application role has no grant on it). Keys are multibase
 * (`z` + base58btc of the multicodec-prefixed key, as Ed25519VerificationKey2020 exports them).
 */
export const platformKeys = pgTable('platform_keys', {
  purpose: text('purpose').primaryKey(),
  publicKeyMultibase: text('public_key_multibase').notNull(),
  privateKeyMultibase: text('private_key_multibase').notNull(),
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

// ---------------------------------------------------------------------------------------------
// Issue 4: rooms, policies, held messages, hub addresses, A2A channels, federation, workspaces,
// webhooks. Two-party tables (A2A channels and messages, federation agreements) carry
// `tenant_id` (initiator / proposer) and `partner_tenant_id` (responder / partner) and are
// visible to both tenants (`parley_enable_two_party_rls`, migration 0007).
// ---------------------------------------------------------------------------------------------

/** Workspaces (SPEC §2.5, §4.13): a named group of a tenant's devices. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('workspaces_tenant_idx').on(t.tenantId)],
);

/** Workspace membership of agent devices, with a role (`admin` | `member`). */
export const workspaceMembers = pgTable(
  'workspace_members',
  {
    workspaceId: uuid('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    role: text('role').notNull().default('member'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.deviceId] }), index('workspace_members_device_idx').on(t.deviceId)],
);

/**
 * Rooms (SPEC §2.5, §4.6; DESIGN §8.5). `timeline_id` is the room's `conversation_id` (its
 * aggregated timeline); a room with a `workspace_id` is a team room. `security_level` is
 * `standard` | `strict`; `archived_at` set = no longer active.
 */
export const rooms = pgTable(
  'rooms',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    timelineId: uuid('timeline_id').notNull(),
    name: text('name').notNull(),
    securityLevel: text('security_level').notNull().default('standard'),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    archivedAt: ts('archived_at'),
  },
  (t) => [index('rooms_tenant_idx').on(t.tenantId), index('rooms_workspace_idx').on(t.workspaceId)],
);

/** Room members by device (`kind` copied from the device: owner | agent). */
export const roomMembers = pgTable(
  'room_members',
  {
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    joinedAt: ts('joined_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.roomId, t.deviceId] }), index('room_members_device_idx').on(t.deviceId)],
);

/** One pairwise conversation per member pair of a room (`device_a` < `device_b`). */
export const roomConversations = pgTable(
  'room_conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    deviceA: uuid('device_a').notNull(),
    deviceB: uuid('device_b').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('room_conversations_pair_idx').on(t.roomId, t.deviceA, t.deviceB)],
);

/**
 * Release positions of room envelopes (member timelines, DESIGN §8.5): one value per release, i.e.
 * per room message at send time (its sender's position and that of every envelope released with
 * it) and per held envelope at approval. Taken under a per-room transaction lock, so within a room
 * positions commit in order and a member paging by cursor never skips one.
 */
export const roomReleaseSeq = pgSequence('room_release_seq');

/**
 * A room message (timeline entry); its per-recipient ciphertexts are `room_envelopes`. `seq`
 * orders the owner timeline; `release_seq` is the sender's position in its member timeline
 * (set at the end of the sending transaction).
 */
export const roomMessages = pgTable(
  'room_messages',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomId: uuid('room_id').notNull().references(() => rooms.id, { onDelete: 'cascade' }),
    senderDeviceId: uuid('sender_device_id').notNull(),
    messageType: text('message_type').notNull(),
    priority: text('priority').notNull(),
    createdAt: createdAt(),
    releaseSeq: bigint('release_seq', { mode: 'number' }),
  },
  (t) => [index('room_messages_room_seq_idx').on(t.roomId, t.seq), index('room_messages_sender_idx').on(t.senderDeviceId, t.createdAt)],
);

/**
 * One envelope per recipient (`recipient_device_id` null = every member, an MLS room's single
 * ciphertext). `outcome` is delivered | held | blocked | notified; a blocked or denied envelope
 * keeps no ciphertext, and an MLS carrier loses its ciphertext once every recipient row is
 * blocked (trigger of migration 0009). `release_seq` (from `room_release_seq`) is set when the
 * envelope is released to its recipient (at send, or at approval when held): the recipient's
 * member-timeline position of the message.
 */
export const roomEnvelopes = pgTable(
  'room_envelopes',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    roomMessageId: uuid('room_message_id').notNull().references(() => roomMessages.id, { onDelete: 'cascade' }),
    recipientDeviceId: uuid('recipient_device_id'),
    headerBlob: bytea('header_blob'),
    ciphertext: bytea('ciphertext'),
    outcome: text('outcome').notNull(),
    deliveredAt: ts('delivered_at'),
    releaseSeq: bigint('release_seq', { mode: 'number' }),
  },
  (t) => [index('room_envelopes_message_idx').on(t.roomMessageId), index('room_envelopes_recipient_idx').on(t.recipientDeviceId, t.releaseSeq)],
);

/**
 * Policies (SPEC §2.7, §4.9; DESIGN §8.5): `conditions` is the JSON condition object, `action`
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
 * Held messages (SPEC §3.8; DESIGN §8.3): `held` -> `approved` | `denied` | `expired` (72 h).
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
 * `svc.policy.evaluate` records (issue 4 item 2): one row per (message, recipient) evaluation,
 * read by trust scoring (compliance dimension, SPEC §2.9). `matched_policy_ids` lists every
 * matching enabled policy; `policy_id` is the one whose action won (null = default).
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
 * Hub identities (SPEC §2.8): the platform-wide unique `hub_address` of an agent device. Issue 4
 * needs only the address registry (A2A requests by address); issue 5 completes the identity.
 */
export const hubIdentities = pgTable(
  'hub_identities',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    hubAddress: text('hub_address').notNull(),
    deviceId: uuid('device_id').references(() => devices.id, { onDelete: 'set null' }),
    displayName: text('display_name').notNull(),
    description: text('description'),
    publicKey: text('public_key'),
    capabilities: jsonb('capabilities').notNull().default([]),
    trustTier: text('trust_tier').notNull().default('unverified'),
    trustScore: doublePrecision('trust_score'),
    /** active | suspended (SPEC §4.11 verify status). */
    status: text('status').notNull().default('active'),
    /** The `timestamp` of the last accepted `PATCH /hub/{address}/did` (replay protection, DESIGN §8.15). */
    didUpdatedAt: ts('did_updated_at'),
    certifiedAt: ts('certified_at'),
    lastAttestationAt: ts('last_attestation_at'),
    /** Full-text search document over names, description and capabilities (kept by the hub service). */
    searchDocument: tsvector('search_document'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('hub_identities_address_idx').on(t.hubAddress),
    index('hub_identities_device_idx').on(t.deviceId),
    index('hub_identities_search_idx').using('gin', t.searchDocument),
  ],
);

/**
 * Verification methods of a hub identity's DID document beyond `#owner-key` (DESIGN §8.15):
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

/** Registered capabilities of a hub identity (SPEC §2.8): JSON Schema input, SLA, certification tier. */
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

/** Every trust-tier change of a hub identity (SPEC §3.3: recorded; certification checks kept). */
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
 * Verifiable credentials issued by the service (SPEC §2.10; DESIGN §8.16): the revocation
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

/**
 * Federation agreements (SPEC §2.12): proposed by `tenant_id`, accepted by `partner_tenant_id`.
 * `status` pending | active | revoked; expiry is derived from `expires_at`.
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
  },
  (t) => [index('federation_agreements_tenant_idx').on(t.tenantId), index('federation_agreements_partner_idx').on(t.partnerTenantId)],
);

/**
 * Agent-to-agent channels (SPEC §2.11, §3.5): initiator side in `tenant_id`, responder side in
 * `partner_tenant_id` (equal for a same-tenant channel). Status pending | approved | active |
 * rejected | revoked.
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

/**
 * Webhook outbox (DESIGN §8.11): one row per (device, event), claimed by the delivery worker with
 * `FOR UPDATE SKIP LOCKED`; status pending | delivered | failed | cancelled, exponential backoff via
 * `next_attempt_at`.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`)],
);

// ---------------------------------------------------------------------------------------------
// Issue 6 (first part): decisions, tenant settings, scan rules.
// ---------------------------------------------------------------------------------------------

/**
 * Decision requests (SPEC §2.4 decision_request, §4.15; DESIGN §8.4, §8.19): `pending` ->
 * `approved` | `denied` | `deferred` | `expired` (deadline passed, auto_action fired once).
 */
export const decisions = pgTable(
  'decisions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    description: text('description'),
    options: jsonb('options').notNull(),
    deadline: ts('deadline'),
    autoAction: jsonb('auto_action'),
    status: text('status').notNull().default('pending'),
    optionId: text('option_id'),
    note: text('note'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    resolvedAt: ts('resolved_at'),
    resolvedBy: text('resolved_by'),
  },
  (t) => [index('decisions_tenant_status_idx').on(t.tenantId, t.status), index('decisions_deadline_idx').on(t.deadline).where(sql`status in ('pending', 'deferred')`)],
);

/** Tenant settings (SPEC §4.14; DESIGN §8.22): one flat JSON object per tenant, validated field by field. */
export const tenantSettings = pgTable('tenant_settings', {
  tenantId: uuid('tenant_id').primaryKey().references(() => tenants.id, { onDelete: 'cascade' }),
  settings: jsonb('settings').notNull().default({}),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

/** Versioned client-side scan rule sets (SPEC §4.14): the newest version is current. */
export const scanRuleSets = pgTable(
  'scan_rule_sets',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    rules: jsonb('rules').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('scan_rule_sets_version_idx').on(t.tenantId, t.version)],
);

/**
 * The tenant audit log (SPEC §4.14; DESIGN §8.10): append-only, hash-chained per tenant:
 * `hash = BLAKE2b-256(prev_hash || JCS(event))`; `seq` orders a tenant's chain (1, 2, …).
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    actor: text('actor').notNull(),
    subject: text('subject'),
    data: jsonb('data').notNull().default({}),
    createdAt: createdAt(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [uniqueIndex('audit_events_chain_idx').on(t.tenantId, t.seq), index('audit_events_type_idx').on(t.tenantId, t.type, t.createdAt)],
);

/** Telemetry spans (SPEC §2.15, §4.14): OTLP spans of a tenant's agents, attributes as JSON. */
export const telemetrySpans = pgTable(
  'telemetry_spans',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull(),
    traceId: text('trace_id').notNull(),
    spanId: text('span_id').notNull(),
    parentSpanId: text('parent_span_id'),
    name: text('name').notNull(),
    kind: integer('kind').notNull().default(0),
    startTime: ts('start_time').notNull(),
    endTime: ts('end_time').notNull(),
    durationUs: bigint('duration_us', { mode: 'number' }).notNull(),
    statusCode: integer('status_code').notNull().default(0),
    statusMessage: text('status_message'),
    attributes: jsonb('attributes').notNull().default({}),
    resource: jsonb('resource').notNull().default({}),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [index('telemetry_spans_device_time_idx').on(t.tenantId, t.deviceId, t.startTime), index('telemetry_spans_name_idx').on(t.tenantId, t.name, t.startTime)],
);

// ---------------------------------------------------------------------------------------------
// Issue 6: trust scoring, skill permission tokens, shadow sessions
// ---------------------------------------------------------------------------------------------

/**
 * Device presence by hour (SPEC §2.9 `uptime`, DESIGN §8.2): one row per device and UTC hour in
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
 * Trust score snapshots (SPEC §2.9, §3.9, §4.12): one row per agent, window (`7d`|`30d`|`90d`)
 * and recompute. `dimensions` holds the 12 values 0.0-1.0; `sources` says per dimension whether
 * it came from `telemetry`, the `fleet_median` or the 48-hour `warmup` fallback. The newest row
 * per (device, window) is the current score; the `7d` rows are the history and the tier input.
 */
export const trustSnapshots = pgTable(
  'trust_snapshots',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    window: text('window').notNull(),
    composite: doublePrecision('composite').notNull(),
    dimensions: jsonb('dimensions').notNull(),
    sources: jsonb('sources').notNull().default({}),
    percentile: integer('percentile').notNull(),
    tier: text('tier').notNull(),
    computedAt: ts('computed_at').notNull(),
  },
  (t) => [index('trust_snapshots_device_idx').on(t.tenantId, t.deviceId, t.window, t.computedAt)],
);

/**
 * Per-day dimension values of an agent (UTC day; the input of PSI drift, SPEC §4.12): only the
 * dimensions that had data that day are present in `dimensions`. Upserted by each recompute.
 */
export const trustDailyScores = pgTable(
  'trust_daily_scores',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    dimensions: jsonb('dimensions').notNull(),
    computedAt: ts('computed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.day] }), index('trust_daily_scores_tenant_idx').on(t.tenantId, t.deviceId, t.day)],
);

/**
 * PSI drift baselines (SPEC §4.12): per agent and dimension, the binned distribution (`bins`,
 * proportions summing to 1) of the daily values of the first stable 30-day window, or of the
 * window chosen at the last manual recalibration (`reason` `initial` | `recalibrated`).
 */
export const trustBaselines = pgTable(
  'trust_baselines',
  {
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    dimension: text('dimension').notNull(),
    bins: jsonb('bins').notNull(),
    samples: integer('samples').notNull(),
    windowStart: text('window_start').notNull(),
    windowEnd: text('window_end').notNull(),
    reason: text('reason').notNull(),
    establishedAt: ts('established_at').notNull(),
    establishedBy: text('established_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.dimension] }), index('trust_baselines_tenant_idx').on(t.tenantId)],
);

/**
 * Cluster-wide schedule of periodic jobs (platform table, no tenant_id): a run is claimed by the
 * one instance whose `UPDATE … WHERE next_run_at <= now() RETURNING` succeeds (DESIGN §8 "jobs").
 */
export const scheduledJobs = pgTable('scheduled_jobs', {
  name: text('name').primaryKey(),
  nextRunAt: ts('next_run_at').notNull(),
  lastRunAt: ts('last_run_at'),
  lastRunBy: text('last_run_by'),
  lastResult: jsonb('last_result'),
});

/**
 * Skill Permission Tokens (DESIGN §8.7): one row per issued SPT (`jti`). The revocation list is
 * the rows with `revoked_at` set; an SPT is active while not revoked and `expires_at` is ahead.
 * `tier` is the trust tier the grant was issued under (a downgrade below it revokes the grant).
 */
export const skillGrants = pgTable(
  'skill_grants',
  {
    jti: uuid('jti').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    skill: text('skill').notNull(),
    tier: text('tier').notNull(),
    audience: text('audience').notNull(),
    issuedBy: text('issued_by').notNull(),
    issuedAt: ts('issued_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('skill_grants_device_idx').on(t.tenantId, t.deviceId, t.expiresAt)],
);

/**
 * Shadow sessions (SPEC §2.14, §3.4; DESIGN §8.8, §8.20): one agent, skill and decision class.
 * `level` shadow | supervised | autonomous; `level_since` starts the evidence that gates count.
 */
export const shadowSessions = pgTable(
  'shadow_sessions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id').notNull().references(() => devices.id, { onDelete: 'cascade' }),
    skillName: text('skill_name').notNull(),
    decisionClass: text('decision_class').notNull(),
    minObservations: integer('min_observations').notNull(),
    agreementThreshold: doublePrecision('agreement_threshold').notNull(),
    criticalMissWindowHours: doublePrecision('critical_miss_window_hours').notNull(),
    level: text('level').notNull().default('shadow'),
    levelSince: ts('level_since').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('shadow_sessions_device_idx').on(t.tenantId, t.deviceId)],
);

/** Observations of a shadow session (SPEC §2.14): the agent's recommendation next to the human decision. */
export const shadowObservations = pgTable(
  'shadow_observations',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    sessionId: uuid('session_id').notNull().references(() => shadowSessions.id, { onDelete: 'cascade' }),
    observationId: text('observation_id').notNull(),
    level: text('level').notNull(),
    agentAction: text('agent_action').notNull(),
    agentConfidence: doublePrecision('agent_confidence'),
    agentReasoning: text('agent_reasoning'),
    humanAction: text('human_action').notNull(),
    humanNotes: text('human_notes'),
    agreed: boolean('agreed').notNull(),
    criticalMiss: boolean('critical_miss').notNull().default(false),
    recordedBy: text('recorded_by').notNull(),
    recordedAt: ts('recorded_at').notNull(),
  },
  (t) => [uniqueIndex('shadow_observations_id_idx').on(t.sessionId, t.observationId), index('shadow_observations_session_idx').on(t.sessionId, t.recordedAt)],
);
