/**
 * Agent enrollment and activation (contract §4.3, §3.1; design §5, §7): `POST /enroll` with an invite
 * and a proof of possession creates a PENDING agent device; once an owner approves it,
 * `POST /devices/{id}/activate` with a signature over `activate:<device_id>` makes it ACTIVE,
 * provisions its conversations and issues its device JWT.
 */
import { randomUUID } from 'node:crypto';
import type { ActivateRequest, DeviceStatus, EnrollRequest } from '@parley/protocol';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { deviceBinding } from '../key-directory/index.js';
import { fingerprint, hashSecret, verifyEd25519 } from '../../lib/crypto.js';
import { requireDeviceKeys, requireUsableIdentityKey } from '../../lib/public-keys.js';
import { badRequest, conflict, deviceRevoked, unauthorized } from '../../lib/errors.js';
import { effectiveStatus, findTenantByTokenHash, getInvite, updateInvite } from '../invites/index.js';
import { findAcrossTenants, keysOf, linkOf, mustGet, type DeviceServiceDeps } from './internal.js';
import * as repo from './repo.js';

/** The UTF-8 message an APPROVED device signs to activate (design §7). */
export const activationMessage = (deviceId: string) => Buffer.from(`activate:${deviceId}`, 'utf8');

/**
 * `POST /enroll`: an unknown, consumed, revoked or expired invite is 401; a bad proof of
 * possession, or a key that is not a usable point ({@link requireDeviceKeys}: non-canonical or
 * small-order Ed25519, low-order X25519), is 400 and leaves the invite unused. Success consumes the invite and creates a
 * PENDING agent device, named as the body says, else by the invite's label; owners receive
 * `device_pending`.
 */
export async function enrollDevice(deps: DeviceServiceDeps, input: EnrollRequest): Promise<{ device_id: string; fingerprint: string; status: DeviceStatus }> {
  const ipk = input.identity_public_key.toLowerCase();
  const epk = input.ephemeral_public_key.toLowerCase();
  requireDeviceKeys(ipk, epk);
  const found = await crossTenant(deps.db, 'enrollment: the invite token is the credential', (tx) =>
    findTenantByTokenHash(tx, hashSecret(input.invite_token)),
  );
  if (!found) throw unauthorized('invalid invite token');
  const device = await withTenant(deps.db, found.tenantId, async (tx) => {
    const invite = await getInvite(tx, found.id, true);
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
      name: input.name ?? invite.label ?? `${input.platform ?? 'agent'}-${id.slice(0, 8)}`,
      platform: input.platform ?? null,
      inviteId: invite.id,
    });
    await deps.keyDirectory.publish(tx, [deviceBinding(row!)]);
    await updateInvite(tx, invite.id, { status: 'consumed', consumedAt: new Date(), deviceId: id });
    await appendAudit(tx, found.tenantId, { type: 'device.enrolled', actor: `invite:${invite.id}`, subject: id, data: { fingerprint: row!.fingerprint, platform: row!.platform } });
    return row!;
  });
  await deps.notifier.toOwners(found.tenantId, 'device_pending', {
    device_id: device.id,
    fingerprint: device.fingerprint,
    platform: device.platform,
    name: device.name,
    enrolled_at: device.enrolledAt.toISOString(),
  });
  return { device_id: device.id, fingerprint: device.fingerprint, status: 'PENDING' };
}

/**
 * `POST /devices/{id}/activate`: APPROVED -> ACTIVE with a proof of possession over
 * `activate:<device_id>` (401 when it does not verify; 400 when the stored identity key is not a
 * usable Ed25519 point, see {@link requireUsableIdentityKey}), and a fresh `key_binding` (purpose
 * `device_activate`, the device as subject, its stored keys; modules/key-binding) when given:
 * 400 when it does not verify or its nonce is spent; without one, 400 under `KEY_BINDING_REQUIRED`.
 * Creates the conversation group, default topic and one conversation per ACTIVE owner device;
 * issues the device JWT; owners receive `device_linked`. 403 for a revoked device, 409 for any
 * other state.
 */
export async function activateDevice(deps: DeviceServiceDeps, id: string, body: ActivateRequest) {
  const found = await findAcrossTenants(deps, id, 'activation by device id');
  const tenantId = found.tenantId;
  if (!body.key_binding && found.status === 'APPROVED') await deps.keyBinding.requireLegacyAllowed('device_activate', tenantId, found.identityPublicKey);
  const result = await withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id, true);
    if (d.status === 'REVOKED') throw deviceRevoked();
    if (d.status !== 'APPROVED') throw conflict(`device is ${d.status}; only an APPROVED device can be activated`);
    requireUsableIdentityKey(d.identityPublicKey);
    if (!verifyEd25519(d.identityPublicKey, activationMessage(id), body.signature.toLowerCase())) {
      throw unauthorized('activation signature does not verify against the identity key');
    }
    if (body.key_binding) {
      const expect = { purpose: 'device_activate', tenantId, subject: id, identityPublicKey: d.identityPublicKey, ephemeralPublicKey: d.ephemeralPublicKey, deviceId: id } as const;
      await deps.keyBinding.verifyAndSpend(tx, body.key_binding, expect);
    }
    await repo.updateDevice(tx, id, { status: 'ACTIVE', activatedAt: new Date(), lastSeen: new Date() });
    // The device proved possession of its identity key: it is the actor (as for device-JWT actions).
    await appendAudit(tx, tenantId, { type: 'device.activated', actor: `device:${id}`, subject: id, data: { from: d.status, fingerprint: d.fingerprint } });
    const group = await deps.hooks.provisionAgent(tx, tenantId, id);
    const owners = await repo.activeDevices(tx, 'owner');
    return { group, owners };
  });
  const { token, expiresAt } = await deps.deviceTokens.issue(id, tenantId);
  const first = result.group.conversations[0]?.id ?? null;
  await deps.notifier.toOwners(tenantId, 'device_linked', { device_id: id, conversation_id: first });
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
