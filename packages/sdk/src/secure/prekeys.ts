/**
 * The X3DH prekey parts of a SecureMessenger's key handling (Signal X3DH rev. 1 §3.2-§3.3), kept
 * out of messenger.ts:
 *
 * - Publishing ({@link ensurePrekeys}): the signed prekey is rotated on the store's schedule and
 *   published whenever the service does not serve the current one; one-time prekeys are topped up
 *   by a batch when the service holds fewer than the low-water mark. New private keys are saved
 *   (the caller's `save`) before their public halves are published.
 * - Claiming ({@link claimPeerPrekeys}): the peer's bundle, with the signed prekey verified against
 *   the peer's identity key. A bad signature, or a failed claim, means no session (X3DH §3.3:
 *   Alice aborts), never a fall-back to the unsigned `ephemeral_public_key`. Only a 404 (the peer
 *   published no signed prekey: an older client) gives `undefined`, for the caller's legacy path.
 */
import { oneTimePrekeyLabel, oneTimePrekeyValue, signedPrekeyLabel, signedPrekeyValue } from '@parley/protocol';
import type { ParleyClient } from '../client/rest.js';
import { ParleyApiError } from '../client/errors.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import {
  oneTimePrekeyFromWire,
  oneTimePrekeyToWire,
  signedPrekeyFromWire,
  signedPrekeyToWire,
  verifySignedPrekey,
  type PeerPrekeyBundle,
  type X25519OneTimePrekey,
  type PrekeyStateJSON,
  type PrekeyStore,
  type X25519SignedPrekey,
} from '../crypto/prekeys.js';
import { CryptoError, KEY_BYTES, hexToBytes } from '../crypto/primitives.js';
import type { PeerDevice } from '../crypto/session.js';

/** The REST methods this module uses (a `ParleyClient` has them; partial stand-ins may not). */
type PrekeyClient = Pick<ParleyClient, 'prekeyCount' | 'publishPrekeys' | 'claimPrekeyBundle'>;

/** Whether `client` can reach the prekey routes (a partial stand-in without them keeps the legacy path). */
export function speaksPrekeys(client: Partial<PrekeyClient>): client is PrekeyClient {
  return typeof client.claimPrekeyBundle === 'function' && typeof client.publishPrekeys === 'function' && typeof client.prekeyCount === 'function';
}

/** What {@link ensurePrekeys} did. */
export interface PrekeyUpkeep {
  /** The signed prekey was rotated (a new one made, or a retired one deleted). */
  rotated: boolean;
  /** The current signed prekey was published. */
  publishedSigned: boolean;
  /** One-time prekeys published. */
  publishedOneTime: number;
}

/**
 * Rotate, save and publish the device's prekeys (see the file comment). `save` receives the
 * store's JSON whenever it changed, before anything new is published.
 * @param now epoch ms (the schedule's clock).
 * @throws the REST client's errors, and `save`'s.
 */
export async function ensurePrekeys(
  client: PrekeyClient,
  identity: DeviceIdentity,
  deviceId: string,
  store: PrekeyStore,
  save: (state: PrekeyStateJSON) => Promise<void>,
  now = Date.now(),
): Promise<PrekeyUpkeep> {
  const rotated = store.rotate(identity, now);
  const held = await client.prekeyCount(deviceId, { deviceId });
  const signed = store.signedPrekey;
  const publishSigned = held.signed_prekey_key_id !== signed.keyId;
  const oneTime = held.one_time_available < store.schedule.oneTimeLowWater ? store.generateOneTime(store.schedule.oneTimeBatch, now) : [];
  if (rotated || oneTime.length > 0) await save(store.toJSON());
  if (!publishSigned && oneTime.length === 0) return { rotated, publishedSigned: false, publishedOneTime: 0 };
  await client.publishPrekeys(
    {
      ...(publishSigned ? { signed_prekey: signedPrekeyToWire(signed) } : {}),
      ...(oneTime.length > 0 ? { one_time: oneTime.map(oneTimePrekeyToWire) } : {}),
    },
    { deviceId },
  );
  return { rotated, publishedSigned: publishSigned, publishedOneTime: oneTime.length };
}

/**
 * A peer's verified prekey bundle (X3DH §3.3): SPK_B, its signature checked against the peer's
 * identity key, and OPK_B when the service had one left (consumed now); `served`: the key
 * directory label and value of each, as served (design §8.39), for the key-transparency check.
 */
export type PeerPrekeys = PeerPrekeyBundle & { served: [label: string, value: Uint8Array][] };

/**
 * Claim the peer's prekey bundle (`POST /prekeys/claim`) and verify its signed prekey against the
 * peer's identity key (X3DH §3.3). Undefined when the peer published none (404: an older client).
 * @throws CryptoError `bad_signature` when the signed prekey is not signed by the peer's identity
 *   key or is malformed (the service forged or swapped it: abort, do not fall back); the REST
 *   client's errors for any other failed claim (a failure is not read as "none published").
 */
export async function claimPeerPrekeys(client: PrekeyClient, deviceId: string, peer: PeerDevice): Promise<PeerPrekeys | undefined> {
  let bundle;
  try {
    bundle = await client.claimPrekeyBundle({ device_id: peer.device_id }, { deviceId });
  } catch (err) {
    if (err instanceof ParleyApiError && err.status === 404) return undefined;
    throw err;
  }
  let signedPrekey: X25519SignedPrekey;
  let oneTimePrekey: X25519OneTimePrekey | undefined;
  try {
    signedPrekey = signedPrekeyFromWire(bundle.signed_prekey);
    oneTimePrekey = bundle.one_time_prekey === null ? undefined : oneTimePrekeyFromWire(bundle.one_time_prekey);
  } catch (cause) {
    throw new CryptoError('bad_signature', `the peer's prekey bundle is malformed: ${(cause as Error).message}`, { cause });
  }
  if (bundle.device_id !== peer.device_id || !verifySignedPrekey(hexToBytes(peer.identity_public_key, KEY_BYTES), signedPrekey)) {
    throw new CryptoError('bad_signature', "the peer's signed prekey is not signed by its identity key: refusing to start the session");
  }
  const served: [string, Uint8Array][] = [[signedPrekeyLabel(peer.device_id), signedPrekeyValue(bundle.signed_prekey)]];
  if (bundle.one_time_prekey) served.push([oneTimePrekeyLabel(peer.device_id, bundle.one_time_prekey.key_id), oneTimePrekeyValue(bundle.one_time_prekey)]);
  return { signedPrekey, ...(oneTimePrekey === undefined ? {} : { oneTimePrekey }), served };
}
