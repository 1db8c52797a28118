/**
 * What the device operations share (contract §4.3, §4.4; design §5, §7): the service's dependencies,
 * the device answer shapes (`DeviceOut`, keys, conversation links) and the device lookups
 * (`mustGet` inside a tenant transaction, `findAcrossTenants` by device id alone). Used by
 * enrollment.ts, tokens.ts, owner-devices.ts, lifecycle.ts and reads.ts.
 */
import type { ConversationLink, Device, DeviceKeys, DeviceKind, DeviceStatus, TenantSettings } from '@parley/protocol';
import type { DeviceTokenService } from '../../auth/device-tokens.js';
import type { RenewalChallenges } from '../../auth/renewal-challenges.js';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { notFound } from '../../lib/errors.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { conversations } from '../../db/schema/index.js';
import type { KeyBindingService } from '../key-binding/index.js';
import type { KeyDirectory } from '../key-directory/index.js';
import type { TargetPolicy } from '../webhooks/index.js';
import type { PresenceView } from '../../realtime/presence.js';
import { health } from './last-seen.js';
import * as repo from './repo.js';

/** Answers which devices have an open socket on any instance (realtime/presence.ts). */
export type Presence = PresenceView;

/** A device as listed to owners (design §7). */
export type DeviceOut = Device;

export function toDeviceOut(d: repo.DeviceRow): DeviceOut {
  return {
    device_id: d.id,
    name: d.name,
    platform: d.platform,
    status: d.status as DeviceStatus,
    kind: d.kind as DeviceKind,
    health: health(d.lastSeen),
    last_seen: d.lastSeen?.toISOString() ?? null,
    fingerprint: d.fingerprint,
    identity_public_key: d.identityPublicKey,
    ephemeral_public_key: d.ephemeralPublicKey,
    enrolled_at: d.enrolledAt.toISOString(),
    webhook_url: d.webhookUrl,
  };
}

export const keysOf = (d: repo.DeviceRow): DeviceKeys => ({
  device_id: d.id,
  identity_public_key: d.identityPublicKey,
  ephemeral_public_key: d.ephemeralPublicKey,
  fingerprint: d.fingerprint,
});

export const linkOf = (c: ConversationRow): ConversationLink => ({
  conversation_id: c.id,
  message_group_id: c.groupId,
  agent_device_id: c.agentDeviceId,
  owner_device_id: c.ownerDeviceId,
});

/** A stored conversation row. */
export type ConversationRow = typeof conversations.$inferSelect;

/** Why an agent device is retired: `skill_grants.revoked_reason` of its SPTs. */
export type RetireReason = 'device_revoked' | 'device_deleted';

/**
 * What other modules do when a device's life changes, in the same transaction. Composed in app.ts,
 * so this module imports none of them.
 */
export interface DeviceHooks {
  /** An agent device became ACTIVE: its group, default topic and a conversation with each ACTIVE owner device (conversations/provisioning.ts). */
  provisionAgent(tx: Tx, tenantId: string, deviceId: string): Promise<{ groupId: string; defaultTopicId: string; conversations: ConversationRow[] }>;
  /** An owner device became ACTIVE or relinks: its conversations with every agent, and those just created. */
  provisionOwnerDevice(tx: Tx, tenantId: string, deviceId: string): Promise<{ all: ConversationRow[]; created: ConversationRow[] }>;
  /** A device was revoked or removed: its MLS KeyPackages go (mls/repo.ts). */
  dropKeyPackages(tx: Tx, deviceId: string): Promise<void>;
  /** An agent device is retired: its SPTs revoked, its hub identities demoted; answers the revoked `jti`s (trust/retire.ts). */
  retireAgent(tx: Tx, tenantId: string, deviceId: string, reason: RetireReason, actor: string, now: Date): Promise<string[]>;
}

export interface DeviceServiceDeps {
  /** Other modules' part in device lifecycle changes. */
  hooks: DeviceHooks;
  db: Db;
  notifier: Notifier;
  deviceTokens: DeviceTokenService;
  /** Stateless renewal challenges (auth/renewal-challenges.ts). */
  challenges: RenewalChallenges;
  /** Key bindings of owner-device registration and activation (modules/key-binding). */
  keyBinding: KeyBindingService;
  /** The key directory every device's keys are committed to when it is created (design §8.39). */
  keyDirectory: KeyDirectory;
  presence: Presence;
  /** Seals webhook signing secrets at rest (modules/webhooks/secrets.ts). */
  secrets: SecretBox;
  /** Which webhook URLs may be registered (`WEBHOOK_ALLOW_HTTP`, `WEBHOOK_ALLOW_PRIVATE`). */
  webhookTargets: TargetPolicy;
  /**
   * The tenant settings a device's settings show (`read_receipts_enabled`, `require_post_quantum`),
   * read in the caller's transaction (default: read receipts on, post-quantum not required).
   */
  tenantSettings?: (tx: Tx, tenantId: string) => Promise<Pick<TenantSettings, 'read_receipts_enabled' | 'require_post_quantum'>>;
}

/** A device by id across tenants (the device id is the only credential of the caller); 404 unknown. */
export async function findAcrossTenants(deps: DeviceServiceDeps, id: string, reason: string): Promise<repo.DeviceRow> {
  const tenantId = await crossTenant(deps.db, reason, (tx) => repo.findDeviceTenant(tx, id));
  if (!tenantId) throw notFound('device');
  return withTenant(deps.db, tenantId, (tx) => mustGet(tx, id));
}

/** A device of the transaction's tenant (FOR UPDATE when `forUpdate`); 404 unknown. */
export async function mustGet(tx: Tx, id: string, forUpdate = false): Promise<repo.DeviceRow> {
  const d = await repo.getDevice(tx, id, forUpdate);
  if (!d) throw notFound('device');
  return d;
}
