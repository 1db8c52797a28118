/**
 * Request and response shapes of the Parley REST API as served today (SPEC §4.1–§4.5, DESIGN §7).
 * Field names are the wire's snake_case; timestamps are ISO 8601 strings; keys and signatures are
 * lowercase hex (Ed25519 / X25519 keys: 64 hex characters, signatures: 128); `header_blob` and
 * `ciphertext` are base64 strings (SPEC §2.4).
 */

import type { Device } from '@parley/protocol';

/** Device status (SPEC §2.3, uppercase on the wire per DESIGN §7), message types and priorities (SPEC §2.4), device health (DESIGN §8.2). */
export type { DeviceHealth, DeviceStatus, MessageType, Priority } from '@parley/protocol';

// ---------------------------------------------------------------- platform (SPEC §4.1)
export type { BillingPlan, BillingPlansResponse, CapabilitiesResponse, HealthResponse, JwksResponse, LegalTermsResponse } from '@parley/protocol';

// ---------------------------------------------------------------- tenants, invites (SPEC §4.2)
export type { CreatedInvite, CreateInviteRequest, CreateTenantRequest, Invite, InviteList, InviteStatus, Tenant } from '@parley/protocol';

// ---------------------------------------------------------------- enrollment (SPEC §4.3)
export type { EnrollRequest, EnrollResponse } from '@parley/protocol';

// ---------------------------------------------------------------- devices (SPEC §4.4)
export type {
  ActivateRequest,
  ActivateResponse,
  ConversationLink,
  Device,
  DeviceHistoryQuery,
  DeviceKeys,
  DeviceList,
  DevicePending,
  DevicePresence,
  DeviceStatusResponse,
  DeviceToken,
  RegisterOwnerDeviceRequest,
  RegisterOwnerDeviceResponse,
  RelinkResponse,
  RenameDeviceRequest,
  RenewTokenRequest,
  TokenChallenge,
  WebhookRequest,
  WebhookResponse,
} from '@parley/protocol';

// ---------------------------------------------------------------- conversations, messages (SPEC §4.5)
export type {
  Conversation,
  ConversationKeys,
  ConversationList,
  ConversationListQuery,
  CreateTopicRequest,
  HistoryQuery,
  MessageInput,
  MessagePage,
  RenameTopicRequest,
  StoredMessage,
  Topic,
  TopicList,
  TopicListQuery,
} from '@parley/protocol';

// ---------------------------------------------------------------- MLS KeyPackages (SPEC §1.3, RFC 9420 §10)
export type { ClaimedKeyPackage, ClaimKeyPackageRequest, KeyPackageCount, PublishKeyPackagesRequest, PublishKeyPackagesResponse } from '@parley/protocol';

export type { ApiKey, ApiKeyEnv, ApiKeyList, ApiKeyWithSecret, CreateApiKeyRequest } from '@parley/protocol';

// ---------------------------------------------------------------- attachments, push (SPEC §4.7)
export type { AttachmentInfo, PushPlatform, PushRegistration, RegisterPushTokenRequest } from '@parley/protocol';

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
