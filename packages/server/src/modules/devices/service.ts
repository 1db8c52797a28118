/**
 * Devices (SPEC §2.3, §3.1, §4.3, §4.4; DESIGN §5, §7): enrollment with proof of possession,
 * owner approval / rejection, activation with proof of possession, revocation (403 for every later
 * call, sockets closed 4001), deletion of revoked devices, owner devices, relink, rename,
 * webhooks, presence, keys, pending counts and device-token renewal.
 *
 * Transition rules: a request for a transition the current state does not allow answers 409;
 * every multi-step write is one tenant-scoped transaction.
 *
 * Revoking or deleting a device retires the agent in the same transaction
 * ({@link retireAgentDevice}): its active Skill Permission Tokens are revoked and its hub identity
 * falls to `unverified` (DESIGN §8.7; SPEC §3.3; docs/decisions.md "Skill Permission Tokens…").
 */
import { randomUUID } from 'node:crypto';
import type { ConversationLink, Device, DeviceKeys, DeviceKind, DeviceStatus, EnrollRequest } from '@parley/protocol';
import type { DeviceTokenService } from '../../auth/device-tokens.js';
import type { RenewalChallenges } from '../../auth/renewal-challenges.js';
import type { OwnerPrincipal, Principal } from '../../auth/authenticator.js';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/service.js';
import { revokeAllGrantsOf, lockIdentitiesOfDevice } from '../grants/repo.js';
import { decideTier } from '../hub/certify.js';
import { fingerprint, hashSecret, verifyEd25519 } from '../../lib/crypto.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { badRequest, conflict, deviceRevoked, forbidden, notFound, unauthorized } from '../../lib/errors.js';
import { CLOSE, type Notifier } from '../../realtime/notifier.js';
import { provisionAgent, provisionOwnerDevice } from '../conversations/provisioning.js';
import type { ConversationRow } from '../conversations/repo.js';
import { activeDevices } from '../conversations/repo.js';
import { effectiveStatus } from '../invites/service.js';
import * as invitesRepo from '../invites/repo.js';
import { deleteKeyPackagesOf } from '../mls/repo.js';
import { newWebhookSecret, sealWebhookSecret } from '../webhooks/secrets.js';
import { webhookUrlProblem, type TargetPolicy } from '../webhooks/target.js';
import { health } from './last-seen.js';
import * as repo from './repo.js';

/** Why an agent device is retired: `skill_grants.revoked_reason` of its SPTs. */
export type RetireReason = 'device_revoked' | 'device_deleted';

/**
 * Retire an agent device inside the caller's transaction (the device row already locked FOR
 * UPDATE, so a concurrent SPT issue — which holds it FOR SHARE — has committed or waits):
 * revoke every active SPT of the device (`revoked_reason` = `reason`), then demote every hub
 * identity bound to it to `unverified` through hub/certify.ts `decideTier` (identity locked FOR
 * UPDATE; a latest score of 0 forces the fall; reason `device_revoked`: a `hub_tier_changes` row,
 * audit `hub.tier_changed`, capabilities restricted, a `svc.trust` span). An identity already
 * unverified is left as is. Answers the revoked `jti`s (for the caller's audit event).
 */
export async function retireAgentDevice(tx: Tx, tenantId: string, deviceId: string, reason: RetireReason, actor: string, now: Date): Promise<string[]> {
  const revoked = await revokeAllGrantsOf(tx, deviceId, reason, now);
  for (const identity of await lockIdentitiesOfDevice(tx, deviceId)) {
    await decideTier(tx, { tenantId, identity, latest: 0, series: [{ at: now, composite: 0 }], now, reason: 'device_revoked', actor });
  }
  return revoked;
}

/**
 * The owner device named by `X-Device-Id`, inside the caller's tenant transaction: 404 unknown,
 * 403 when it is not an owner device registered by `ownerSub`, 403 revoked.
 */
