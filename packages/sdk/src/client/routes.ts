/**
 * The single route table of the REST client: every route the Parley service serves today
 * (SPEC §4.1–§4.5, DESIGN §5/§7), by client method name, with its HTTP method, path template and
 * authentication. `ParleyClient` builds every request from this table, and a drift test compares
 * it with the service's OpenAPI document (`GET /api/v1/openapi.json`).
 *
 * Path templates use OpenAPI's `{name}` placeholders; paths are absolute (the `/api/v1` prefix is
 * part of the template, `/health`, `/.well-known/jwks.json` and `/1.0/identifiers/{did}` live outside it).
 */

import { ROUTES as CONTRACT_ROUTES, type AuthMode, type HttpMethod } from '@parley/protocol';

export { API_PREFIX, WS_PATH, fillPath, type HttpMethod } from '@parley/protocol';

/** Who authenticates a route (SPEC §5); see `AuthMode` in `@parley/protocol` (`owner-any` is sent as `owner`). */
export type RouteAuth = AuthMode;

/** One row of the route table (method, absolute path template with `{param}` placeholders, auth). */
export interface RouteSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: RouteAuth;
}

const r = (method: HttpMethod, path: string, auth: RouteAuth): RouteSpec => ({ method, path, auth });
const v1 = (p: string) => `/api/v1${p}`;

