/**
 * Request and response shapes of the Parley REST API as served today (SPEC §4.1–§4.5, DESIGN §7).
 * Field names are the wire's snake_case; timestamps are ISO 8601 strings; keys and signatures are
 * lowercase hex (Ed25519 / X25519 keys: 64 hex characters, signatures: 128); `header_blob` and
 * `ciphertext` are base64 strings (SPEC §2.4).
 */

import type { AutoAction, DecisionOption, DecisionRequest } from '../content/types.js';

/** Device status (SPEC §2.3, uppercase everywhere on the wire per DESIGN §7). */
export type DeviceStatus = 'PENDING' | 'APPROVED' | 'ACTIVE' | 'REVOKED';

/** Invite status (SPEC §2.2, §3.2). */
export type InviteStatus = 'active' | 'revoked' | 'consumed' | 'expired';

/** Message types (SPEC §2.4). */
export type MessageType =
  | 'text'
  | 'decision_request'
  | 'status_alert'
  | 'action_confirmation'
  | 'artifact'
  | 'attachment'
  | 'policy_alert'
  | 'approval_request'
  | 'approval_response';

/** Message priority (SPEC §2.4; the service defaults to `normal`). */
export type Priority = 'low' | 'normal' | 'high' | 'urgent';

/** Device health computed from last_seen (DESIGN §8.2: green < 2 min, yellow < 15 min, else red). */
export type DeviceHealth = 'green' | 'yellow' | 'red';

// ---------------------------------------------------------------- platform (SPEC §4.1)

/** `GET /health` (SPEC §4.1): `status` is `ok`, or `degraded` (HTTP 503) when the database fails. */
export interface HealthResponse {
  status: string;
  version: string;
}

/** `GET /.well-known/jwks.json`: public keys of device JWTs (and of the dev identity provider). */
export interface JwksResponse {
  keys: Array<Record<string, unknown>>;
}

/** `GET /api/v1/legal/terms`: the current terms document. */
export interface LegalTermsResponse {
  version: string;
  url: string | null;
  summary: string;
  [key: string]: unknown;
}

/** One plan of `GET /api/v1/billing/plans`; prices in US cents per month (`null` = on request). */
export interface BillingPlan {
  plan_id: string;
  name: string;
  price_cents: number | null;
  limits: Record<string, number | null>;
  [key: string]: unknown;
}

/** `GET /api/v1/billing/plans`. */
export interface BillingPlansResponse {
  plans: BillingPlan[];
}

/** `GET /api/v1/capabilities`: protocols, realtime endpoint and feature list of the platform. */
export interface CapabilitiesResponse {
  version: string;
  encryption: { protocols: string[]; aead: string; identity: string; fingerprint: string; [key: string]: unknown };
  realtime: { websocket: string; ping_interval_s: number; dead_timeout_s: number; [key: string]: unknown };
  features: string[];
  [key: string]: unknown;
}

// ---------------------------------------------------------------- tenants, invites (SPEC §4.2)

/** `POST /api/v1/tenants` body. `name`: 1–200 characters. */
export interface CreateTenantRequest {
  name: string;
}

/** `POST /api/v1/tenants` answer (201); the caller becomes `OWNER_ADMIN`. */
export interface Tenant {
  tenant_id: string;
  name: string;
  role: string;
}

/** `POST /api/v1/invites` body; `label` is optional (at most 200 characters). */
export interface CreateInviteRequest {
  label?: string;
}

/** An invite as listed (SPEC §2.2). `expires_at` is 10 minutes after creation. */
export interface Invite {
  id: string;
  status: InviteStatus;
  label: string | null;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
  device_id: string | null;
}

/** `POST /api/v1/invites` answer (201): the raw `svc_tok_…` token appears here only, once. */
export interface CreatedInvite extends Invite {
  token: string;
}

/** `GET /api/v1/invites`. */
export interface InviteList {
  invites: Invite[];
}

// ---------------------------------------------------------------- enrollment (SPEC §4.3)

/**
 * `POST /api/v1/enroll` body (SPEC §4.3, DESIGN §7). `proof_of_possession` is the Ed25519
 * signature (hex) by the identity private key over the raw 32 bytes of `identity_public_key`.
 */
export interface EnrollRequest {
  invite_token: string;
  identity_public_key: string;
  ephemeral_public_key: string;
  proof_of_possession: string;
  platform?: string;
  name?: string;
}

/** `POST /api/v1/enroll` answer (201); `status` is `PENDING`. */
export interface EnrollResponse {
  device_id: string;
  fingerprint: string;
  status: DeviceStatus;
}

// ---------------------------------------------------------------- devices (SPEC §4.4)

/** A device as listed to owners (DESIGN §7). */
export interface Device {
  device_id: string;
  name: string;
  platform: string | null;
  status: DeviceStatus;
  kind: 'owner' | 'agent';
  health: DeviceHealth;
  last_seen: string | null;
  fingerprint: string;
  identity_public_key: string;
  ephemeral_public_key: string;
  enrolled_at: string;
  webhook_url: string | null;
}

/** `GET /api/v1/devices`. */
export interface DeviceList {
  devices: Device[];
}

/** `GET /api/v1/devices/{id}/status` (public, 1 request per 5 s per device; SPEC §8). */
export interface DeviceStatusResponse {
  device_id: string;
  status: DeviceStatus;
}

/** Public keys of a device (hex) and its fingerprint (DESIGN §7). */
export interface DeviceKeys {
  device_id: string;
  identity_public_key: string;
  ephemeral_public_key: string;
  fingerprint: string;
}

/** One pairwise conversation between an agent device and an owner device (DESIGN §7). */
export interface ConversationLink {
  conversation_id: string;
  message_group_id: string;
  agent_device_id: string;
  owner_device_id: string;
}

/** `POST /api/v1/devices/{id}/activate` body: Ed25519 signature (hex) over UTF-8 `activate:<device_id>`. */
export interface ActivateRequest {
  signature: string;
}

/**
 * `POST /api/v1/devices/{id}/activate` answer (DESIGN §7). `conversation_id` is the conversation
 * with the oldest ACTIVE owner device (null when the tenant has no owner device yet);
 * `conversations` lists them all; `owner_public_keys` lists every ACTIVE owner device.
 */
export interface ActivateResponse {
  device_id: string;
  device_jwt: string;
  expires_at: string;
  conversation_id: string | null;
  message_group_id: string;
  default_topic_id: string;
  conversations: ConversationLink[];
  owner_public_keys: DeviceKeys[];
}

/** `POST /api/v1/devices/{id}/token/challenge` answer (201): single-use, valid 5 minutes. */
export interface TokenChallenge {
  device_id: string;
  challenge: string;
  expires_at: string;
}

/** `POST /api/v1/devices/{id}/token` body: Ed25519 signature (hex) over the UTF-8 challenge. */
export interface RenewTokenRequest {
  challenge: string;
  signature: string;
}

