/**
 * Request and response shapes of the Parley REST API as served today (SPEC §4.1–§4.5, DESIGN §7).
 * Field names are the wire's snake_case; timestamps are ISO 8601 strings; keys and signatures are
 * lowercase hex (Ed25519 / X25519 keys: 64 hex characters, signatures: 128); `header_blob` and
 * `ciphertext` are base64 strings (SPEC §2.4).
 */

import type { TrustDimension, TrustTier, TrustWindow } from '@parley/protocol';

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

export type { ApiKey, ApiKeyEnv, ApiKeyList, ApiKeyWithSecret, CreateApiKeyRequest } from '@parley/protocol';

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

export type {
  AddRoomMemberRequest,
  CreateRoomRequest,
  DeliveryOutcome,
  Room,
  RoomConversation,
  RoomDelivery,
  RoomEnvelope,
  RoomList,
  RoomMember,
  RoomMessageInput,
  RoomMessageResult,
  RoomSecurityLevel,
  RoomSummary,
  RoomTimelineEntry,
  RoomTimelinePage,
  RoomTimelineQuery,
  UpdateRoomRequest,
} from '@parley/protocol';

// ---------------------------------------------------------------- policies, held messages (SPEC §2.7, §3.8, §4.9)

export type {
  CreatePolicyRequest,
  HeldMessage,
  HeldMessageList,
  HeldMessageQuery,
  HeldMessageStatus,
  Policy,
  PolicyAction,
  PolicyConditions,
  PolicyList,
  PolicyScope,
  PolicyScopeInput,
  UpdatePolicyRequest,
} from '@parley/protocol';

// ---------------------------------------------------------------- hub identities (SPEC §2.8, §3.3, §4.10; DESIGN §8.13, §8.15, §8.16)
export type {
  CapabilitySla,
  CertificationCheckName,
  CertifyResult,
  HubCapability,
  HubCapabilityInput,
  HubIdentity,
  HubProfile,
  HubSearchQuery,
  RegisterHubRequest,
  TrustTier,
  UpdateHubProfileRequest,
} from '@parley/protocol';

// ---------------------------------------------------------------- verification, credentials (SPEC §2.9, §2.10, §4.11; DESIGN §8.16)
export type {
  AgentVerification,
  CredentialCheckName,
  CredentialVerification,
  IssuedCredential,
  TrustDimension,
  TrustScores,
  TrustTierCredential,
  TrustWindow,
  VerifyAgentQuery,
} from '@parley/protocol';

// ---------------------------------------------------------------- decisions (SPEC §2.4, §2.16, §4.15; DESIGN §8.4, §8.19)
export type { CreateDecisionRequest, Decision, DecisionListQuery, DecisionPage, DecisionResponseEvent, DecisionStatus, ResolveDecisionRequest } from '@parley/protocol';

// ---------------------------------------------------------------- telemetry (SPEC §2.15, §4.14; DESIGN §8.18)
export type {
  DashboardActivityQuery,
  OtlpExportRequest,
  OtlpExportResponse,
  SpanStatus,
  TelemetryQuery,
  TelemetrySpan,
  TelemetrySpanPage,
  TelemetrySummary,
  TelemetrySummaryEntry,
  TelemetrySummaryQuery,
} from '@parley/protocol';

// ------------------------------------------------------------ settings, scan rules (SPEC §4.14; DESIGN §8.22)

export type { ScanRule, ScanRuleSet, ScanRuleVersion, ScanRuleVersionList, TenantSettings, TenantSettingsPatch, UpdateScanRulesRequest } from '@parley/protocol';

// ---------------------------------------------------------------- audit log (SPEC §4.14; DESIGN §8.10, §8.22)
export type { AuditChainVerdict, AuditEvent, AuditEventPage, AuditEventQuery, AuditEventType } from '@parley/protocol';

// ---------------------------------------------------------------- trust scores (SPEC §2.9, §3.3, §3.9, §4.12; DESIGN §8.14, §8.21)

// TrustWindow and TrustDimension: see the verification section above.
export type {
  DriftStatus,
  TrustDimensionDrift,
  TrustDimensionMap,
  TrustDrift,
  TrustDriftBaseline,
  TrustDriftQuery,
  TrustDriftRecalibration,
  TrustFleet,
  TrustFleetAgent,
  TrustHistory,
  TrustHistoryQuery,
  TrustRecomputeSummary,
  TrustReport,
  TrustReportQuery,
  TrustReportScore,
  TrustScore,
  TrustScoreSource,
  TrustTierChange,
  TrustWindowQuery,
} from '@parley/protocol';

// ---------------------------------------------------------------- Skill Permission Tokens, skill policy (DESIGN §8.6, §8.7)
export type {
  Grant,
  GrantCheck,
  GrantClaims,
  GrantJwks,
  GrantListQuery,
  GrantPage,
  GrantValidation,
  IssuedGrant,
  IssueGrantRequest,
  RevokeGrantRequest,
  SkillCheckRequest,
  SkillCheckResult,
  SkillPipelineStage,
  SkillStageOutcome,
  ValidateGrantRequest,
} from '@parley/protocol';

// ---------------------------------------------------------------- shadow sessions (SPEC §2.14, §3.4, §4.17; DESIGN §8.8, §8.20)
export type {
  CreateShadowSessionRequest,
  DemoteShadowSessionRequest,
  RecordShadowDecisionRequest,
  ShadowConfig,
  ShadowConfigInput,
  ShadowGraduationCheck,
  ShadowLevel,
  ShadowObservation,
  ShadowSession,
  ShadowSessionListQuery,
  ShadowSessionPage,
  ShadowStats,
} from '@parley/protocol';

// ---------------------------------------------------------------- federation agreements (SPEC §2.12, §4.13)
export type { FederationAgreement, FederationStatus, ProposeFederationRequest } from '@parley/protocol';

// ---------------------------------------------------------------- A2A channels (SPEC §2.11, §3.5, §4.13; DESIGN §8.5)
export type {
  A2aChannel,
  A2aChannelStatus,
  A2aHistoryQuery,
  A2aMessage,
  A2aMessageInput,
  A2aMessagePage,
  A2aSendResult,
  RequestA2aChannelRequest,
  RequestedA2aChannel,
} from '@parley/protocol';

// ---------------------------------------------------------------- workspaces, team rooms (SPEC §2.5, §4.13)

export type {
  AddWorkspaceMemberRequest,
  CreateTeamRoomRequest,
  CreateWorkspaceRequest,
  TeamRoom,
  TeamRoomList,
  TeamRoomListQuery,
  TeamRoomSummary,
  Workspace,
  WorkspaceList,
  WorkspaceMember,
  WorkspaceRole,
  WorkspaceSummary,
} from '@parley/protocol';

// ---------------------------------------------------------------- connections (SPEC §4.10)

export type { Connection, ConnectionA2aChannel, ConnectionFederation, ConnectionList, ConnectionListQuery, ConnectionType } from '@parley/protocol';
import type { Connection, ConnectionA2aChannel, ConnectionFederation } from '@parley/protocol';

/** `GET /api/v1/connections/{connection_id}` (SPEC §4.10): the connection with the details of its type. */
export interface ConnectionDetail extends Connection {
  device?: Device;
  a2a_channel?: ConnectionA2aChannel;
  federation?: ConnectionFederation;
}

/** One row of `GET /api/v1/owner-connections` (SPEC §4.10): an owner device of the caller with its presence. */
export interface OwnerConnection extends Device {
  online: boolean;
}
