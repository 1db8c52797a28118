/**
 * Key transparency in a {@link SecureMessenger} (design §8.39): no session is started with a
 * peer, and none a peer started is accepted, before the peer device's identity and X25519 keys
 * are verified in the key directory (`key-transparency/`); the signed, PQ and one-time prekeys a
 * session is built on are verified too. A failure refuses the session with a `key_transparency`
 * error (emitted, and reported to the owners by the key-transparency client). On by default
 * whenever the messenger has a REST client that speaks the key directory routes. The device also
 * checks its own entries ({@link monitorOwnKeys}) at `start` and after each prekey upkeep.
 */
import { deviceKeysLabel, deviceKeysValue } from '@parley/protocol';
import { pqPrekeyToWire } from '../crypto/pq-prekey.js';
import { signedPrekeyToWire } from '../crypto/prekeys.js';
import { KeyTransparency, speaksKeyDirectory, type KeyTransparencyError } from '../key-transparency/index.js';
import type { LiveConversation } from './conversation.js';
import { describe, type MessengerHost } from './messenger-host.js';
import { SecureMessengerError, type SecureMessengerOptions } from './types.js';

/** The messenger's key-transparency client: none with `keyTransparency: false` or without a client that speaks the key directory. */
export function messengerKeyTransparency(options: SecureMessengerOptions, deviceId: string): KeyTransparency | undefined {
  const kt = options.keyTransparency;
  if (kt === false || !speaksKeyDirectory(options.client)) return undefined;
  const settings = typeof kt === 'object' ? kt : {};
  return new KeyTransparency(options.client, {
    store: options.store,
    storeKey: `key-transparency-${options.storeKey ?? `secure-${deviceId}`}`,
    deviceId,
    ...settings,
  });
}

/** Report a refused key (`key_transparency`) and answer the error to throw. */
function refused(host: MessengerHost, conv: LiveConversation, err: KeyTransparencyError): SecureMessengerError {
  const e = new SecureMessengerError('key_transparency', `${describe(err)}; no session with ${conv.peer.device_id}`, { conversationId: conv.id, cause: err });
  host.report(e);
  return e;
}

/**
 * Verify `label` → `value` of the conversation's peer (its device keys, or a prekey it is about to
 * be used with), unless key transparency is off.
 * @throws SecureMessengerError `key_transparency` (also emitted) when the check fails; the REST
 *   client's errors when the lookup itself fails.
 */
export async function verifyPeerKey(host: MessengerHost, conv: LiveConversation, verify: (kt: KeyTransparency) => Promise<void>): Promise<void> {
  const kt = host.keyTransparency();
  if (!kt) return;
  try {
    await verify(kt);
  } catch (err) {
    if ((err as Error).name === 'KeyTransparencyError') throw refused(host, conv, err as KeyTransparencyError);
    throw err;
  }
}

/** {@link verifyPeerKey} of the peer device's identity and X25519 keys (`device/<id>`). */
export const verifyPeerDevice = (host: MessengerHost, conv: LiveConversation): Promise<void> => verifyPeerKey(host, conv, (kt) => kt.verifyDevice(conv.peer));

/**
 * {@link verifyPeerKey} of the peer device's keys and `served` (the labels and values of the
 * prekeys a session is about to be built on), in one lookup.
 */
export const verifyPeerSession = (host: MessengerHost, conv: LiveConversation, served: readonly (readonly [string, Uint8Array])[]): Promise<void> =>
  verifyPeerKey(host, conv, (kt) => kt.verifyAll([[deviceKeysLabel(conv.peer.device_id), deviceKeysValue(conv.peer)], ...served]));

/**
 * Check this device's own entries in the key directory (design §8.39 monitoring): its identity and
 * X25519 keys, the X25519 signed prekey this messenger published (with `prekeys`), and its signed
 * PQ prekey. A key in its name it did not publish is reported to the owners by the client and
 * emitted as a `key_transparency` error; nothing is thrown.
 * @returns the problems found (empty when all is well, or with key transparency off).
 */
export async function monitorOwnKeys(host: MessengerHost): Promise<SecureMessengerError[]> {
  const kt = host.keyTransparency();
  if (!kt) return [];
  const spk = host.prekeys()?.signedPrekey;
  const pq = host.identity.pqPrekey;
  let found: KeyTransparencyError[];
  try {
    found = await kt.monitorOwn({
      device_id: host.deviceId,
      identity_public_key: host.identity.identityPublicKeyHex,
      ephemeral_public_key: host.identity.ephemeralPublicKeyHex,
      ...(spk ? { signedPrekey: signedPrekeyToWire(spk) } : {}),
      ...(pq ? { pqPrekey: pqPrekeyToWire(pq) } : {}),
    });
  } catch (err) {
    const e = new SecureMessengerError('key_transparency', `checking this device's own keys in the key directory failed: ${describe(err)}`, { cause: err });
    host.report(e);
    return [e];
  }
  return found.map((err) => {
    const e = new SecureMessengerError('key_transparency', err.message, { cause: err });
    host.report(e);
    return e;
  });
}