/** A freshly issued device JWT (DESIGN §5: 24 h by default). */
export interface DeviceToken {
  device_id: string;
  device_jwt: string;
  expires_at: string;
}

/** `GET /api/v1/devices/{id}/presence`. `online` reflects the answering instance's sockets. */
export interface DevicePresence {
  device_id: string;
  online: boolean;
  last_seen: string | null;
  health: string;
}

/** `GET /api/v1/devices/{id}/pending`: count of messages not yet delivered to the device. */
export interface DevicePending {
  device_id: string;
  pending: number;
}

/** `PATCH /api/v1/devices/{id}/webhook` and `/devices/self/webhook` body; `null` clears. */
export interface WebhookRequest {
  url: string | null;
}

/** Webhook registration answer; `secret` (`whsec_…`) appears once, when a URL is registered. */
export interface WebhookResponse {
  device_id: string;
  webhook_url: string | null;
  secret?: string;
}

/** `PATCH /api/v1/devices/{id}` body (rename); 1–100 characters. */
export interface RenameDeviceRequest {
  name: string;
}

/** `POST /api/v1/devices/register` body (owner device; keys as 64 hex characters). */
export interface RegisterOwnerDeviceRequest {
  identity_public_key: string;
  ephemeral_public_key: string;
  name?: string;
  platform?: string;
}

/** `POST /api/v1/devices/register` answer (201): ACTIVE at once, linked to every ACTIVE agent. */
export interface RegisterOwnerDeviceResponse {
  device_id: string;
  fingerprint: string;
  status: 'ACTIVE';
  conversations: ConversationLink[];
}

/** `POST /api/v1/devices/{id}/relink` answer. */
export interface RelinkResponse {
  device_id: string;
  conversations: ConversationLink[];
}

// ---------------------------------------------------------------- conversations, messages (SPEC §4.5)

/** A topic of a conversation group. */
export interface Topic {
  topic_id: string;
  group_id: string;
  name: string;
  is_default: boolean;
  archived: boolean;
  created_at: string;
}

/** A conversation with its group's topics (`GET /api/v1/conversations`). */
export interface Conversation {
  conversation_id: string;
  message_group_id: string;
  agent_device_id: string;
  owner_device_id: string;
  created_at: string;
  topics: Topic[];
}

/** `GET /api/v1/conversations`. */
export interface ConversationList {
  conversations: Conversation[];
}

/** `GET /api/v1/conversations` query: only the conversations of this device. */
export interface ConversationListQuery {
  device_id?: string;
}

/**
 * The fields a sender gives for one message (REST body and WebSocket `message` frame; SPEC §6.1).
 * `header_blob` and `ciphertext` are base64; the service stores them as opaque bytes.
 * `ciphertext` may be at most 256 KiB decoded (DESIGN §8.12; 413 above).
 */
export interface MessageInput {
  header_blob: string;
  ciphertext: string;
  message_type?: MessageType;
  priority?: Priority;
  topic_id?: string;
  message_group_id?: string;
}

/**
 * A stored message (history entries and WebSocket `message` receive frames; SPEC §6.1 plus
 * DESIGN §7's extra fields). `cursor` is opaque and total-ordered; pass it as `since` to resume.
 */
export interface StoredMessage {
  message_id: string;
  conversation_id: string;
  sender_device_id: string;
  header_blob: string;
  ciphertext: string;
  timestamp: string;
  message_type: MessageType | string;
  priority: Priority | string;
  topic_id: string;
  message_group_id: string;
  cursor: string;
}

/** A page of history, oldest first; `next_cursor` is the last message's cursor (null when empty). */
export interface MessagePage {
  messages: StoredMessage[];
  next_cursor: string | null;
}

/**
 * History query (SPEC §4.5, DESIGN §7). `since` is exclusive: an ISO 8601 timestamp or a cursor.
 * Without `since`: the latest `limit` messages. `limit`: 1–200, default 50.
 */
export interface HistoryQuery {
  since?: string;
  limit?: number;
  topic_id?: string;
}

/** `GET /api/v1/devices/{id}/messages` query: history plus an optional conversation filter. */
export interface DeviceHistoryQuery extends HistoryQuery {
  conversation_id?: string;
}

/** `GET /api/v1/conversations/{id}/keys`: the counterparty's public keys (the agent side, or with X-Device-Id the other side). */
export interface ConversationKeys {
  conversation_id: string;
  device_id: string;
  identity_public_key: string;
  ephemeral_public_key: string;
  fingerprint: string;
  kind: string;
  status: string;
}

/** `GET /api/v1/topics` answer. */
export interface TopicList {
  topics: Topic[];
}

/** `GET /api/v1/topics` query: a group's topics (all of the tenant's without it). */
export interface TopicListQuery {
  group_id?: string;
}

/** `POST /api/v1/topics` body; `name`: 1–100 characters. */
export interface CreateTopicRequest {
  group_id: string;
  name: string;
}

/** `PATCH /api/v1/topics/{id}` body; `name`: 1–100 characters. */
export interface RenameTopicRequest {
  name: string;
}

// ---------------------------------------------------------------- MLS KeyPackages (SPEC §1.3, RFC 9420 §10)

/** `POST /api/v1/mls/key-packages` body: 1–100 KeyPackages, each canonical base64 of 1–16 384 bytes. */
export interface PublishKeyPackagesRequest {
  key_packages: string[];
}

/** `POST /api/v1/mls/key-packages` answer (201); a device holds at most 500 unclaimed KeyPackages. */
export interface PublishKeyPackagesResponse {
  device_id: string;
  published: number;
  available: number;
}

/** `GET /api/v1/mls/key-packages/{device_id}`: unclaimed KeyPackages of a device of the tenant. */
export interface KeyPackageCount {
  device_id: string;
  available: number;
}

/** `POST /api/v1/mls/key-packages/claim` body: the ACTIVE device whose KeyPackage is claimed. */
export interface ClaimKeyPackageRequest {
  device_id: string;
}

/** `POST /api/v1/mls/key-packages/claim` answer: one single-use KeyPackage (base64). */
export interface ClaimedKeyPackage {
  device_id: string;
  key_package_id: string;
  key_package: string;
}

/** An API key as listed (SPEC §2.6, §4.8); the raw key appears only in {@link ApiKeyWithSecret}. */
export interface ApiKey {
  id: string;
  name: string;
  env: 'prod' | 'staging' | 'dev' | string;
  /** The first characters of the raw key. */
  prefix: string;
  status: 'active' | 'revoked';
  device_id: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  rotated_from: string | null;
}

/** Answer of create and rotate: the key with its raw `svc_agent_sk_{env}_{64 hex}` value, shown once. */
export interface ApiKeyWithSecret extends ApiKey {
  key: string;
}

/** Answer of an attachment upload (SPEC §4.7): metadata of the stored encrypted file. */
export interface AttachmentInfo {
  blob_id: string;
  size_bytes: number;
  /** Always `application/octet-stream`: the service stores ciphertext. */
  content_type: string;
  created_at: string;
}