/** Rows not yet moved into the `@parley/protocol` contract (with their schemas). */
const LEGACY_ROUTES = {
  // platform (SPEC §4.1)
  health: r('GET', '/health', 'none'),
  jwks: r('GET', '/.well-known/jwks.json', 'none'),
  legalTerms: r('GET', v1('/legal/terms'), 'none'),
  billingPlans: r('GET', v1('/billing/plans'), 'none'),
  capabilities: r('GET', v1('/capabilities'), 'none'),
  // tenants, invites (SPEC §4.2)
  createTenant: r('POST', v1('/tenants'), 'owner'),
  createInvite: r('POST', v1('/invites'), 'owner'),
  listInvites: r('GET', v1('/invites'), 'owner'),
  revokeInvite: r('POST', v1('/invites/{id}/revoke'), 'owner'),
  deleteInvite: r('DELETE', v1('/invites/{id}'), 'owner'),
  // enrollment (SPEC §4.3)
  enroll: r('POST', v1('/enroll'), 'none'),
  // devices (SPEC §4.4, DESIGN §5)
  listDevices: r('GET', v1('/devices'), 'owner'),
  deviceStatus: r('GET', v1('/devices/{id}/status'), 'none'),
  activateDevice: r('POST', v1('/devices/{id}/activate'), 'none'),
  tokenChallenge: r('POST', v1('/devices/{id}/token/challenge'), 'none'),
  renewToken: r('POST', v1('/devices/{id}/token'), 'none'),
  devicePresence: r('GET', v1('/devices/{id}/presence'), 'owner'),
  deviceKeys: r('GET', v1('/devices/{id}/keys'), 'owner'),
  deviceMessages: r('GET', v1('/devices/{id}/messages'), 'device'),
  devicePending: r('GET', v1('/devices/{id}/pending'), 'device'),
  approveDevice: r('PATCH', v1('/devices/{id}/approve'), 'owner'),
  rejectDevice: r('PATCH', v1('/devices/{id}/reject'), 'owner'),
  revokeDevice: r('PATCH', v1('/devices/{id}/revoke'), 'owner'),
  setSelfWebhook: r('PATCH', v1('/devices/self/webhook'), 'device'),
  setDeviceWebhook: r('PATCH', v1('/devices/{id}/webhook'), 'owner'),
  renameDevice: r('PATCH', v1('/devices/{id}'), 'owner'),
  deleteDevice: r('DELETE', v1('/devices/{id}'), 'owner'),
  removeOwnerDevice: r('DELETE', v1('/devices/{id}/remove'), 'owner'),
  registerOwnerDevice: r('POST', v1('/devices/register'), 'owner'),
  relinkDevice: r('POST', v1('/devices/{id}/relink'), 'owner'),
  // conversations, messages, topics (SPEC §4.5)
  listConversations: r('GET', v1('/conversations'), 'owner'),
  sendMessage: r('POST', v1('/conversations/{id}/messages'), 'owner'),
  conversationMessages: r('GET', v1('/conversations/{id}/messages'), 'owner'),
  conversationKeys: r('GET', v1('/conversations/{id}/keys'), 'owner-or-device'),
  listTopics: r('GET', v1('/topics'), 'owner'),
  createTopic: r('POST', v1('/topics'), 'owner'),
  renameTopic: r('PATCH', v1('/topics/{id}'), 'owner'),
  archiveTopic: r('POST', v1('/topics/{id}/archive'), 'owner'),
  // MLS KeyPackage directory (SPEC §1.3, RFC 9420 §10)
  publishKeyPackages: r('POST', v1('/mls/key-packages'), 'owner-or-device'),
  keyPackageCount: r('GET', v1('/mls/key-packages/{device_id}'), 'owner-or-device'),
  claimKeyPackage: r('POST', v1('/mls/key-packages/claim'), 'owner-or-device'),
  // attachments, push (SPEC §4.7)
  uploadAttachment: r('POST', v1('/attachments/upload'), 'owner-or-device'),
  downloadAttachment: r('GET', v1('/attachments/{blob_id}'), 'owner-or-device'),
  registerPushToken: r('POST', v1('/push/register'), 'owner'),
  // API keys (SPEC §4.8)
  createApiKey: r('POST', v1('/api-keys'), 'owner'),
  listApiKeys: r('GET', v1('/api-keys'), 'owner'),
  revokeApiKey: r('POST', v1('/api-keys/{id}/revoke'), 'owner'),
  rotateApiKey: r('POST', v1('/api-keys/{id}/rotate'), 'owner'),
  deleteApiKey: r('DELETE', v1('/api-keys/{id}'), 'owner'),
  // rooms (SPEC §2.5, §4.6; DESIGN §8.5)
  createRoom: r('POST', v1('/rooms'), 'owner'),
  listRooms: r('GET', v1('/rooms'), 'owner'),
  getRoom: r('GET', v1('/rooms/{id}'), 'any'),
  updateRoom: r('PATCH', v1('/rooms/{id}'), 'owner'),
  addRoomMember: r('POST', v1('/rooms/{id}/members'), 'owner'),
  removeRoomMember: r('DELETE', v1('/rooms/{id}/members/{device_id}'), 'owner'),
  sendRoomMessage: r('POST', v1('/rooms/{id}/messages'), 'owner'),
  roomTimeline: r('GET', v1('/rooms/{id}/messages'), 'any'),
  // policies, held messages (SPEC §2.7, §3.8, §4.9; DESIGN §8.3, §8.5)
  createPolicy: r('POST', v1('/policies'), 'owner'),
  listPolicies: r('GET', v1('/policies'), 'owner'),
  updatePolicy: r('PATCH', v1('/policies/{id}'), 'owner'),
  deletePolicy: r('DELETE', v1('/policies/{id}'), 'owner'),
  listHeldMessages: r('GET', v1('/policies/held-messages'), 'owner'),
  approveHeldMessage: r('POST', v1('/policies/held-messages/{id}/approve'), 'owner'),
  denyHeldMessage: r('POST', v1('/policies/held-messages/{id}/deny'), 'owner'),
  // tenant settings, client-side scan rules (SPEC §4.14; DESIGN §8.22)
  getSettings: r('GET', v1('/settings'), 'owner'),
  updateSettings: r('PATCH', v1('/settings'), 'owner'),
  getScanRules: r('GET', v1('/scan-rules'), 'any'),
  updateScanRules: r('POST', v1('/scan-rules'), 'owner'),
  listScanRuleVersions: r('GET', v1('/scan-rules/versions'), 'owner'),
  // telemetry: OTLP/HTTP ingest, span queries, summary, dashboard activity (SPEC §2.15, §4.14; DESIGN §8.18)
  ingestTelemetry: r('POST', v1('/telemetry/ingest'), 'device-or-apikey'),
  listTelemetry: r('GET', v1('/telemetry/{hub_id}'), 'owner'),
  getTelemetrySummary: r('GET', v1('/telemetry/{hub_id}/summary'), 'owner'),
  getDashboardActivity: r('GET', v1('/dashboard/activity'), 'owner'),
  // audit log (SPEC §4.14; DESIGN §8.10, §8.22)
  listAuditEvents: r('GET', v1('/audit/events'), 'owner'),
  verifyAudit: r('GET', v1('/audit/verify'), 'owner'),
  // trust scores (SPEC §2.9, §3.3, §3.9, §4.12; DESIGN §8.14; docs/trust-scoring.md)
  getTrustFleet: r('GET', v1('/trust-scores/fleet'), 'owner'),
  recomputeTrust: r('POST', v1('/trust-scores/recompute'), 'owner'),
  getTrustScore: r('GET', v1('/trust-scores/{agent_id}'), 'owner'),
  getTrustHistory: r('GET', v1('/trust-scores/{agent_id}/history'), 'owner'),
  getTrustReport: r('GET', v1('/trust-scores/{agent_id}/report'), 'owner'),
  getTrustDrift: r('GET', v1('/trust-scores/{agent_id}/drift'), 'owner'),
  recalibrateTrustDrift: r('POST', v1('/trust-scores/{agent_id}/drift/recalibrate'), 'owner'),
  // Skill Permission Tokens and the skill policy pipeline (DESIGN §8.6, §8.7)
  issueGrant: r('POST', v1('/grants'), 'any'),
  listGrants: r('GET', v1('/grants'), 'owner'),
  validateGrant: r('POST', v1('/grants/validate'), 'public'),
  getGrantKeys: r('GET', v1('/grants/jwks'), 'none'),
  revokeGrant: r('POST', v1('/grants/{jti}/revoke'), 'owner'),
  checkSkillPolicy: r('POST', v1('/skills/check'), 'any'),
  // shadow sessions (SPEC §2.14, §3.4, §4.17; DESIGN §8.8, §8.20)
  createShadowSession: r('POST', v1('/shadow/sessions'), 'owner'),
  listShadowSessions: r('GET', v1('/shadow/sessions'), 'owner'),
  getShadowSession: r('GET', v1('/shadow/sessions/{session_id}'), 'owner'),
  recordShadowDecision: r('POST', v1('/shadow/sessions/{session_id}/record-human-decision'), 'owner'),
  getShadowGraduationCheck: r('GET', v1('/shadow/sessions/{session_id}/graduation-check'), 'owner'),
  graduateShadowSession: r('POST', v1('/shadow/sessions/{session_id}/graduate'), 'owner'),
  demoteShadowSession: r('POST', v1('/shadow/sessions/{session_id}/demote'), 'owner'),
  // hub address registry (SPEC §4.10, DESIGN §8.13/§8.15)
  registerHub: r('POST', v1('/hub/register'), 'owner'),
  createHubIdentity: r('POST', v1('/hub/identities'), 'owner'),
  listHubIdentities: r('GET', v1('/hub/identities'), 'owner'),
  getHubIdentity: r('GET', v1('/hub/identities/{id}'), 'owner'),
  // capabilities, public profiles, search, certification (SPEC §2.8, §3.3, §4.10; DESIGN §8.15, §8.16)
  listHubCapabilities: r('GET', v1('/hub/{hub_address}/capabilities'), 'owner'),
  registerHubCapability: r('POST', v1('/hub/{hub_address}/capabilities'), 'owner'),
  getHubProfile: r('GET', v1('/hub/{hub_address}/profile'), 'public'),
  updateHubProfile: r('PATCH', v1('/hub/{hub_address}/profile'), 'owner'),
  searchHub: r('GET', v1('/hub/search'), 'public'),
  certifyHubIdentity: r('POST', v1('/hub/identities/{id}/certify'), 'owner'),
  // DID documents and resolution (SPEC §4.10, §8; DESIGN §8.15); `/1.0/identifiers` is the DIF Universal Resolver driver path, outside /api/v1
  resolveHub: r('GET', v1('/hub/resolve/{address}'), 'public'),
  getDidDocument: r('GET', v1('/hub/{hub_address}/did'), 'public'),
  updateDid: r('PATCH', v1('/hub/{hub_address}/did'), 'owner'),
  resolveDid: r('GET', '/1.0/identifiers/{did}', 'public'),
  // verification and credentials (SPEC §2.10, §4.11, §8; DESIGN §8.16); the trust context lives outside /api/v1
  verifyAgent: r('GET', v1('/verify/{hub_address}'), 'public'),
  verifyCredential: r('POST', v1('/verify/credential'), 'public'),
  issueCredential: r('POST', v1('/hub/identities/{id}/credentials'), 'owner'),
  revokeCredential: r('POST', v1('/hub/credentials/{id}/revoke'), 'owner'),
  trustContext: r('GET', '/contexts/trust/v1', 'none'),
  // federation agreements (SPEC §2.12, §4.13)
  proposeFederation: r('POST', v1('/federation/agreements'), 'owner'),
  listFederationAgreements: r('GET', v1('/federation/agreements'), 'owner'),
  acceptFederation: r('POST', v1('/federation/agreements/{id}/accept'), 'owner'),
  renewFederation: r('POST', v1('/federation/agreements/{id}/renew'), 'owner'),
  revokeFederation: r('POST', v1('/federation/agreements/{id}/revoke'), 'owner'),
  // agent-to-agent channels (SPEC §2.11, §3.5, §4.13; DESIGN §8.5)
  requestA2aChannel: r('POST', v1('/a2a/channels/request'), 'owner-or-apikey'),
  listA2aChannels: r('GET', v1('/a2a/channels'), 'owner-or-apikey'),
  approveA2aChannel: r('POST', v1('/a2a/channels/{id}/approve'), 'owner'),
  rejectA2aChannel: r('POST', v1('/a2a/channels/{id}/reject'), 'owner'),
  revokeA2aChannel: r('POST', v1('/a2a/channels/{id}/revoke'), 'owner-or-apikey'),
  sendA2aMessage: r('POST', v1('/a2a/channels/{id}/messages'), 'device-or-apikey'),
  a2aHistory: r('GET', v1('/a2a/channels/{id}/messages'), 'device-or-apikey'),
  // workspaces (SPEC §2.5, §4.13)
  createWorkspace: r('POST', v1('/workspaces'), 'owner'),
  listWorkspaces: r('GET', v1('/workspaces'), 'owner-or-apikey'),
  getWorkspace: r('GET', v1('/workspaces/{id}'), 'owner'),
  addWorkspaceMember: r('POST', v1('/workspaces/{id}/members'), 'owner'),
  removeWorkspaceMember: r('DELETE', v1('/workspaces/{id}/members/{device_id}'), 'owner'),
  // team rooms (SPEC §2.5, §4.13)
  createTeamRoom: r('POST', v1('/team-rooms'), 'owner'),
  listTeamRooms: r('GET', v1('/team-rooms'), 'owner-or-apikey'),
  // connections (SPEC §4.10)
  listConnections: r('GET', v1('/connections'), 'owner'),
  getConnection: r('GET', v1('/connections/{connection_id}'), 'owner'),
  ownerConnections: r('GET', v1('/owner-connections'), 'owner'),
} as const satisfies Record<string, RouteSpec>;

/** Every REST route, keyed by the `ParleyClient` method that calls it. */
export const ROUTES = { ...LEGACY_ROUTES, ...CONTRACT_ROUTES };

/** Name of a route in {@link ROUTES} (= the `ParleyClient` method calling it). */
export type RouteName = keyof typeof ROUTES;
