/**
 * Owner devices (contract §4.3; design §5, §7): registration of an owner device (ACTIVE at once, with
 * a conversation to every ACTIVE agent), relink, removal by another owner device of the caller,
 * and the acting device of a request (`X-Device-Id` for an owner).
 */
import { randomUUID } from 'node:crypto';
import type { OwnerDeviceLinkedEvent, RegisterOwnerDeviceRequest } from '@parley/protocol';
import type { OwnerPrincipal, Principal } from '../../auth/authenticator.js';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import { deviceBinding } from '../key-directory/index.js';
import { fingerprint } from '../../lib/crypto.js';
import { requireDeviceKeys } from '../../lib/public-keys.js';
import { badRequest, conflict, deviceRevoked, forbidden, notFound } from '../../lib/errors.js';
import { CLOSE } from '../../realtime/notifier.js';
import { linkOf, mustGet, type ConversationRow, type DeviceServiceDeps } from './internal.js';
import * as repo from './repo.js';

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

/**
 * `POST /devices/register`: an owner device with its keys, ACTIVE at once, with a conversation
 * to every ACTIVE agent. Records `device.registered` by the owner. @throws 400 when a key is not a
 * usable point ({@link requireDeviceKeys}); 400 when `key_binding` (purpose
 * `owner_device_register`; modules/key-binding) does not verify or its nonce is spent, and
 * without one under `KEY_BINDING_REQUIRED` or when another device already holds the identity key.
 */
export async function registerOwnerDevice(deps: DeviceServiceDeps, owner: OwnerPrincipal & { tenantId: string }, input: RegisterOwnerDeviceRequest) {
  const ipk = input.identity_public_key.toLowerCase();
  const epk = input.ephemeral_public_key.toLowerCase();
  requireDeviceKeys(ipk, epk);
  if (!input.key_binding) await deps.keyBinding.requireLegacyAllowed('owner_device_register', owner.tenantId, ipk);
  const id = randomUUID();
  const { all, created } = await withTenant(deps.db, owner.tenantId, async (tx) => {
    if (input.key_binding) {
      const expect = { purpose: 'owner_device_register', tenantId: owner.tenantId, subject: '', identityPublicKey: ipk, ephemeralPublicKey: epk } as const;
      await deps.keyBinding.verifyAndSpend(tx, input.key_binding, expect);
    }
    await repo.insertDevice(tx, {
      id,
      tenantId: owner.tenantId,
      kind: 'owner',
      status: 'ACTIVE',
      identityPublicKey: ipk,
      ephemeralPublicKey: epk,
      fingerprint: fingerprint(ipk),
      name: input.name ?? `${input.platform ?? 'owner'}-${id.slice(0, 8)}`,
      platform: input.platform ?? null,
      ownerSub: owner.sub,
      approvedAt: new Date(),
      activatedAt: new Date(),
    });
    await deps.keyDirectory.publish(tx, [deviceBinding({ id, identityPublicKey: ipk, ephemeralPublicKey: epk })]);
    await appendAudit(tx, owner.tenantId, { type: 'device.registered', actor: owner.sub, subject: id, data: { kind: 'owner', fingerprint: fingerprint(ipk), platform: input.platform ?? null } });
    return deps.hooks.provisionOwnerDevice(tx, owner.tenantId, id);
  });
  await announceToAgents(deps, owner.tenantId, { id, identityPublicKey: ipk, ephemeralPublicKey: epk, fingerprint: fingerprint(ipk) }, created);
  return { device_id: id, fingerprint: fingerprint(ipk), status: 'ACTIVE' as const, conversations: all.map(linkOf) };
}