/** Body of `POST /push/register` (SPEC §4.7). */
export interface RegisterPushTokenRequest {
  device_id: string;
  platform: 'apns' | 'fcm' | 'web';
  token: string;
}

/** Answer of `POST /push/register`. */
export interface PushRegistration {
  push_token_id: string;
  device_id: string;
  platform: 'apns' | 'fcm' | 'web';
}

// ---------------------------------------------------------------- rooms (SPEC §2.5, §4.6; DESIGN §8.5)

/** Room security level: `strict` rooms hold agent-sent messages unless a policy allows them (DESIGN §8.5). */
export type RoomSecurityLevel = 'standard' | 'strict';

/**
 * A room member. The public keys and fingerprint (DESIGN §7) let members set up the pairwise
 * end-to-end sessions of the room without the owner-only `GET /conversations/{id}/keys`.
 */
export interface RoomMember {
  device_id: string;
  kind: 'owner' | 'agent';
  identity_public_key?: string;
  ephemeral_public_key?: string;
  fingerprint?: string;
}

/** One pairwise conversation of a room: exactly two member devices (DESIGN §8.5). */
export interface RoomConversation {
  conversation_id: string;
  device_ids: string[];
}

/**
 * A room as listed (`GET /rooms`). `conversation_id` is the room's timeline; `mls_capable` tells
 * whether every member published an MLS KeyPackage; `policies` are the ids of the policies scoped
 * to the room; a room with a `workspace_id` is a team room.
 */
export interface RoomSummary {
  room_id: string;
  conversation_id: string;
  name: string;
  security_level: RoomSecurityLevel;
  workspace_id: string | null;
  archived: boolean;
  created_at: string;
  mls_capable: boolean;
  members: RoomMember[];
  policies: string[];
}

/** A room with its pairwise conversations, one per member pair (`POST /rooms`, `GET /rooms/{id}`). */
export interface Room extends RoomSummary {
  conversations: RoomConversation[];
}

/** `POST /api/v1/rooms` body: the members are devices of the tenant (owner and agent devices). */
export interface CreateRoomRequest {
  name: string;
  member_device_ids: string[];
  security_level?: RoomSecurityLevel;
}

/** `PATCH /api/v1/rooms/{id}` body; `policies` scopes existing policies of the tenant to the room. */
export interface UpdateRoomRequest {
  name?: string;
  security_level?: RoomSecurityLevel;
  policies?: string[];
}

/**
 * One envelope of a room message: the ciphertext for one recipient (its pairwise session), or
 * for every member of an MLS room (`recipient_device_id: "*"`). base64 as in {@link MessageInput}.
 */
export interface RoomEnvelope {
  recipient_device_id: string;
  header_blob: string;
  ciphertext: string;
}

/** `POST /api/v1/rooms/{id}/messages` body and the `room_message` send frame's fields (DESIGN §8.5). */
export interface RoomMessageInput {
  message_type?: MessageType;
  priority?: Priority;
  envelopes: RoomEnvelope[];
}

/** What the policies decided for one recipient of a room message (DESIGN §8.3, §8.5). */
export type DeliveryOutcome = 'delivered' | 'held' | 'blocked' | 'notified';

/** One recipient's outcome; `held_message_id` names the held message when `held`. */
export interface RoomDelivery {
  recipient_device_id: string;
  outcome: DeliveryOutcome;
  held_message_id?: string;
}

/** Answer to a room message (REST 201; the socket's `room_message_ack` adds `client_ref`). `cursor` is its timeline position. */
export interface RoomMessageResult {
  room_message_id: string;
  timestamp: string;
  cursor: string;
  deliveries: RoomDelivery[];
}

/**
 * A room timeline entry (`GET /rooms/{id}/messages`, oldest first). `envelope` is the caller's
 * own envelope (absent when it has none: its own messages, blocked or still held ones).
 */
export interface RoomTimelineEntry {
  room_message_id: string;
  sender_device_id: string;
  message_type: string;
  priority: string;
  timestamp: string;
  cursor: string;
  deliveries: RoomDelivery[];
  envelope?: { header_blob: string; ciphertext: string };
}

/** A page of a room timeline; `next_cursor` resumes after its last entry. */
export interface RoomTimelinePage {
  messages: RoomTimelineEntry[];
  next_cursor: string | null;
}

/**
 * Room timeline query: `since` is exclusive (cursor or ISO timestamp); `limit` 1–200. `view`:
 * `owner` (default for owner tokens) lists every message in send order; `member` (devices and API
 * keys always; owners with `X-Device-Id`) what the device sent or received, in release order
 * (an approved held message appears when released). Cursors belong to one view.
 */
export interface RoomTimelineQuery {
  since?: string;
  limit?: number;
  view?: 'owner' | 'member';
}

// ---------------------------------------------------------------- policies, held messages (SPEC §2.7, §3.8, §4.9)

/** Policy action; the most restrictive of all matching policies wins: block > hold > notify > allow. */
export type PolicyAction = 'allow' | 'block' | 'hold' | 'notify';

/**
 * Policy conditions (DESIGN §8.5): metadata only, every key optional, keys AND-ed, a list means
 * any of. Unknown keys are refused (400).
 */
export interface PolicyConditions {
  message_types?: string[];
  priorities?: Priority[];
  sender_kinds?: Array<'owner' | 'agent'>;
  recipient_kinds?: Array<'owner' | 'agent'>;
  sender_device_ids?: string[];
  recipient_device_ids?: string[];
  sender_hub_addresses?: string[];
  sender_tier_below?: 'certified' | 'enterprise';
  /** Matches an agent whose trust score (latest 7-day composite; 0.5 before one exists) is below this value, 0-1. */
  trust_score_below?: number;
  /** UTC hours `from` <= h < `to`, wrapping midnight when `from` > `to`. */
  hours_utc?: { from: number; to: number };
  rate_per_minute_over?: number;
  cross_tenant?: boolean;
}

/** Policy scope: one room, or one skill; absent, null or `{}` = tenant-wide. Answers carry both keys (null when unset). */
export interface PolicyScope {
  room_id?: string | null;
  skill?: string | null;
}

/** `POST /api/v1/policies` body. */
export interface CreatePolicyRequest {
  name: string;
  scope?: PolicyScope | null;
  priority?: number;
  conditions: PolicyConditions;
  action: PolicyAction;
  enabled?: boolean;
}

/** `PATCH /api/v1/policies/{id}` body: the fields to change. */
export type UpdatePolicyRequest = Partial<CreatePolicyRequest>;

