/**
 * Database schema (drizzle-orm), split by contract area; this index re-exports every table, sequence
 * and custom column type by name (it is what `db/client.ts` hands to drizzle and what
 * `drizzle.config.ts` reads). Every tenant-owned table carries `tenant_id` and is protected by the
 * row-level security policy of design §4, created in the SQL migration `0001_rls.sql`. Tables
 * without `tenant_id` (`platform.ts`: `signing_keys`, `platform_keys`, `scheduled_jobs`) are
 * platform tables the application role cannot read.
 *
 * Area files import each other only along the foreign-key graph (tenants -> devices ->
 * workspaces -> rooms -> policies, tenants -> federation, …), so they stay acyclic. There are no
 * drizzle `relations()`.
 */
export { bytea, tsvector } from './columns.js';
export { tenants, memberships, invites } from './tenants.js';
export { devices, deviceChallenges, devicePresence, keyBindingNonces } from './devices.js';
export { conversationGroups, conversations, topics, messages } from './conversations.js';
export { signingKeys, platformKeys, scheduledJobs } from './platform.js';
export { mlsKeyPackages, pqPrekeys, PREKEY_KINDS, type PrekeyKind } from './mls.js';
export { apiKeys } from './api-keys.js';
export { attachments, pushTokens } from './attachments.js';
export { pushDeliveries } from './push.js';
export { workspaces, workspaceMembers } from './workspaces.js';
export { rooms, roomMembers, roomConversations, roomReleaseSeq, roomMessages, roomEnvelopes } from './rooms.js';
export { policies, heldMessages, policyEvaluations, policyAllowCounts, policyEpochs } from './policies.js';
export { hubIdentities, hubVerificationMethods, hubCapabilities, hubTierChanges, issuedCredentials } from './hub.js';
export { federationAgreements, a2aChannels, a2aMessages } from './federation.js';
export { webhookDeliveries } from './webhooks.js';
export { decisions } from './decisions.js';
export { tenantSettings, scanRuleSets } from './settings.js';
export { auditEvents, auditTreeNodes, auditCheckpoints } from './audit.js';
export { keyDirectoryEntries, keyDirectoryCosignatures } from './key-directory.js';
export { telemetryRollupDirty, telemetrySpanRollups, telemetrySpans } from './telemetry.js';
export { telemetryExportSettings, telemetryExportOutbox } from './telemetry-export.js';
export { trustSnapshots, trustDailyScores, trustBaselines } from './trust.js';
export { skillGrants } from './grants.js';
export { shadowSessions, shadowObservations } from './shadow.js';
export {
  marketplaceListings,
  marketplaceRentals,
  marketplaceRentalMessages,
  marketplaceDisputes,
  marketplaceDisputeNotes,
  marketplacePayouts,
  connectedAccounts,
  paymentMethods,
  ledgerTransactions,
  ledgerEntries,
  processorEvents,
  localProcessorEvents,
} from './marketplace.js';
export { agentSpendCaps, agentSpendAlerts, telemetryTokenRollups } from './spend.js';
export { deviceMessageCounts, messageReceipts, readMarks, roomReceiptBatches } from './receipts.js';
