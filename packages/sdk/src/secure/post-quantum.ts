/**
 * The post-quantum parts of a SecureMessenger's key handling (issue 16, DESIGN §8.34), kept out of
 * messenger.ts:
 *
 * - PQXDH: the device's signed last-resort ML-KEM-768 prekey is published (`POST /pq-prekeys`)
 *   whenever the service does not serve that very key; before an X3DH + Double Ratchet session the
 *   peer's PQ prekey is claimed and checked against the peer's identity key. No prekey (404: an
 *   older peer) means classical X3DH, as does a prekey that fails the check (reported).
 * - MLS: which ciphersuites' KeyPackages to keep in stock. Hybrid (X-Wing) KeyPackages are
 *   published only to a service that labels KeyPackages by suite (its count has
 *   `by_cipher_suite`): an older service would hand them to clients that cannot use them.
 */
import type { ParleyClient } from '../client/rest.js';
import { ParleyApiError } from '../client/errors.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import { pqPrekeyFromWire, pqPrekeyToWire, verifyPqPrekey, type SignedPqPrekey } from '../crypto/pq-prekey.js';
import { hexToBytes, KEY_BYTES } from '../crypto/primitives.js';
import type { PeerDevice } from '../crypto/session.js';
import { MLS_CIPHERSUITE, ciphersuiteId } from '../mls/ciphersuites.js';
import type { CiphersuiteName } from 'ts-mls';

/**
 * Whether `client` can reach the PQ prekey routes: a `ParleyClient` can; a partial stand-in (tests,
 * adapters implementing only the MLS methods) cannot, and its sessions stay classical.
 */
function speaksPq(client: ParleyClient): boolean {
  return typeof (client as Partial<ParleyClient>).claimPqPrekey === 'function';
}

/**
 * Publish the device's PQ prekey unless the service already serves it. Returns whether it published.
 * Identities from before issue 16 hold none: nothing to publish (peers use X3DH).
 * @throws the REST client's errors.
 */
export async function ensurePqPrekey(client: ParleyClient, identity: DeviceIdentity, deviceId: string): Promise<boolean> {
  const prekey = identity.pqPrekey;
  if (prekey === undefined || !speaksPq(client)) return false;
  const held = await client.pqPrekeyCount(deviceId, { deviceId });
  if (held.last_resort_key_id === prekey.keyId) return false;
  await client.publishPqPrekeys({ last_resort: pqPrekeyToWire(prekey) }, { deviceId });
  return true;
}

/** What claiming a peer's PQ prekey gave: a verified prekey, nothing (classical X3DH), or a problem to report. */
export interface PqPrekeyClaim {
  prekey?: SignedPqPrekey;
  problem?: Error;
}

/**
 * Claim the peer's PQ prekey (`POST /pq-prekeys/claim`) and check it is signed by the peer's
 * identity key (PQXDH §3.3). 404 (the peer published none): `{}`. Never throws.
 */
export async function claimPeerPqPrekey(client: ParleyClient, deviceId: string, peer: PeerDevice): Promise<PqPrekeyClaim> {
  if (!speaksPq(client)) return {};
  try {
    const claimed = await client.claimPqPrekey({ device_id: peer.device_id }, { deviceId });
    const prekey = pqPrekeyFromWire(claimed);
    if (!verifyPqPrekey(hexToBytes(peer.identity_public_key, KEY_BYTES), prekey)) {
      return { problem: new Error('the PQ prekey is not signed by the peer identity key') };
    }
    return { prekey };
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 404) return {};
    return { problem: err as Error };
  }
}

/**
 * How many KeyPackages of each suite the service holds for us, for the suites to keep in stock:
 * all of `suites` when the service labels KeyPackages by suite, else the classical suite only
 * (counted by `available`).
 */
export function keyPackageStock(
  count: { available: number; by_cipher_suite?: { cipher_suite: number; available: number }[] },
  suites: readonly CiphersuiteName[],
): Map<CiphersuiteName, number> {
  const bySuite = count.by_cipher_suite;
  if (bySuite === undefined) return new Map([[MLS_CIPHERSUITE, count.available]]);
  return new Map(suites.map((s) => [s, bySuite.find((r) => r.cipher_suite === ciphersuiteId(s))?.available ?? 0]));
}
