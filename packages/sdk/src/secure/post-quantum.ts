/**
 * The post-quantum parts of a SecureMessenger's key handling (design §8.34), kept out of
 * messenger.ts:
 *
 * - PQXDH: the device's signed last-resort ML-KEM-768 prekey is published (`POST /pq-prekeys`)
 *   whenever the service does not serve that very key; before an X3DH + Double Ratchet session the
 *   peer's PQ prekey is claimed and checked against the peer's identity key. No prekey (404: an
 *   older peer) means classical X3DH unless post-quantum is required; a prekey that fails the
 *   check, or a failed claim, means no session (PQXDH rev. 3 §3.3).
 * - Requiring post-quantum: the device's own option, or the tenant's `require_post_quantum`
 *   setting, which devices read from their device settings ({@link tenantRequiresPostQuantum}).
 * - MLS: which ciphersuites' KeyPackages to keep in stock. Hybrid (X-Wing) KeyPackages are
 *   published only to a service that labels KeyPackages by suite (its count has
 *   `by_cipher_suite`): an older service would hand them to clients that cannot use them.
 */
import { oneTimePrekeyValue, pqOneTimePrekeyLabel, pqPrekeyLabel, signedPrekeyValue } from '@parley/protocol';
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
 * Publish the device's PQ prekey unless the service already serves it: the same key id AND the
 * same signature (a prekey published with a signature in an older form, e.g. over the bare
 * EncodeKEM before domain tags, is published again with the current one; a service that does not
 * report `last_resort_signature` gets it again too). Returns whether it published.
 * Identities saved without a PQ prekey hold none: nothing to publish (peers use X3DH).
 * @throws the REST client's errors.
 */
export async function ensurePqPrekey(client: ParleyClient, identity: DeviceIdentity, deviceId: string): Promise<boolean> {
  const prekey = identity.pqPrekey;
  if (prekey === undefined || !speaksPq(client)) return false;
  const held = await client.pqPrekeyCount(deviceId, { deviceId });
  const wire = pqPrekeyToWire(prekey);
  if (held.last_resort_key_id === prekey.keyId && held.last_resort_signature === wire.signature) return false;
  await client.publishPqPrekeys({ last_resort: wire }, { deviceId });
  return true;
}

/**
 * What claiming a peer's PQ prekey gave: a verified `prekey`; nothing (`{}`: the peer published
 * none, or the client has no PQ routes: classical X3DH unless post-quantum is required); or a
 * `problem`, after which no session may start (PQXDH rev. 3 §3.3: Alice aborts when the prekey
 * signature fails). `forged` marks a prekey the service served that fails the check (bad
 * signature, an identifier that is not the key's, a malformed key): a downgrade attempt.
 */
export interface PqPrekeyClaim {
  prekey?: SignedPqPrekey;
  /** With `prekey`: its key directory label and value as served (design §8.39). */
  label?: string;
  value?: Uint8Array;
  problem?: Error;
  forged?: boolean;
}

/**
 * Claim the peer's PQ prekey (`POST /pq-prekeys/claim`) and check it is signed by the peer's
 * identity key under its own identifier (PQXDH rev. 3 §3.3). 404 (the peer published none): `{}`.
 * Any other failure is a `problem` (a failed claim is not read as "no prekey": the service could
 * otherwise downgrade by failing it). Never throws.
 */
export async function claimPeerPqPrekey(client: ParleyClient, deviceId: string, peer: PeerDevice): Promise<PqPrekeyClaim> {
  if (!speaksPq(client)) return {};
  let claimed;
  try {
    claimed = await client.claimPqPrekey({ device_id: peer.device_id }, { deviceId });
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 404) return {};
    return { problem: err as Error };
  }
  try {
    const prekey = pqPrekeyFromWire(claimed);
    if (verifyPqPrekey(hexToBytes(peer.identity_public_key, KEY_BYTES), prekey)) {
      const served = { key_id: claimed.key_id, public_key: claimed.public_key, signature: claimed.signature };
      return claimed.one_time
        ? { prekey, label: pqOneTimePrekeyLabel(peer.device_id, claimed.key_id), value: oneTimePrekeyValue(served) }
        : { prekey, label: pqPrekeyLabel(peer.device_id), value: signedPrekeyValue(served) };
    }
    return { problem: new Error('the PQ prekey is not signed by the peer identity key, or its key id is not the key\'s'), forged: true };
  } catch (err) {
    return { problem: err as Error, forged: true };
  }
}

/** Whether `client` can read device settings (a `ParleyClient` can; partial stand-ins may not). */
function readsDeviceSettings(client: ParleyClient): boolean {
  const c = client as Partial<ParleyClient>;
  return typeof c.getSelfDeviceSettings === 'function' || typeof c.getDeviceSettings === 'function';
}

/**
 * The tenant's `require_post_quantum` setting as this device's settings show it: `GET
 * /devices/self/settings` for a device (JWT or API key), `GET /devices/{id}/settings` for an owner
 * client (owner JWT, this device as `X-Device-Id`). False for a client without those routes or a
 * service from before the setting (the field absent).
 * @throws the REST client's errors.
 */
export async function tenantRequiresPostQuantum(client: ParleyClient, deviceId: string): Promise<boolean> {
  if (!readsDeviceSettings(client)) return false;
  const c = client as Partial<ParleyClient>;
  const asOwner = c.getSelfDeviceSettings === undefined || (!(await c.currentDeviceToken?.()) && (await c.currentOwnerToken?.()) !== undefined);
  const settings = asOwner ? await client.getDeviceSettings(deviceId, { deviceId }) : await client.getSelfDeviceSettings({ deviceId });
  return settings.require_post_quantum === true;
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