export async function requireOwnerDeviceOf(tx: Tx, ownerSub: string, deviceId: string): Promise<repo.DeviceRow> {
  const d = await repo.getDevice(tx, deviceId);
  if (!d) throw notFound('device named by X-Device-Id');
  if (d.kind !== 'owner' || d.ownerSub !== ownerSub) throw forbidden('X-Device-Id must name one of your owner devices');
  if (d.status === 'REVOKED') throw deviceRevoked();
  return d;
}

/** The host (and port) of a webhook URL, as audit events record it (never path, query or userinfo). */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

export type { DeviceStatus };

/** Answers whether a device has an open socket (realtime gateway). */
export interface Presence {
  isOnline(deviceId: string): boolean;
}

/** A device as listed to owners (DESIGN §7). */
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

const linkOf = (c: ConversationRow): ConversationLink => ({
  conversation_id: c.id,
  message_group_id: c.groupId,
  agent_device_id: c.agentDeviceId,
  owner_device_id: c.ownerDeviceId,
});

/** The UTF-8 message an APPROVED device signs to activate (DESIGN §7). */
export const activationMessage = (deviceId: string) => Buffer.from(`activate:${deviceId}`, 'utf8');

export interface DeviceServiceDeps {
  db: Db;
  notifier: Notifier;
  deviceTokens: DeviceTokenService;
  /** Stateless renewal challenges (auth/renewal-challenges.ts). */
  challenges: RenewalChallenges;
  presence: Presence;
  /** Seals webhook signing secrets at rest (modules/webhooks/secrets.ts). */
  secrets: SecretBox;
  /** Which webhook URLs may be registered (`WEBHOOK_ALLOW_HTTP`, `WEBHOOK_ALLOW_PRIVATE`). */
  webhookTargets: TargetPolicy;
}

export class DeviceService {
  constructor(private readonly deps: DeviceServiceDeps) {}

  private get db() {
    return this.deps.db;
  }

  /**
   * `POST /enroll`: an unknown, consumed, revoked or expired invite is 401; a bad proof of
   * possession is 400 and leaves the invite unused. Success consumes the invite and creates a
   * PENDING agent device; owners receive `device_pending`.
   */
  async enroll(input: EnrollRequest): Promise<{ device_id: string; fingerprint: string; status: DeviceStatus }> {
    const ipk = input.identity_public_key.toLowerCase();
    const epk = input.ephemeral_public_key.toLowerCase();
    const found = await crossTenant(this.db, 'enrollment: the invite token is the credential', (tx) =>
      invitesRepo.findTenantByTokenHash(tx, hashSecret(input.invite_token)),
    );
    if (!found) throw unauthorized('invalid invite token');
    const device = await withTenant(this.db, found.tenantId, async (tx) => {
      const invite = await invitesRepo.getInvite(tx, found.id, true);
      if (!invite || effectiveStatus(invite) !== 'active') throw unauthorized('invite is not valid (used, revoked or expired)');
      if (!verifyEd25519(ipk, Buffer.from(ipk, 'hex'), input.proof_of_possession.toLowerCase())) {
        throw badRequest('proof_of_possession does not verify against identity_public_key');
      }
      const id = randomUUID();
      const [row] = await repo.insertDevice(tx, {
        id,
        tenantId: found.tenantId,
        kind: 'agent',
        status: 'PENDING',
        identityPublicKey: ipk,
        ephemeralPublicKey: epk,
        fingerprint: fingerprint(ipk),
        name: input.name ?? `${input.platform ?? 'agent'}-${id.slice(0, 8)}`,
        platform: input.platform ?? null,
        inviteId: invite.id,
      });
      await invitesRepo.updateInvite(tx, invite.id, { status: 'consumed', consumedAt: new Date(), deviceId: id });
      await appendAudit(tx, found.tenantId, { type: 'device.enrolled', actor: `invite:${invite.id}`, subject: id, data: { fingerprint: row!.fingerprint, platform: row!.platform } });
      return row!;
    });
    await this.deps.notifier.toOwners(found.tenantId, 'device_pending', {
      device_id: device.id,
      fingerprint: device.fingerprint,
      platform: device.platform,
      name: device.name,
      enrolled_at: device.enrolledAt.toISOString(),
    });
    return { device_id: device.id, fingerprint: device.fingerprint, status: 'PENDING' };
  }

