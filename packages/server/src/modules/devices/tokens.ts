/**
 * Device-token challenge and renewal (contract §4.4; design §5): a stateless challenge bound to the
 * device id, and renewal of the device JWT with an Ed25519 signature over it by the identity key;
 * a challenge renews once.
 */
import { randomUUID } from 'node:crypto';
import { tokenRenewalMessage } from '@parley/protocol';
import { withTenant } from '../../db/tenant.js';
import { verifyEd25519 } from '../../lib/crypto.js';
import { requireUsableIdentityKey } from '../../lib/public-keys.js';
import { conflict, deviceRevoked, unauthorized } from '../../lib/errors.js';
import { findAcrossTenants, mustGet, type DeviceServiceDeps } from './internal.js';
import * as repo from './repo.js';

/**
 * `POST /devices/{id}/token/challenge`: a stateless challenge bound to `id`
 * ({@link RenewalChallenges}). Same answer for every well-formed id, whether or not a device
 * has it and whatever its status: nothing is read or written.
 */
export function tokenChallenge(deps: DeviceServiceDeps, id: string): { device_id: string; challenge: string; expires_at: string } {
  const { challenge, expiresAt } = deps.challenges.issue(id);
  return { device_id: id, challenge, expires_at: expiresAt.toISOString() };
}

/**
 * Renew a device JWT: `signature` is Ed25519 by the identity key over the
 * challenge, which must be one we issued for this device and unexpired. The signed message is
 * @parley/protocol `tokenRenewalMessage` (the `parley/v2/token-renewal` domain tag, 0x00, the
 * UTF-8 challenge); a signature over the bare UTF-8 challenge, as clients made it before domain
 * tags, is still accepted (docs/decisions.md "Signing domains": a challenge is MAC'd, single use
 * and bound to the device, so accepting that form lets no one renew who could not before). A
 * challenge renews once: it is recorded as spent (until it expires) after the signature
 * verifies. 401 when the challenge is not ours, of another device, expired or spent, or the
 * signature does not verify; 400 when the stored identity key is not a usable Ed25519 point
 * ({@link requireUsableIdentityKey}).
 */
export async function renewToken(deps: DeviceServiceDeps, id: string, challenge: string, signature: string) {
  const d = await findAcrossTenants(deps, id, 'token renewal by device id');
  if (d.status === 'REVOKED') throw deviceRevoked();
  if (d.status !== 'ACTIVE') throw conflict(`device is ${d.status}; only an ACTIVE device renews its token`);
  requireUsableIdentityKey(d.identityPublicKey);
  const sig = signature.toLowerCase();
  if (!verifyEd25519(d.identityPublicKey, tokenRenewalMessage(challenge), sig) && !verifyEd25519(d.identityPublicKey, Buffer.from(challenge, 'utf8'), sig)) {
    throw unauthorized('signature does not verify against the identity key');
  }
  const now = new Date();
  const issued = deps.challenges.verify(id, challenge, now);
  if (!issued) throw unauthorized('unknown, used or expired challenge');
  const fresh = await withTenant(deps.db, d.tenantId, async (tx) => {
    await mustGet(tx, id, true);
    return repo.spendChallenge(tx, { id: randomUUID(), tenantId: d.tenantId, deviceId: id, challenge, expiresAt: issued.expiresAt }, now);
  });
  if (!fresh) throw unauthorized('unknown, used or expired challenge');
  const { token, expiresAt } = await deps.deviceTokens.issue(id, d.tenantId);
  return { device_id: id, device_jwt: token, expires_at: expiresAt.toISOString() };
}