/** `POST /devices/{id}/relink`: idempotent; conversations of an owner device with every agent (agents of new ones are told, see {@link announceToAgents}). */
export async function relinkOwnerDevice(deps: DeviceServiceDeps, tenantId: string, id: string) {
  const { d, all, created } = await withTenant(deps.db, tenantId, async (tx) => {
    const d = await mustGet(tx, id);
    if (d.kind !== 'owner') throw badRequest('relink applies to owner devices');
    if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE owner device can be relinked`);
    return { d, ...(await deps.hooks.provisionOwnerDevice(tx, tenantId, id)) };
  });
  await announceToAgents(deps, tenantId, d, created);
  return { device_id: id, conversations: all.map(linkOf) };
}

/**
 * After commit: the agent of each conversation `created` with owner device `d` gets
 * `owner_device_linked` with the device's keys on its sockets (enrolled and API-key agents), so
 * it can talk to the new device without restarting.
 */
async function announceToAgents(
  deps: DeviceServiceDeps,
  tenantId: string,
  d: Pick<repo.DeviceRow, 'id' | 'identityPublicKey' | 'ephemeralPublicKey' | 'fingerprint'>,
  created: ConversationRow[],
): Promise<void> {
  for (const c of created) {
    const data: OwnerDeviceLinkedEvent = {
      conversation_id: c.id,
      message_group_id: c.groupId,
      owner_device_id: d.id,
      identity_public_key: d.identityPublicKey,
      ephemeral_public_key: d.ephemeralPublicKey,
      fingerprint: d.fingerprint,
    };
    await deps.notifier.toDevices(tenantId, [c.agentDeviceId], 'owner_device_linked', data);
  }
}

/**
 * `DELETE /devices/{id}/remove`: the acting owner device (`X-Device-Id`, an ACTIVE owner device
 * of the caller) removes an owner device of the tenant: it is revoked (sockets closed 4001) and
 * deleted; conversation history stays. Records `device.removed` by the owner.
 */
export async function removeOwnerDevice(deps: DeviceServiceDeps, owner: OwnerPrincipal & { tenantId: string }, id: string, actingDeviceId: string): Promise<void> {
  await withTenant(deps.db, owner.tenantId, async (tx) => {
    await requireOwnerDeviceOf(tx, owner.sub, actingDeviceId);
    const d = await mustGet(tx, id, true);
    if (d.kind !== 'owner') throw badRequest('only owner devices are removed here; revoke agent devices');
    await repo.updateDevice(tx, id, { status: 'REVOKED', revokedAt: d.revokedAt ?? new Date(), deletedAt: new Date() });
    await deps.hooks.dropKeyPackages(tx, id);
    await appendAudit(tx, owner.tenantId, { type: 'device.removed', actor: owner.sub, subject: id, data: { from: d.status, acting_device_id: actingDeviceId } });
  });
  await deps.notifier.closeDevice(id, CLOSE.revoked, 'device removed');
}

/**
 * The device a request acts as: a device JWT's own device, an API key's bound device, or for an owner the ACTIVE owner
 * device of theirs named in `X-Device-Id` (`deviceIdHeader`, http/auth.ts). Used by every area whose routes act as a device.
 * @throws 400 an owner names no device; 403 an API key without a bound device, or an owner of no tenant;
 *   404 / 403 the named device is not an ACTIVE owner device of the caller ({@link requireOwnerDeviceOf}).
 */
export async function actingDevice(deps: { db: Db }, principal: Principal, headerDeviceId: string | undefined): Promise<{ tenantId: string; deviceId: string }> {
  if (principal.kind === 'device') return { tenantId: principal.tenantId, deviceId: principal.deviceId };
  if (principal.kind === 'apikey') {
    if (!principal.deviceId) throw forbidden('this API key has no registered key material yet (client_key_register)');
    return { tenantId: principal.tenantId, deviceId: principal.deviceId };
  }
  if (!principal.tenantId) throw forbidden('the user belongs to no tenant');
  if (!headerDeviceId) throw badRequest('header X-Device-Id must name your owner device (a UUID)');
  const tenantId = principal.tenantId;
  await withTenant(deps.db, tenantId, (tx) => requireOwnerDeviceOf(tx, principal.sub, headerDeviceId));
  return { tenantId, deviceId: headerDeviceId };
}