/** A policy. */
export interface Policy {
  policy_id: string;
  name: string;
  scope: PolicyScope;
  priority: number;
  conditions: PolicyConditions;
  action: PolicyAction;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

/** Held message status (DESIGN §8.3). */
export type HeldMessageStatus = 'held' | 'approved' | 'denied' | 'expired';

/** A held message (of a room, or of an A2A channel), listed without ciphertext (DESIGN §8.5). */
export interface HeldMessage {
  held_message_id: string;
  room_id: string | null;
  channel_id: string | null;
  sender_device_id: string;
  recipient_device_id: string | null;
  policy_id: string | null;
  message_type: string;
  priority: string;
  status: HeldMessageStatus;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
}

/** `GET /api/v1/policies/held-messages` query (default: status `held`). */
export interface HeldMessageQuery {
  status?: HeldMessageStatus;
}

// ---------------------------------------------------------------- hub identities (SPEC §2.8, §3.3, §4.10; DESIGN §8.13, §8.15, §8.16)

/** Trust tier, lowercase on the wire (DESIGN §8.21), lowest first. */
export type TrustTier = 'unverified' | 'certified' | 'enterprise';

/**
 * `POST /api/v1/hub/register` and `POST /api/v1/hub/identities` body (DESIGN §8.15, §8.18).
 * `hub_address`: 3–32 characters `[a-z0-9-]`, no leading/trailing hyphen, any case (stored
 * lowercase), unique platform-wide; `display_name` 1–100 characters; `description` ≤ 1000;
 * `capabilities` ≤ 100 names of 1–100 characters; `public_key` the raw 32-byte Ed25519 owner key
 * in padded base64 (`#owner-key` of the DID document); `device_id` an ACTIVE agent device of the
 * tenant to bind (at most one identity per device).
 */
export interface RegisterHubRequest {
  hub_address: string;
  display_name: string;
  description?: string;
  capabilities?: string[];
  /** The owner key (SPEC §2.8, required): base64 of a raw 32-byte Ed25519 public key. */
  public_key: string;
  device_id?: string;
}

/** A hub identity of the tenant (registration answer, list entry, details). */
export interface HubIdentity {
  id: string;
  /** Lowercase hub address. */
  hub_address: string;
  /** `did:hub:<hub_address>`. */
  did: string;
  display_name: string;
  description: string | null;
  /** Capability names given at registration. */
  capabilities: string[];
  /** The owner key (base64), or null. */
  public_key: string | null;
  /** The bound agent device, or null. */
  device_id: string | null;
  trust_tier: TrustTier;
  created_at: string;
}

/** Promised service levels of a capability. */
export interface CapabilitySla {
  /** 95th-percentile latency, milliseconds (0–1e9). */
  latency_p95_ms: number;
  /** Promised uptime, a fraction 0–1. */
  uptime_sla: number;
}

/**
 * `POST /api/v1/hub/{hub_address}/capabilities` body. `version` is semver-like (`1`, `1.2`,
 * `1.2.3`, optional `-pre.release` and `+build`); `input_schema` must be a valid JSON Schema
 * (2020-12 unless its `$schema` names 2019-09 or draft-07), else 400.
 */
export interface HubCapabilityInput {
  name: string;
  version: string;
  description?: string;
  input_schema: Record<string, unknown>;
  sla?: CapabilitySla;
}

/** A registered capability; `certification_tier` is set by certification runs (capabilities with an SLA). */
export interface HubCapability {
  name: string;
  version: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  sla: CapabilitySla | null;
  certification_tier: TrustTier;
  registered_at: string;
}

/** Public profile of a hub identity (`GET /hub/{hub_address}/profile`, search results). */
export interface HubProfile {
  hub_address: string;
  display_name: string;
  description: string | null;
  trust_tier: TrustTier;
  /** 0.0–1.0; 0.5 until the trust engine has computed one (SPEC §3.9). */
  trust_score: number;
  /** Names given at registration and registered capability names. */
  capabilities: string[];
  enrolled_at: string;
  last_active: string | null;
}

/** `PATCH /api/v1/hub/{hub_address}/profile` body: at least one field; `description` null or `""` clears it. */
export interface UpdateHubProfileRequest {
  display_name?: string;
  description?: string | null;
}

/**
 * `GET /api/v1/hub/search` query. `query`: free text (websearch syntax, ≤ 500 characters) over
 * names, descriptions and capabilities; `tier`: minimum tier; `capability`: a capability name;
 * `limit` 1–100 (default 20). Anonymous callers get at most 10 results.
 */
export interface HubSearchQuery {
  query?: string;
  tier?: TrustTier;
  capability?: string;
  limit?: number;
}

/** Names of the certification checks, in answer order (SPEC §3.3). */
export type CertificationCheckName = 'owner_key' | 'bound_device' | 'capabilities' | 'activity' | 'trust_score';

/** `POST /api/v1/hub/identities/{id}/certify` answer (DESIGN §8.16), whether or not the tier rose. */
export interface CertifyResult {
  identity_id: string;
  /** The tier after the run. */
  tier: TrustTier;
  /** True when this run raised the tier. */
  upgraded: boolean;
  checks: { check: CertificationCheckName; passed: boolean; detail: string }[];
}

// ---------------------------------------------------------------- verification, credentials (SPEC §2.9, §2.10, §4.11; DESIGN §8.16)

/** Trust-score windows (SPEC §2.9, §3.9). */
export type TrustWindow = '7d' | '30d' | '90d';

/** The 12 trust dimensions of SPEC §2.9. */
export type TrustDimension =
  | 'uptime'
  | 'responsiveness'
  | 'reliability'
  | 'task_success'
  | 'efficiency'
  | 'volume'
  | 'tool_accuracy'
  | 'error_discipline'
  | 'compliance'
  | 'token_efficiency'
  | 'behavioral_consistency'
  | 'version_health';

/** `composite` plus the 12 dimensions, each 0.0–1.0. */
export type TrustScores = { composite: number } & Record<TrustDimension, number>;

/** `GET /api/v1/verify/{hub_address}` query; `window` defaults to `7d`. */
export interface VerifyAgentQuery {
  window?: TrustWindow;
}

/**
 * `GET /api/v1/verify/{hub_address}` answer (SPEC §4.11). `status`: `verified` (tier certified
 * or enterprise and bound device ACTIVE), `unverified`, `suspended` (identity suspended or bound
 * device revoked) or `not_found` (then the tier, scores and times are null).
 */
export interface AgentVerification {
  did: string;
  status: 'verified' | 'unverified' | 'suspended' | 'not_found';
  trust_tier: TrustTier | null;
  trust_scores: TrustScores | null;
  /** The window the scores are for (the requested one). */
  window: TrustWindow;
  /** Active Skill Permission Tokens. */
  active_grants: number;
  enrolled_at: string | null;
  last_seen: string | null;
  /** The last certification run, or null. */
  last_attestation: string | null;
}

/**
 * A TrustTierCredential (`POST /api/v1/hub/identities/{id}/credentials`, 201): a W3C Verifiable
 * Credential (data model 1.1) signed by the platform issuer `did:hub:<platform address>#key-1`
 * with an Ed25519Signature2020 proof. `@context` is [credentials v1, the service trust context
 * (`<PUBLIC_URL>/contexts/trust/v1`), Ed25519-2020 suite]. Verify it offline with
 * `createDocumentLoader`, or with {@link ParleyClient.verifyCredential}.
 */
export interface TrustTierCredential {
  '@context': string[];
  /** `urn:uuid:<uuid>`. */
  id: string;
  /** `['VerifiableCredential', 'TrustTierCredential']`. */
  type: string[];
  /** The platform DID. */
  issuer: string;
  issuanceDate: string;
  expirationDate: string;
  credentialSubject: { id: string; trustTier: TrustTier };
  proof: {
    type: 'Ed25519Signature2020';
    created: string;
    verificationMethod: string;
    proofPurpose: 'assertionMethod';
    /** `z` + base58btc of the 64-byte signature. */
    proofValue: string;
  };
}

/** An entry of the issued-credential registry (`POST /api/v1/hub/credentials/{id}/revoke` answer). */
export interface IssuedCredential {
  /** The credential `id` (`urn:uuid:…`). */
  credential_id: string;
  identity_id: string | null;
  type: string;
  /** The subject DID. */
  subject: string;
  issued_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The checks of a credential verification, in answer order (DESIGN §8.16). */
export type CredentialCheckName = 'signature' | 'issuer' | 'expiration' | 'revocation' | 'subject';

/**
 * `POST /api/v1/verify/credential` answer: `valid` when every check passes. A well-formed
 * credential that fails a check is still a 200 (`valid: false`).
 */
export interface CredentialVerification {
  valid: boolean;
  checks: { check: CredentialCheckName; passed: boolean }[];
  /** The first `credentialSubject.id`, or null. */
  subject: string | null;
  /** The first type other than `VerifiableCredential`, or null. */
  credential_type: string | null;
}

// ---------------------------------------------------------------- decisions (SPEC §2.4, §2.16, §4.15; DESIGN §8.4, §8.19)
// Option, auto_action and request shapes are the content types of content/types.ts.

/** Decision status (DESIGN §8.4): `pending` and `deferred` still await the owner. */
export type DecisionStatus = 'pending' | 'approved' | 'denied' | 'deferred' | 'expired';

/**
 * `POST /api/v1/decisions` body: the decision_request fields (1 to 20 options with distinct ids,
 * at most one default; `deadline` in the future); `device_id` names the agent, required from an owner.
 */
export interface CreateDecisionRequest extends DecisionRequest {
  device_id?: string;
}

/** A decision request and its outcome. */
export interface Decision {
  decision_id: string;
  /** The agent device that asked (and receives `decision_response`). */
  device_id: string;
  title: string;
  description: string | null;
  options: DecisionOption[];
  deadline: string | null;
  auto_action: AutoAction | null;
  status: DecisionStatus;
  option_id: string | null;
  note: string | null;
  /** Owner subject, or `device:<device_id>` when the agent created it. */
  created_by: string;
  created_at: string;
  resolved_at: string | null;
  /** Owner subject, or `system:deadline` on expiry. */
  resolved_by: string | null;
}

/** A stored telemetry span (SPEC §2.15): times ISO 8601, `duration_us` microseconds, attributes flattened from OTLP. */
export interface TelemetrySpan {
  id: string;
  device_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  start_time: string;
  end_time: string;
  duration_us: number;
  status: 'unset' | 'ok' | 'error';
  status_message: string | null;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  received_at: string;
}

/** A page of spans, newest first; pass `next_cursor` as `cursor`. */
export interface TelemetrySpanPage {
  spans: TelemetrySpan[];
  next_cursor: string | null;
}

/** `GET /api/v1/telemetry/{hub_id}` filters (`since` inclusive, `until` exclusive, on start_time). */
export interface TelemetryQuery {
  name?: string;
  trace_id?: string;
  status?: 'unset' | 'ok' | 'error';
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
}

/** `GET /api/v1/telemetry/{hub_id}/summary`: per span name over [since, until) (durations µs). */
export interface TelemetrySummary {
  device_id: string;
  since: string;
  until: string;
  spans: { name: string; count: number; error_count: number; error_rate: number; p50_duration_us: number; p95_duration_us: number }[];
}

/** `GET /api/v1/decisions` query (DESIGN §8.22). */
export interface DecisionListQuery {
  cursor?: string;
  limit?: number;
}

/** A page of awaiting decisions; `next_cursor` is null on the last page. */
export interface DecisionPage {
  decisions: Decision[];
  next_cursor: string | null;
}

/** `POST /api/v1/decisions/{id}/resolve` body; approve without `option_id` takes the default option. */
export interface ResolveDecisionRequest {
  resolution: 'approve' | 'deny' | 'defer';
  option_id?: string;
  note?: string;
}

/**
 * `decision_response` event data (SPEC §6.1; DESIGN §8.19), sent to the agent device on every
 * resolution and on expiry (`resolution: "expired"` with the fired `auto_action`, null when none).
 */
export interface DecisionResponseEvent {
  decision_id: string;
  resolution: 'approve' | 'deny' | 'defer' | 'expired';
  option_id: string | null;
  note: string | null;
  auto_action?: AutoAction | null;
}

// ------------------------------------------------------------ settings, scan rules (SPEC §4.14; DESIGN §8.22)

/** Tenant settings (`GET/PATCH /settings`): a flat object, every key present on reads. */
export interface TenantSettings {
  /** Hours a held message awaits approval before it expires (1..720). */
  held_message_ttl_hours: number;
  /** Security level of a room created without one. */
  default_room_security_level: 'standard' | 'strict';
  /** False: `GET /scan-rules` answers an empty rule set. */
  scan_rules_enabled: boolean;
}

/** `PATCH /settings` body: any subset of the keys; `null` resets a key to its default. */
export type TenantSettingsPatch = { [K in keyof TenantSettings]?: TenantSettings[K] | null };

/** One client-side scan rule: `pattern` is a JavaScript RegExp source, `flags` among `imsuv`. */
export interface ScanRule {
  id: string;
  name: string;
  pattern: string;
  flags?: string;
  /** `block` stops the send; `warn` reports the match and sends. */
  action: 'block' | 'warn';
  severity: 'low' | 'medium' | 'high' | 'critical';
}

/** `GET /scan-rules`: the current set (version 0 = built-in, `updated_at` then null). */
export interface ScanRuleSet {
  version: number;
  rules: ScanRule[];
  updated_at: string | null;
  /** False when the tenant turned client-side scanning off (`rules` is then empty). */
  enabled: boolean;
}

/** One saved version of the rule set. */
export interface ScanRuleVersion {
  version: number;
  rule_count: number;
  created_by: string;
  created_at: string;
}

/** One audit event (DESIGN §8.22); `hash = BLAKE2b-256(prev_hash || JCS(event))`, the first `prev_hash` is 64 zeros. */
export interface AuditEvent {
  event_id: string;
  /** One of the documented types, e.g. `invite.created`, `device.revoked`, `api_key.rotated`. */
  type: string;
  actor: string;
  subject: string | null;
  data: unknown;
  created_at: string;
  prev_hash: string;
  hash: string;
}

/** `GET /api/v1/audit/events` query: filters (times ISO 8601, inclusive), `cursor` and `limit` (1-200, default 50). */
export interface AuditEventQuery {
  type?: string;
  actor?: string;
  subject?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
}

/** A page of audit events, newest first; `next_cursor` is null on the last page. */
export interface AuditEventPage {
  events: AuditEvent[];
  next_cursor: string | null;
}

/** `GET /api/v1/audit/verify` answer. */
export interface AuditChainVerdict {
  valid: boolean;
  checked: number;
  first_broken: { seq: number; event_id: string; reason: string } | null;
}

// ---------------------------------------------------------------- trust scores (SPEC §2.9, §3.3, §3.9, §4.12; DESIGN §8.14, §8.21)

// TrustWindow and TrustDimension: see the verification section above.

/** One value per trust dimension (SPEC §2.9). */
export type TrustDimensionMap<T> = Record<TrustDimension, T>;

/** Where a dimension score came from (SPEC §3.9): the agent's telemetry, the fleet median fallback, or the 48-hour warm-up neutral score. */
export type TrustScoreSource = 'telemetry' | 'fleet_median' | 'warmup';

/**
 * `GET /api/v1/trust-scores/{agent_id}` (SPEC §2.9, §4.12; DESIGN §8.21): an agent's current score
 * for a window. Scores are 0..1; `percentile` is the 0..100 rank in the tenant fleet; `agent_id`
 * is always the device id (the route also accepts the hub address).
 */
export interface TrustScore {
  agent_id: string;
  hub_address: string | null;
  window: TrustWindow;
  composite_score: number;
  tier: TrustTier;
  dimensions: TrustDimensionMap<number>;
  percentile: number;
  computed_at: string;
  sources: TrustDimensionMap<TrustScoreSource>;
}

/** Query of `GET /trust-scores/fleet`, `/trust-scores/{agent_id}` and `…/drift` (DESIGN §8.14): the window (default `7d`; `30d` for drift). */
export interface TrustWindowQuery {
  window?: TrustWindow;
}

/** `GET /api/v1/trust-scores/fleet` (DESIGN §8.14): each agent's latest score and per-dimension statistics (null without scored agents). */
export interface TrustFleet {
  window: TrustWindow;
  /** The latest recompute, null before the first one. */
  computed_at: string | null;
  count: number;
  agents: Array<{ agent_id: string; hub_address: string | null; composite_score: number; tier: TrustTier; percentile: number }>;
  dimensions: TrustDimensionMap<{ median: number | null; stddev: number | null; mean: number | null }>;
}

/** `POST /api/v1/trust-scores/recompute` (SPEC §4.12; DESIGN §8.14): the trust engine run summary (counts; `duration_ms` in milliseconds). */
export interface TrustRecomputeSummary {
  computed_at: string;
  /** Agents scored. */
  agents: number;
  /** `trust_snapshots` rows written (one per agent and window). */
  snapshots: number;
  /** Per-day dimension rows upserted. */
  daily_scores: number;
  /** Drift baselines established by this run. */
  baselines: number;
  /** Tier changes applied by this run. */
  tier_changes: number;
  duration_ms: number;
}

/** A tier change of an agent (SPEC §3.3; tiers lowercase, DESIGN §8.21). */
export interface TrustTierChange {
  from_tier: string;
  to_tier: string;
  reason: string;
  changed_at: string;
}

/** `GET /api/v1/trust-scores/{agent_id}/history` (SPEC §4.12): the agent's 7-day scores over `days` days, oldest first, with its tier changes. */
export interface TrustHistory {
  agent_id: string;
  days: number;
  history: Array<{ computed_at: string; composite_score: number; tier: TrustTier; dimensions: TrustDimensionMap<number> }>;
  tier_changes: TrustTierChange[];
}

/** A drift baseline period (SPEC §4.12): dates `YYYY-MM-DD` (UTC); `reason` is `initial` or `recalibrated`. */
export interface TrustDriftBaseline {
  window_start: string;
  window_end: string;
  established_at: string;
  reason: string;
}

/**
 * `GET /api/v1/trust-scores/{agent_id}/drift` (SPEC §4.12; DESIGN §8.14): per-dimension PSI of the
 * window against the baseline (null for a dimension without baseline); `alert` when some dimension
 * drifted significantly (PSI > 0.25).
 */
export interface TrustDrift {
  agent_id: string;
  window: TrustWindow;
  baseline: TrustDriftBaseline | null;
  dimensions: TrustDimensionMap<{ psi: number; status: 'stable' | 'moderate' | 'significant'; baseline_samples: number; current_samples: number } | null>;
  alert: boolean;
  computed_at: string;
}

/** `POST /api/v1/trust-scores/{agent_id}/drift/recalibrate` (SPEC §4.12): the new baseline (the most recent 30 days) with its per-dimension histogram bins. */
export interface TrustDriftRecalibration {
  agent_id: string;
  baseline: TrustDriftBaseline;
  dimensions: TrustDimensionMap<{ bins: number[]; samples: number } | null>;
}

/** One window's score in a {@link TrustReport}. */
export interface TrustReportScore {
  composite_score: number;
  dimensions: TrustDimensionMap<number>;
  percentile: number;
  computed_at: string;
  sources: TrustDimensionMap<TrustScoreSource>;
}

/** `GET /api/v1/trust-scores/{agent_id}/report` (SPEC §4.12; DESIGN §8.14): the compliance report (JSON form). */
export interface TrustReport {
  report_id: string;
  generated_at: string;
  agent: { agent_id: string; hub_address: string | null; did: string | null; display_name: string | null; tier: TrustTier; enrolled_at: string };
  scores: Record<TrustWindow, TrustReportScore>;
  tier_changes: TrustTierChange[];
  policy: { period_days: number; evaluations: number; violations: number; by_outcome: Record<string, number> };
  drift: TrustDrift;
  active_grants: number;
  audit: { period_days: number; events_30d: number; chain_valid: boolean };
}

// ---------------------------------------------------------------- Skill Permission Tokens, skill policy (DESIGN §8.6, §8.7)

/** `POST /api/v1/grants` body (DESIGN §8.7): `device_id` is required when an owner issues on the agent's behalf. */
export interface IssueGrantRequest {
  /** Skill name (as in a policy scope), 1-100 characters. */
  skill: string;
  device_id?: string;
  /** The `aud` claim; default the service PUBLIC_URL. */
  audience?: string;
  /** Shortens the lifetime (seconds, 1-86400; the service caps it at SPT_TTL_SECONDS, default 900). */
  ttl_seconds?: number;
}

/** `POST /api/v1/grants` answer (201, DESIGN §8.7): the SPT (compact EdDSA JWS) is returned once and never stored. */
export interface IssuedGrant {
  token: string;
  jti: string;
  skill: string;
  tier: TrustTier;
  audience: string;
  expires_at: string;
  /** The agent DID (`sub`). */
  subject: string;
  device_id: string;
}

/** A stored grant (`GET /grants`, `POST /grants/{jti}/revoke`; DESIGN §8.7), never the token. */
export interface Grant {
  jti: string;
  device_id: string;
  subject: string;
  skill: string;
  tier: string;
  audience: string;
  /** Owner subject, `device:<id>` or `api_key:<id>`. */
  issued_by: string;
  issued_at: string;
  expires_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
  /** Not revoked and not expired. */
  active: boolean;
}

/** `GET /api/v1/grants` query (DESIGN §8.7): `active` true = not revoked nor expired; `limit` 1-200; `cursor` = the previous `next_cursor`. */
export interface GrantListQuery {
  device_id?: string;
  active?: boolean;
  cursor?: string;
  limit?: number;
}

/** A page of grants, newest first (DESIGN §8.7); `next_cursor` is null on the last page. */
export interface GrantPage {
  grants: Grant[];
  next_cursor: string | null;
}

/** `POST /api/v1/grants/validate` body (DESIGN §8.7): `audience` names the validator and must equal the token's `aud` (RFC 7519 §4.1.3). */
export interface ValidateGrantRequest {
  token: string;
  skill?: string;
  audience: string;
}

/** The checks of SPT validation (DESIGN §8.7). */
export type GrantCheck = 'signature' | 'expiration' | 'revocation' | 'skill' | 'audience';

/** The claims of a valid-signature SPT (DESIGN §8.7); `iat`/`exp` are NumericDates (seconds). */
export interface GrantClaims {
  iss: string;
  sub: string;
  skill: string;
  tier: TrustTier;
  aud: string;
  jti: string;
  iat: number;
  exp: number;
}

/** `POST /api/v1/grants/validate` answer (DESIGN §8.7): a failing token answers `valid: false` (HTTP 200); `claims` is absent when the signature does not verify. */
export interface GrantValidation {
  valid: boolean;
  checks: Array<{ check: GrantCheck; passed: boolean }>;
  claims?: GrantClaims;
}

/** `GET /api/v1/grants/jwks` (DESIGN §8.7): the SPT verification key(s) as a JWK Set (RFC 7517). */
export interface GrantJwks {
  keys: Array<{ kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' }>;
}

/** The stages of the skill policy pipeline (DESIGN §8.6), in order. */
export type SkillPipelineStage = 'identity' | 'trust_floor' | 'grant' | 'rate' | 'rules';

/**
 * `POST /api/v1/skills/check` body (DESIGN §8.6): `device_id` is required when an owner checks on
 * the agent's behalf; `target` (hub address or `did:hub:…`) checks a delegation; `args` are never
 * stored nor evaluated; `spt` presents a token, else an active issued grant is looked up.
 */
export interface SkillCheckRequest {
  skill: string;
  device_id?: string;
  target?: string;
  tool?: string;
  model?: string;
  args?: unknown;
  spt?: string;
}

/** `POST /api/v1/skills/check` answer (DESIGN §8.6), HTTP 200 whether allowed or not. */
export interface SkillCheckResult {
  allowed: boolean;
  decided_by: SkillPipelineStage;
  reason: string;
  stages: Array<{ stage: SkillPipelineStage; passed: boolean; detail: string }>;
}

// ---------------------------------------------------------------- shadow sessions (SPEC §2.14, §3.4, §4.17; DESIGN §8.8, §8.20)

/** Autonomy levels of a shadow session, lowest first (SPEC §2.14). */
export type ShadowLevel = 'shadow' | 'supervised' | 'autonomous';

/** Shadow session configuration (SPEC §2.14): a count, a 0..1 ratio and hours. */
export interface ShadowConfig {
  min_observations: number;
  agreement_threshold: number;
  critical_miss_window_hours: number;
}

/** Evidence of the current level: observations recorded at it since `level_since` (SPEC §2.14). */
export interface ShadowStats {
  observations: number;
  agreed: number;
  agreement_rate: number;
  critical_misses: number;
}

/** A shadow session (SPEC §2.14, §4.17; DESIGN §8.8). */
export interface ShadowSession {
  session_id: string;
  device_id: string;
  skill_name: string;
  decision_class: string;
  config: ShadowConfig;
  level: ShadowLevel;
  level_since: string;
  created_at: string;
  stats: ShadowStats;
}

/** `POST /api/v1/shadow/sessions` body (SPEC §4.17): unset config keys take the service defaults. */
export interface CreateShadowSessionRequest {
  device_id: string;
  /** The capability evaluated (1-200 characters). */
  skill_name: string;
  /** The type of decision (1-200 characters). */
  decision_class: string;
  config?: Partial<ShadowConfig>;
}

/** `GET /api/v1/shadow/sessions` query (SPEC §4.17): `limit` 1-200; `cursor` = the previous `next_cursor`. */
export interface ShadowSessionListQuery {
  device_id?: string;
  level?: ShadowLevel;
  cursor?: string;
  limit?: number;
}

/** A page of shadow sessions, oldest first; `next_cursor` is null on the last page. */
export interface ShadowSessionPage {
  sessions: ShadowSession[];
  next_cursor: string | null;
}

/**
 * `POST /api/v1/shadow/sessions/{session_id}/record-human-decision` body (SPEC §4.17; DESIGN §8.8):
 * the actions are compared after trimming, case-insensitively; `critical_miss` marks a
 * disagreement as a critical miss (400 on an agreement).
 */
export interface RecordShadowDecisionRequest {
  /** Unique within the session. */
  observation_id: string;
  agent_recommendation: { action: string; confidence: number; reasoning?: string };
  human_decision: { action: string; notes?: string };
  critical_miss?: boolean;
}

/** `POST …/record-human-decision` answer (201, SPEC §4.17). */
export interface ShadowObservation {
  observation_id: string;
  agreed: boolean;
  critical_miss: boolean;
  level: ShadowLevel;
  recorded_at: string;
  stats: ShadowStats;
}

/** `GET /api/v1/shadow/sessions/{session_id}/graduation-check` (SPEC §3.4, §4.17; DESIGN §8.8): the three gates against the current level's evidence. */
export interface ShadowGraduationCheck {
  eligible: boolean;
  current_level: ShadowLevel;
  /** Null at `autonomous`. */
  next_level: ShadowLevel | null;
  gates: {
    min_observations: { required: number; actual: number; met: boolean };
    agreement_threshold: { required: number; actual: number; met: boolean };
    critical_miss_window: { window_hours: number; misses: number; met: boolean };
  };
}

/** `POST /api/v1/shadow/sessions/{session_id}/demote` body (SPEC §4.17): a lower level and a reason (1-500 characters). */
export interface DemoteShadowSessionRequest {
  level: ShadowLevel;
  reason: string;
}

// ---------------------------------------------------------------- federation agreements (SPEC §2.12, §4.13)

/** Status of a federation agreement (SPEC §2.12). */
export type FederationStatus = 'pending' | 'active' | 'expired' | 'revoked';

/** A federation agreement (SPEC §2.12, §4.13); `role` is the caller's side. */
export interface FederationAgreement {
  id: string;
  tenant_id: string;
  partner_tenant_id: string;
  trust_floor: number;
  allowed_capabilities: string[];
  audit_sharing: boolean;
  expires_at: string;
  status: FederationStatus;
  role: 'proposer' | 'partner';
  created_at: string;
  accepted_at: string | null;
}

/** `POST /api/v1/federation/agreements` body (SPEC §4.13): `trust_floor` 0..1; empty or absent `allowed_capabilities` = all; `expires_at` ISO 8601 in the future. */
export interface ProposeFederationRequest {
  partner_tenant_id: string;
  trust_floor: number;
  allowed_capabilities?: string[];
  audit_sharing?: boolean;
  expires_at: string;
}

// ---------------------------------------------------------------- A2A channels (SPEC §2.11, §3.5, §4.13; DESIGN §8.5)

/** Status of an A2A channel (SPEC §2.11). */
export type A2aChannelStatus = 'pending' | 'approved' | 'active' | 'rejected' | 'revoked';

/** An A2A channel (SPEC §2.11: camelCase field names); `federated` when the agents belong to different tenants. */
export interface A2aChannel {
  channelId: string;
  initiatorHubAddress: string;
  responderHubAddress: string;
  conversationId: string | null;
  status: A2aChannelStatus;
  capability: string | null;
  federated: boolean;
  agreementId: string | null;
  createdAt: string;
  approvedAt: string | null;
  activatedAt: string | null;
}

/** `POST /api/v1/a2a/channels/request` body (SPEC §4.13): an owner names the initiating agent in `initiator_device_id`. */
export interface RequestA2aChannelRequest {
  responder_hub_address: string;
  initiator_device_id?: string;
  capability?: string;
}

/** `POST /api/v1/a2a/channels/request` answer (201): the channel, plus `channel_id`. */
export interface RequestedA2aChannel extends A2aChannel {
  channel_id: string;
}

/** `POST /api/v1/a2a/channels/{id}/messages` body (SPEC §4.13): base64 envelope; `traceparent` is W3C Trace Context. */
export interface A2aMessageInput {
  header_blob: string;
  ciphertext: string;
  message_type?: MessageType;
  priority?: Priority;
  traceparent?: string;
}

/** `POST /api/v1/a2a/channels/{id}/messages` answer (201): what both tenants' policies made of the message. */
export interface A2aSendResult {
  message_id: string;
  channel_id: string;
  outcome: 'delivered' | 'notified' | 'held' | 'blocked';
  held_message_id?: string;
  timestamp: string;
  traceparent: string | null;
}

/** One A2A channel message (SPEC §4.13); `cursor` is an opaque total-ordered position usable as `since`. */
export interface A2aMessage {
  channel_id: string;
  message_id: string;
  sender_device_id: string;
  header_blob: string;
  ciphertext: string;
  /** A SPEC §2.4 message type, or `key_exchange` for a relayed handshake. */
  message_type: string;
  priority: string;
  timestamp: string;
  traceparent: string | null;
  cursor: string;
}

/** `GET /api/v1/a2a/channels/{id}/messages` query: `since` = ISO timestamp or `next_cursor`. */
export interface A2aHistoryQuery {
  since?: string;
  limit?: number;
}

/** A page of A2A channel messages, oldest first; `next_cursor` is null on the last page. */
export interface A2aMessagePage {
  messages: A2aMessage[];
  next_cursor: string | null;
}

// ---------------------------------------------------------------- workspaces, team rooms (SPEC §2.5, §4.13)

/** A member's role in a workspace (SPEC §2.5). */
export type WorkspaceRole = 'admin' | 'member';

/** A workspace member: an ACTIVE agent device of the tenant. */
export interface WorkspaceMember {
  device_id: string;
  name: string;
  status: string;
  role: WorkspaceRole;
  added_at: string;
}

/** A workspace with its members (`POST /workspaces`, `GET /workspaces/{id}`, `POST …/members`; SPEC §4.13). */
export interface Workspace {
  id: string;
  name: string;
  role: 'owner';
  members: WorkspaceMember[];
  created_at: string;
}

/** One row of `GET /api/v1/workspaces` (SPEC §4.13): `member_count` for owners only. */
export interface WorkspaceSummary {
  id: string;
  name: string;
  role: 'owner' | WorkspaceRole;
  member_count?: number;
}

/** `POST /api/v1/workspaces` body (SPEC §4.13): name 1-100 characters; members ACTIVE agent devices (default role `member`). */
export interface CreateWorkspaceRequest {
  name: string;
  members?: Array<{ device_id: string; role?: WorkspaceRole }>;
}

/** A team room (SPEC §2.5, §4.13): a room in a workspace; `id` equals `room_id`. */
export interface TeamRoom extends Room {
  id: string;
}

/** `POST /api/v1/team-rooms` body (SPEC §4.13): participants are workspace members or owner devices. */
export interface CreateTeamRoomRequest {
  workspace_id: string;
  name: string;
  member_device_ids: string[];
  security_level?: RoomSecurityLevel;
}

/** One row of `GET /api/v1/team-rooms` (SPEC §4.13). */
export interface TeamRoomSummary {
  id: string;
  name: string;
  participant_count: number;
  workspace_id: string;
}

// ---------------------------------------------------------------- connections (SPEC §4.10)

/** The kinds of connection of a tenant (SPEC §4.10). */
export type ConnectionType = 'device' | 'a2a_channel' | 'federation';

/**
 * One connection (SPEC §4.10): `status` is the device status, the A2A channel status (SPEC §2.11)
 * or the agreement status; `peer` the other side's hub address (A2A) or tenant id (federation).
 */
export interface Connection {
  connection_id: string;
  type: ConnectionType;
  status: string;
  label: string;
  peer?: string;
  created_at: string;
  last_seen?: string | null;
}

/** `GET /api/v1/connections/{connection_id}` (SPEC §4.10): the connection with the details of its type. */
export interface ConnectionDetail extends Connection {
  device?: Device;
  a2a_channel?: {
    channel_id: string;
    direction: 'outbound' | 'inbound' | 'internal';
    initiator_hub_address: string;
    responder_hub_address: string;
    initiator_device_id: string | null;
    responder_device_id: string | null;
    conversation_id: string | null;
    capability: string | null;
    agreement_id: string | null;
    approved_at: string | null;
    activated_at: string | null;
    closed_at: string | null;
    closed_reason: string | null;
  };
  federation?: {
    agreement_id: string;
    direction: 'proposed' | 'received';
    proposer_tenant_id: string;
    partner_tenant_id: string;
    peer_tenant_name: string | null;
    trust_floor: number;
    allowed_capabilities: string[];
    audit_sharing: boolean;
    expires_at: string;
    accepted_at: string | null;
    revoked_at: string | null;
  };
}

/** One row of `GET /api/v1/owner-connections` (SPEC §4.10): an owner device of the caller with its presence. */
export interface OwnerConnection extends Device {
  online: boolean;
}
