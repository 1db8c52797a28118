/**
 * What the PQXDH (pq-prekeys.ts) and X3DH (prekeys.ts) prekey services share: decoding the
 * client's base64 blobs, and finding the device a claim is for under the claim rule both follow
 * (same tenant: any ACTIVE device; across tenants: the other party of an A2A channel, see
 * {@link channelPeer}).
 */
import type { Tx } from '../../db/client.js';
import { switchTenant } from '../../db/tenant.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { getDevice } from '../devices/index.js';
import { channelPeer } from './channel-peer.js';

/** Decode canonical base64 of 1..max bytes; 400 naming `what` otherwise. */
export function blob(b64: string, max: number, what: string): Buffer {
  const buf = Buffer.from(b64, 'base64');
  if (buf.length === 0 || buf.length > max || buf.toString('base64') !== b64) throw badRequest(`${what} must be canonical base64 of 1..${max} bytes`);
  return buf;
}

/** 400 unless the key ids of one publish differ. */
export function distinctKeyIds(ids: string[]): void {
  if (new Set(ids).size !== ids.length) throw badRequest('key_id values must differ');
}

/**
 * The ACTIVE device `deviceId` that `claimedBy` (of `tenantId`) may claim prekeys of. When it is
 * in another tenant (reached over an A2A channel) the transaction is switched to that tenant and
 * `crossTenant` is true: the caller then hands out no one-time prekey.
 * @throws 404 `active device` when there is no such device or the caller may not claim it.
 */
export async function claimableDevice(tx: Tx, tenantId: string, deviceId: string, claimedBy: string): Promise<{ crossTenant: boolean }> {
  let d = await getDevice(tx, deviceId);
  let crossTenant = false;
  if (!d) {
    const peer = await channelPeer(tx, tenantId, claimedBy, deviceId);
    if (!peer || peer.tenantId === tenantId) throw notFound('active device');
    await switchTenant(tx, peer.tenantId);
    d = await getDevice(tx, deviceId);
    crossTenant = true;
  }
  if (!d || d.status !== 'ACTIVE') throw notFound('active device');
  return { crossTenant };
}