  /** `GET /devices/{id}/status` (unauthenticated polling by the enrolling agent). */
  async status(id: string): Promise<{ device_id: string; status: DeviceStatus }> {
    const device = await this.findAcrossTenants(id, 'status polling by device id');
    return { device_id: id, status: device.status as DeviceStatus };
  }

  /**
   * `POST /devices/{id}/activate`: APPROVED -> ACTIVE with a proof of possession over
   * `activate:<device_id>` (401 when it does not verify). Creates the conversation group, default
   * topic and one conversation per ACTIVE owner device; issues the device JWT; owners receive
   * `device_linked`. 403 for a revoked device, 409 for any other state.
   */
  async activate(id: string, signature: string) {
    const tenantId = (await this.findAcrossTenants(id, 'activation by device id')).tenantId;
    const result = await withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id, true);
      if (d.status === 'REVOKED') throw deviceRevoked();
      if (d.status !== 'APPROVED') throw conflict(`device is ${d.status}; only an APPROVED device can be activated`);
      if (!verifyEd25519(d.identityPublicKey, activationMessage(id), signature.toLowerCase())) {
        throw unauthorized('activation signature does not verify against the identity key');
      }
      await repo.updateDevice(tx, id, { status: 'ACTIVE', activatedAt: new Date(), lastSeen: new Date() });
      // The device proved possession of its identity key: it is the actor (as for device-JWT actions).
      await appendAudit(tx, tenantId, { type: 'device.activated', actor: `device:${id}`, subject: id, data: { from: d.status, fingerprint: d.fingerprint } });
      const group = await provisionAgent(tx, tenantId, id);
      const owners = await activeDevices(tx, 'owner');
      return { group, owners };
    });
    const { token, expiresAt } = await this.deps.deviceTokens.issue(id, tenantId);
    const first = result.group.conversations[0]?.id ?? null;
    await this.deps.notifier.toOwners(tenantId, 'device_linked', { device_id: id, conversation_id: first });
    return {
      device_id: id,
      device_jwt: token,
      expires_at: expiresAt.toISOString(),
      conversation_id: first,
      message_group_id: result.group.groupId,
      default_topic_id: result.group.defaultTopicId,
      conversations: result.group.conversations.map(linkOf),
      owner_public_keys: result.owners.map(keysOf),
    };
  }

  list(tenantId: string): Promise<DeviceOut[]> {
    return withTenant(this.db, tenantId, async (tx) => (await repo.listDevices(tx)).map(toDeviceOut));
  }

  /** PENDING -> APPROVED; the agent receives `device_approved`. */
  approve(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return this.transition(tenantId, id, ['PENDING'], 'APPROVED', { approvedAt: new Date() }, actor, (d) =>
      this.deps.notifier.toDevices(tenantId, [d.id], 'device_approved', { device_id: d.id }),
    );
  }

  /** PENDING -> REVOKED (owner rejects, SPEC §3.1). */
  reject(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return this.transition(tenantId, id, ['PENDING'], 'REVOKED', { revokedAt: new Date() }, actor);
  }

  /**
   * PENDING | APPROVED | ACTIVE -> REVOKED; every socket of the device is closed with 4001. The
   * agent is retired in the same transaction ({@link retireAgentDevice}); audit `device.revoked`
   * data `{from, revoked_grants: [jti…]}`.
   */
  revoke(tenantId: string, id: string, actor = 'owner'): Promise<DeviceOut> {
    return this.transition(tenantId, id, ['PENDING', 'APPROVED', 'ACTIVE'], 'REVOKED', { revokedAt: new Date() }, actor, (d) =>
      this.deps.notifier.closeDevice(d.id, CLOSE.revoked, 'device revoked'),
    );
  }

  private async transition(
    tenantId: string,
    id: string,
    from: DeviceStatus[],
    to: DeviceStatus,
    set: Partial<repo.DeviceRow>,
    actor: string,
    after?: (d: repo.DeviceRow) => Promise<void>,
  ): Promise<DeviceOut> {
    const updated = await withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id, true);
      if (!from.includes(d.status as DeviceStatus)) throw conflict(`device is ${d.status}; cannot become ${to}`);
      const [row] = await repo.updateDevice(tx, id, { ...set, status: to });
      let revokedGrants: string[] | undefined;
      if (to === 'REVOKED') {
        await deleteKeyPackagesOf(tx, id);
        revokedGrants = await retireAgentDevice(tx, tenantId, id, 'device_revoked', actor, new Date());
      }
      await appendAudit(tx, tenantId, {
        type: to === 'APPROVED' ? 'device.approved' : 'device.revoked',
        actor,
        subject: id,
        data: { from: d.status, ...(revokedGrants ? { revoked_grants: revokedGrants } : {}) },
      });
      return row!;
    });
    await after?.(updated);
    return toDeviceOut(updated);
  }

  /** Rename a device; records `device.renamed` (old and new name) by `actor`. @throws 404 unknown device. */
  rename(tenantId: string, id: string, name: string, actor = 'owner'): Promise<DeviceOut> {
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id, true);
      const [row] = await repo.updateDevice(tx, id, { name });
      await appendAudit(tx, tenantId, { type: 'device.renamed', actor, subject: id, data: { from: d.name, to: name } });
      return toDeviceOut(row!);
    });
  }

  /**
   * Register (`url`) or clear (`null`) a device's webhook URL (delivery: DESIGN §8.11,
   * modules/webhooks). A new registration answers a fresh Standard Webhooks secret (`whsec_…`)
   * once; it is stored sealed (AES-256-GCM), never in clear. 400 for a URL the target policy
   * refuses (not https — or http when allowed —, userinfo, too long, a non-public IP literal).
   * Records `webhook.registered` (data: the URL's host only — never its path, query or the
   * secret) or `webhook.cleared` by `actor` (owner `sub` or `device:<id>`).
   */
  setWebhook(tenantId: string, id: string, url: string | null, actor = 'owner') {
    const problem = url === null ? undefined : webhookUrlProblem(url, this.deps.webhookTargets);
    if (problem) throw badRequest(problem);
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id, true);
      if (d.status === 'REVOKED') throw deviceRevoked();
      const secret = url === null ? null : newWebhookSecret();
      await repo.updateDevice(tx, id, { webhookUrl: url, webhookSecret: secret && sealWebhookSecret(this.deps.secrets, id, secret) });
      await appendAudit(
        tx,
        tenantId,
        url === null
          ? { type: 'webhook.cleared', actor, subject: id, data: { previous_host: d.webhookUrl ? hostOf(d.webhookUrl) : null } }
          : { type: 'webhook.registered', actor, subject: id, data: { host: hostOf(url) } },
      );
      return { device_id: id, webhook_url: url, ...(secret ? { secret } : {}) };
    });
  }

  /**
   * `DELETE /devices/{id}`: only a REVOKED device (409 otherwise); its history stays. Retires the
   * agent again ({@link retireAgentDevice}, reason `device_deleted`: normally nothing is left to
   * revoke); audit `device.deleted` data `{revoked_grants: [jti…]}`.
   */
  delete(tenantId: string, id: string, actor = 'owner'): Promise<void> {
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id, true);
      if (d.status !== 'REVOKED') throw conflict(`device is ${d.status}; revoke it before deleting`);
      const now = new Date();
      await repo.updateDevice(tx, id, { deletedAt: now });
      const revokedGrants = await retireAgentDevice(tx, tenantId, id, 'device_deleted', actor, now);
      await appendAudit(tx, tenantId, { type: 'device.deleted', actor, subject: id, data: { revoked_grants: revokedGrants } });
    });
  }

  /**
   * `POST /devices/register`: an owner device with its keys, ACTIVE at once, with a conversation
   * to every ACTIVE agent. Records `device.registered` by the owner.
   */
  async registerOwnerDevice(
    owner: OwnerPrincipal & { tenantId: string },
    input: { identity_public_key: string; ephemeral_public_key: string; name?: string; platform?: string },
  ) {
    const ipk = input.identity_public_key.toLowerCase();
    const id = randomUUID();
    const conversations = await withTenant(this.db, owner.tenantId, async (tx) => {
      await repo.insertDevice(tx, {
        id,
        tenantId: owner.tenantId,
        kind: 'owner',
        status: 'ACTIVE',
        identityPublicKey: ipk,
        ephemeralPublicKey: input.ephemeral_public_key.toLowerCase(),
        fingerprint: fingerprint(ipk),
        name: input.name ?? `${input.platform ?? 'owner'}-${id.slice(0, 8)}`,
        platform: input.platform ?? null,
        ownerSub: owner.sub,
        approvedAt: new Date(),
        activatedAt: new Date(),
      });
      await appendAudit(tx, owner.tenantId, { type: 'device.registered', actor: owner.sub, subject: id, data: { kind: 'owner', fingerprint: fingerprint(ipk), platform: input.platform ?? null } });
      return provisionOwnerDevice(tx, owner.tenantId, id);
    });
    return { device_id: id, fingerprint: fingerprint(ipk), status: 'ACTIVE' as const, conversations: conversations.map(linkOf) };
  }

  /** `POST /devices/{id}/relink`: idempotent; conversations of an owner device with every agent. */
  relink(tenantId: string, id: string) {
    return withTenant(this.db, tenantId, async (tx) => {
      const d = await this.mustGet(tx, id);
      if (d.kind !== 'owner') throw badRequest('relink applies to owner devices');
      if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE owner device can be relinked`);
      const conversations = await provisionOwnerDevice(tx, tenantId, id);
      return { device_id: id, conversations: conversations.map(linkOf) };
    });
  }

  /**
   * `DELETE /devices/{id}/remove`: the acting owner device (`X-Device-Id`, an ACTIVE owner device
   * of the caller) removes an owner device of the tenant: it is revoked (sockets closed 4001) and
   * deleted; conversation history stays. Records `device.removed` by the owner.
   */
  async removeOwnerDevice(owner: OwnerPrincipal & { tenantId: string }, id: string, actingDeviceId: string): Promise<void> {
    await withTenant(this.db, owner.tenantId, async (tx) => {
      await this.requireOwnerDevice(tx, owner, actingDeviceId);
      const d = await this.mustGet(tx, id, true);
      if (d.kind !== 'owner') throw badRequest('only owner devices are removed here; revoke agent devices');
      await repo.updateDevice(tx, id, { status: 'REVOKED', revokedAt: d.revokedAt ?? new Date(), deletedAt: new Date() });
      await deleteKeyPackagesOf(tx, id);
      await appendAudit(tx, owner.tenantId, { type: 'device.removed', actor: owner.sub, subject: id, data: { from: d.status, acting_device_id: actingDeviceId } });
    });
    await this.deps.notifier.closeDevice(id, CLOSE.revoked, 'device removed');
  }

  /** The acting owner device of a request (`X-Device-Id`): ACTIVE, kind owner, registered by this user. */
  async requireOwnerDevice(tx: Tx, owner: OwnerPrincipal, deviceId: string): Promise<repo.DeviceRow> {
    return requireOwnerDeviceOf(tx, owner.sub, deviceId);
  }

  /**
   * The device a request acts as: a device JWT's own device, an API key's bound device, or for an owner the ACTIVE owner
   * device of theirs named in `X-Device-Id` (400 when an owner names none).
   */
  async actingDevice(principal: Principal, headerDeviceId: string | undefined): Promise<{ tenantId: string; deviceId: string }> {
    if (principal.kind === 'device') return { tenantId: principal.tenantId, deviceId: principal.deviceId };
    if (principal.kind === 'apikey') {
      if (!principal.deviceId) throw forbidden('this API key has no registered key material yet (client_key_register)');
      return { tenantId: principal.tenantId, deviceId: principal.deviceId };
    }
    if (!principal.tenantId) throw forbidden('the user belongs to no tenant');
    if (!headerDeviceId) throw badRequest('header X-Device-Id must name your owner device (a UUID)');
    const tenantId = principal.tenantId;
    await withTenant(this.db, tenantId, (tx) => this.requireOwnerDevice(tx, principal, headerDeviceId));
    return { tenantId, deviceId: headerDeviceId };
  }

  async presence(tenantId: string, id: string) {
    const d = await withTenant(this.db, tenantId, (tx) => this.mustGet(tx, id));
    return {
      device_id: id,
      online: this.deps.presence.isOnline(id),
      last_seen: d.lastSeen?.toISOString() ?? null,
      health: health(d.lastSeen),
    };
  }

  keys(tenantId: string, id: string): Promise<DeviceKeys> {
    return withTenant(this.db, tenantId, async (tx) => keysOf(await this.mustGet(tx, id)));
  }

  /** Count of messages addressed to the device and not yet delivered to it. */
  pending(tenantId: string, id: string): Promise<{ device_id: string; pending: number }> {
    return withTenant(this.db, tenantId, async (tx) => ({ device_id: id, pending: await repo.pendingCount(tx, id) }));
  }

  /**
   * `POST /devices/{id}/token/challenge`: a stateless challenge bound to `id`
   * ({@link RenewalChallenges}). Same answer for every well-formed id, whether or not a device
   * has it and whatever its status: nothing is read or written.
   */
  tokenChallenge(id: string): { device_id: string; challenge: string; expires_at: string } {
    const { challenge, expiresAt } = this.deps.challenges.issue(id);
    return { device_id: id, challenge, expires_at: expiresAt.toISOString() };
  }

  /**
   * Renew a device JWT (DESIGN §5): `signature` is Ed25519 by the identity key over the UTF-8
   * challenge, which must be one we issued for this device and unexpired. A challenge renews
   * once: it is recorded as spent (until it expires) after the signature verifies. 401 when the
   * challenge is not ours, of another device, expired or spent, or the signature does not verify.
   */
  async renewToken(id: string, challenge: string, signature: string) {
    const d = await this.findAcrossTenants(id, 'token renewal by device id');
    if (d.status === 'REVOKED') throw deviceRevoked();
    if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE device renews its token`);
    if (!verifyEd25519(d.identityPublicKey, Buffer.from(challenge, 'utf8'), signature.toLowerCase())) {
      throw unauthorized('signature does not verify against the identity key');
    }
    const now = new Date();
    const issued = this.deps.challenges.verify(id, challenge, now);
    if (!issued) throw unauthorized('unknown, used or expired challenge');
    const fresh = await withTenant(this.db, d.tenantId, async (tx) => {
      await this.mustGet(tx, id, true);
      return repo.spendChallenge(tx, { id: randomUUID(), tenantId: d.tenantId, deviceId: id, challenge, expiresAt: issued.expiresAt }, now);
    });
    if (!fresh) throw unauthorized('unknown, used or expired challenge');
    const { token, expiresAt } = await this.deps.deviceTokens.issue(id, d.tenantId);
    return { device_id: id, device_jwt: token, expires_at: expiresAt.toISOString() };
  }

  private async findAcrossTenants(id: string, reason: string): Promise<repo.DeviceRow> {
    const tenantId = await crossTenant(this.db, reason, (tx) => repo.findDeviceTenant(tx, id));
    if (!tenantId) throw notFound('device');
    return withTenant(this.db, tenantId, (tx) => this.mustGet(tx, id));
  }

  private async mustGet(tx: Tx, id: string, forUpdate = false): Promise<repo.DeviceRow> {
    const d = await repo.getDevice(tx, id, forUpdate);
    if (!d) throw notFound('device');
    return d;
  }
}
