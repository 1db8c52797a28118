/**
 * A small facade over X3DH (x3dh.ts), the Double Ratchet (double-ratchet.ts) and the wire frame
 * (frame.ts): one {@link RatchetSession} per pair of devices (the legacy 1:1 protocol of
 * contract §1.3), speaking the `{header_blob, ciphertext}` fields of contract §2.4 / §6.1.
 *
 * Typical use:
 * ```ts
 * // Alice, knowing Bob's device from the server (design §7 owner_public_keys / client_key_accepted):
 * const alice = RatchetSession.initiate(aliceIdentity, { device_id, identity_public_key, ephemeral_public_key }, { conversationId });
 * const wire = alice.encrypt(utf8Encode('hello'));            // → POST /conversations/{id}/messages
 * // Bob, receiving the first message from sender_device_id whose identity key he knows:
 * const { session: bob, plaintext } = RatchetSession.respond(bobIdentity, wire, aliceIdentityKeyHex, { conversationId });
 * await store.save(conversationId, bob.serialize());          // persist after every encrypt/decrypt
 * ```
 *
 * A session is bound to one conversation between two devices (x3dh.ts `SessionContext`): the
 * context is in the X3DH / PQXDH associated data and every header names the conversation and the
 * recipient, so the server cannot replay a session's messages into another conversation.
 *
 * Post-quantum (design §8.34): given the peer's signed ML-KEM-768 prekey
 * (`initiate(…, { pqPrekey })`, e.g. from `POST /api/v1/pq-prekeys/claim`), the initiator runs
 * PQXDH instead of X3DH; without one (an old peer, or none published) it runs X3DH as before. The
 * responder follows whatever the initial message carries, so both ends fall back to classical
 * X3DH when either lacks PQ support. The Double Ratchet on top is the same.
 *
 * Signed prekeys (X3DH rev. 1 §§3.2-3.4, prekeys.ts): given the peer's claimed bundle
 * (`initiate(…, { prekeys })`, from `POST /api/v1/prekeys/claim`), the initiator verifies the
 * signed prekey against the peer identity key, agrees on it (and on the one-time prekey, DH4) and
 * names both in the header (`signed_prekey_id`, `one_time_prekey_id`). The responder finds them in
 * its prekey store (`respond(…, { prekeys })`). Without a bundle (a legacy peer that published
 * none) SPK_B is the peer's unsigned `ephemeral_public_key`.
 */
import { DoubleRatchet, checkHeaderContext, requireDeviceId, type DoubleRatchetOptions, type RatchetRole, type RatchetStateJSON } from './double-ratchet.js';
import { decodeFrame, encodeFrame, verifyFrameSignature, type WireMessage } from './frame.js';
import type { DeviceIdentity } from './keys.js';
import { PQ_KEM_NAME, type SignedPqPrekey } from './pq-prekey.js';
import { verifySignedPrekey, type PeerPrekeyBundle, type PrekeyHolder } from './prekeys.js';
import { pqxdhInitiate, pqxdhRespond, type PqPrekeyHolder } from './pqxdh.js';
import { CryptoError, KEY_BYTES, bytesToHex, equalBytes, fingerprint, hexToBytes, wipe, x25519DH, type KeyPair } from './primitives.js';
import { deviceEphemeralPrekeys, x3dhInitiate, x3dhRespond, type ResponderPrekeys, type SessionContext, type X3dhInitiation } from './x3dh.js';
import type { X3dhHeader } from './frame.js';

/** A peer device as the server publishes it (contract §2.3, design §7); keys are 64-char hex. */
export interface PeerDevice {
  device_id: string;
  /** Ed25519 identity public key, hex. */
  identity_public_key: string;
  /** X25519 ephemeral public key (X3DH signed-prekey role), hex. */
  ephemeral_public_key: string;
}

/** What binds a session: the conversation both devices name it by (the device ids come from the keys). */
export interface SessionBinding {
  /**
   * The conversation the session belongs to, identical on both devices (1 to 256 characters):
   * bound into the X3DH / PQXDH associated data and named by every header.
   */
  conversationId: string;
}

/** Options of {@link RatchetSession.initiate}. */
export interface InitiateOptions extends DoubleRatchetOptions, SessionBinding {
  /**
   * The peer's signed ML-KEM-768 prekey: when given, the session is agreed with PQXDH (its
   * signature must verify against the peer identity key); omitted, with classical X3DH.
   */
  pqPrekey?: SignedPqPrekey;
  /**
   * The peer's claimed X25519 prekey bundle (X3DH §3.3): its signed prekey (verified here against
   * the peer identity key) replaces `ephemeral_public_key` as SPK_B, its one-time prekey adds DH4.
   * Omitted: the legacy unsigned `ephemeral_public_key`.
   */
  prekeys?: PeerPrekeyBundle;
}

/** Options of {@link RatchetSession.respond}. */
export interface RespondOptions extends DoubleRatchetOptions, SessionBinding {
  /** When given, the initial frame's `device_id` must equal it (e.g. the server's `sender_device_id`). */
  peerDeviceId?: string;
  /** Who decapsulates a PQXDH initial message's KEM ciphertext; default `local` (its PQ prekey). */
  pqPrekeys?: PqPrekeyHolder;
  /**
   * This device's X25519 prekeys (a `PrekeyStore`), for initial messages that name a signed (and
   * one-time) prekey. Nothing is deleted here: consume the one-time prekey
   * ({@link RespondResult.oneTimePrekeyId}) once the session is kept, and save both together.
   */
  prekeys?: PrekeyHolder;
}

/** What {@link RatchetSession.respond} returns: the new session and the initial message's plaintext. */
export interface RespondResult {
  session: RatchetSession;
  plaintext: Uint8Array;
  /** The one-time prekey the initial message used: delete it (X3DH §3.4) when keeping the session. */
  oneTimePrekeyId?: string;
}

/**
 * SPK_B (and OPK_B) of the initiator's agreement: the bundle's signed prekey once its signature by
 * the peer identity key verifies (X3DH §3.3), else the legacy `ephemeral_public_key`.
 * @throws CryptoError `bad_signature` for a signed prekey the peer did not sign; `invalid_input`.
 */
function initiatorPrekeys(peer: PeerDevice, peerIdentityKey: Uint8Array, bundle: PeerPrekeyBundle | undefined) {
  if (bundle === undefined) return { signedPrekey: keyArg(peer.ephemeral_public_key, 'ephemeral_public_key'), ids: {} };
  if (!verifySignedPrekey(peerIdentityKey, bundle.signedPrekey)) {
    throw new CryptoError('bad_signature', "the signed prekey is not signed by the peer identity key (or its key id does not match): refusing to start the session");
  }
  const oneTime = bundle.oneTimePrekey;
  return {
    signedPrekey: keyArg(bundle.signedPrekey.publicKey, 'signed prekey'),
    oneTimePrekey: oneTime && keyArg(oneTime.publicKey, 'one-time prekey'),
    ids: { signed_prekey_id: bundle.signedPrekey.keyId, ...(oneTime ? { one_time_prekey_id: oneTime.keyId } : {}) },
  };
}

/**
 * The responder's keys for an initial message (X3DH §3.4): the signed prekey pair it names, from
 * `holder` (also Bob's first ratchet key pair, Double Ratchet §3.3), with DH4 by the one-time
 * prekey it names; or, for a message without `signed_prekey_id`, the device ephemeral key.
 * The returned `ratchetKeyPair` is a copy to erase after use.
 * @throws CryptoError `unknown_prekey` (not held, deleted after rotation, or another key than the
 *   header's `signed_prekey`), `malformed_frame` (a one-time prekey without a signed one).
 */
function responderPrekeys(local: DeviceIdentity, x: X3dhHeader, holder: PrekeyHolder | undefined): { ratchetKeyPair: KeyPair; prekeys: ResponderPrekeys } {
  const { signed_prekey_id: spkId, one_time_prekey_id: opkId } = x;
  if (spkId === undefined) {
    if (opkId !== undefined) throw new CryptoError('malformed_frame', 'the initial message names a one-time prekey without a signed prekey');
    if (x.signed_prekey !== local.ephemeralPublicKeyHex) {
      throw new CryptoError('unknown_prekey', 'the initial message was built for another ephemeral (prekey) public key');
    }
    return { ratchetKeyPair: local.ephemeralKeyPair(), prekeys: deviceEphemeralPrekeys(local) };
  }
  if (holder === undefined) throw new CryptoError('unknown_prekey', 'the initial message names a signed prekey, and this device keeps none');
  const pair = holder.signedPrekeyPair(spkId);
  if (bytesToHex(pair.publicKey) !== x.signed_prekey) {
    wipe(pair.secretKey);
    throw new CryptoError('unknown_prekey', 'the initial message names a signed prekey id with another key');
  }
  const prekeys: ResponderPrekeys = { signedPrekeyDh: (peerKey) => x25519DH(pair.secretKey, peerKey) };
  if (opkId !== undefined) prekeys.oneTimeDh = (peerKey) => holder.oneTimeDh(opkId, peerKey);
  return { ratchetKeyPair: pair, prekeys };
}

function keyArg(key: string | Uint8Array, what: string): Uint8Array {
  if (typeof key === 'string') return hexToBytes(key, KEY_BYTES, what);
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new CryptoError('invalid_input', `${what} must be 32 bytes`);
  return key.slice();
}

/** An end-to-end encrypted 1:1 session (X3DH + Double Ratchet) with one peer device. */
export class RatchetSession {
  private constructor(private readonly ratchet: DoubleRatchet) {}

  /**
   * Start a session as the X3DH initiator (X3DH §3.3), or the PQXDH one (PQXDH §3.3) when
   * `options.pqPrekey` is given, with a peer device published by the server. The first messages
   * carry the X3DH fields (with `pq`: the KEM ciphertext) until the peer's first reply is decrypted.
   * @param local this device's keys; must have its device id ({@link DeviceIdentity.withDeviceId}).
   * @param options `conversationId` (required) binds the session; `pqPrekey` selects PQXDH;
   *   `prekeys` the peer's signed (and one-time) prekey instead of its `ephemeral_public_key`.
   * @throws CryptoError `invalid_input` (malformed peer keys or conversation id), `invalid_key`
   * (not a valid point / low-order key), `bad_signature` (the PQ prekey or the signed prekey is not
   * signed by the peer) or `not_ready` (no local device id).
   */
  static initiate(local: DeviceIdentity, peer: PeerDevice, options: InitiateOptions): RatchetSession {
    const peerIdentityKey = keyArg(peer.identity_public_key, 'identity_public_key');
    if (typeof peer.device_id !== 'string' || peer.device_id.length === 0) {
      throw new CryptoError('invalid_input', 'peer device_id is required');
    }
    const { pqPrekey, prekeys, conversationId, ...limits } = options;
    const { signedPrekey: peerSignedPrekey, oneTimePrekey, ids } = initiatorPrekeys(peer, peerIdentityKey, prekeys);
    const context: SessionContext = { conversationId, initiatorDeviceId: requireDeviceId(local), responderDeviceId: peer.device_id };
    let x3dh: X3dhInitiation;
    let pq: X3dhHeader['pq'];
    if (pqPrekey === undefined) {
      x3dh = x3dhInitiate(local, peerIdentityKey, peerSignedPrekey, context, oneTimePrekey);
    } else {
      const agreed = pqxdhInitiate(local, peerIdentityKey, peerSignedPrekey, pqPrekey, context, oneTimePrekey);
      x3dh = agreed;
      pq = { kem: PQ_KEM_NAME, prekey_id: agreed.pqPrekeyId, ciphertext: bytesToHex(agreed.kemCiphertext) };
    }
    try {
      const ratchet = DoubleRatchet.initAlice({
        local,
        peerDeviceId: peer.device_id,
        conversationId,
        peerIdentityKey,
        sharedKey: x3dh.sharedKey,
        associatedData: x3dh.associatedData,
        peerSignedPrekey,
        x3dh: {
          identity_key: local.identityPublicKeyHex,
          ephemeral_key: bytesToHex(x3dh.ephemeralPublicKey),
          signed_prekey: bytesToHex(peerSignedPrekey),
          ...ids,
          ...(pq ? { pq } : {}),
        },
        options: limits,
      });
      return new RatchetSession(ratchet);
    } finally {
      wipe(x3dh.sharedKey);
    }
  }

  /**
   * Accept a session as the X3DH responder (X3DH §3.4) from the peer's initial message (any
   * message that carries the `x3dh` header fields), and decrypt it. A message with `x3dh.pq` is
   * answered with PQXDH (PQXDH §3.4), decapsulating with `options.pqPrekeys` (default `local`).
   *
   * Checks, before any key agreement: the frame parses; it carries `x3dh`; its `identity_key` is
   * `peerIdentityKey` (which the caller knows from the server, not from the frame); the header
   * signature verifies against it; it names `options.conversationId` and this device
   * (`wrong_context`); its signed prekey is held: with `signed_prekey_id`, a signed prekey of
   * `options.prekeys` (current or in its grace period) whose public key is `signed_prekey`, and the
   * one-time prekey `one_time_prekey_id` when named (X3DH §3.4); without, this device's ephemeral key.
   *
   * The one-time prekey is not deleted here: the caller deletes it
   * ({@link RespondResult.oneTimePrekeyId}) when it keeps the session, saving both in one write.
   * Without a one-time prekey an initial message can be replayed to create the same session again
   * (X3DH §4.2) — within its own conversation only; keep the session once created, route later
   * frames to {@link decrypt}, and remember accepted EK_A per peer device (as `SecureMessenger` does).
   *
   * @throws CryptoError `unsupported_version` (a v1 frame from an older SDK), `malformed_frame`,
   * `wrong_peer`, `bad_signature`, `wrong_context`, `unknown_prekey` (also for a PQ, signed or
   * one-time prekey this device does not hold, or no longer: used or past its grace), `invalid_key`, `decrypt_failed` (also for a tampered KEM ciphertext) or
   * `not_ready` (no local device id).
   */
  static respond(local: DeviceIdentity, firstMessage: WireMessage, peerIdentityKey: string | Uint8Array, options: RespondOptions): RespondResult {
    const frame = decodeFrame(firstMessage);
    const x = frame.header.x3dh;
    if (!x) throw new CryptoError('malformed_frame', 'not an initial message: the header has no x3dh fields');
    const identityKey = keyArg(peerIdentityKey, 'peer identity key');
    if (!equalBytes(hexToBytes(x.identity_key, KEY_BYTES), identityKey)) {
      throw new CryptoError('wrong_peer', 'the initial message names another identity key than the expected peer');
    }
    if (!verifyFrameSignature(frame, identityKey)) {
      throw new CryptoError('bad_signature', 'header signature does not verify against the peer identity key');
    }
    if (options.peerDeviceId !== undefined && options.peerDeviceId !== frame.header.device_id) {
      throw new CryptoError('wrong_peer', `frame from device ${frame.header.device_id}, expected ${options.peerDeviceId}`);
    }
    const { peerDeviceId: _ignored, pqPrekeys, prekeys: holder, conversationId, ...limits } = options;
    checkHeaderContext(frame.header, conversationId, requireDeviceId(local));
    const context: SessionContext = { conversationId, initiatorDeviceId: frame.header.device_id, responderDeviceId: requireDeviceId(local) };
    const { ratchetKeyPair, prekeys } = responderPrekeys(local, x, holder);
    let secret: ReturnType<typeof x3dhRespond> | undefined;
    try {
      const ephemeralKey = hexToBytes(x.ephemeral_key, KEY_BYTES);
      secret = x.pq
        ? pqxdhRespond(local, identityKey, ephemeralKey, hexToBytes(x.pq.ciphertext), x.pq.prekey_id, context, pqPrekeys ?? local, prekeys)
        : x3dhRespond(local, identityKey, ephemeralKey, context, prekeys);
      const ratchet = DoubleRatchet.initBob({
        local,
        peerDeviceId: frame.header.device_id,
        conversationId,
        peerIdentityKey: identityKey,
        sharedKey: secret.sharedKey,
        associatedData: secret.associatedData,
        ratchetKeyPair,
        x3dhEphemeralKey: x.ephemeral_key,
        postQuantum: x.pq !== undefined,
        options: limits,
      });
      const plaintext = ratchet.decrypt(frame);
      return { session: new RatchetSession(ratchet), plaintext, ...(x.one_time_prekey_id !== undefined ? { oneTimePrekeyId: x.one_time_prekey_id } : {}) };
    } finally {
      wipe(ratchetKeyPair.secretKey, ...(secret ? [secret.sharedKey] : []));
    }
  }

  /**
   * Restore a session saved with {@link toJSON} / {@link serialize}.
   * @throws CryptoError `invalid_state` (malformed state, saved by another identity, or saved
   * before conversation binding: `isUnboundRatchetState` of double-ratchet.ts; start a new session).
   */
  static fromJSON(json: string | RatchetStateJSON, local: DeviceIdentity, options?: DoubleRatchetOptions): RatchetSession {
    return new RatchetSession(DoubleRatchet.deserialize(json, local, options));
  }

  /**
   * True when the message's (unverified) header carries X3DH fields, i.e. it may start a session
   * (route it to {@link respond} when no session with the sender exists).
   * @throws CryptoError `malformed_frame`, `unsupported_version`.
   */
  static isInitialMessage(message: WireMessage): boolean {
    return decodeFrame(message).header.x3dh !== undefined;
  }

  /**
   * Encrypt one message (any bytes, including empty) into the wire fields; persist the session
   * afterwards. @throws CryptoError `not_ready` when no sending chain exists.
   */
  encrypt(plaintext: Uint8Array): WireMessage {
    return encodeFrame(this.ratchet.encrypt(plaintext));
  }

  /**
   * Verify and decrypt one message from the peer; persist the session afterwards. On any error
   * the session is unchanged.
   * @throws CryptoError `unsupported_version`, `malformed_frame`, `bad_signature`, `wrong_peer`,
   * `wrong_context` (the frame names another conversation or recipient), `new_session`, `replay`
   * (already decrypted — e.g. an at-least-once redelivery), `too_many_skipped`, `invalid_key`,
   * `decrypt_failed`.
   */
  decrypt(message: WireMessage): Uint8Array {
    return this.ratchet.decrypt(decodeFrame(message));
  }

  /** The whole session state (hex; holds secrets). `JSON.stringify(session)` uses it. */
  toJSON(): RatchetStateJSON {
    return this.ratchet.toJSON();
  }

  /** {@link toJSON} as a string, for a {@link SessionStore}. */
  serialize(): string {
    return this.ratchet.serialize();
  }

  /** `initiator` or `responder`. */
  get role(): RatchetRole {
    return this.ratchet.role;
  }
  /** The peer device id. */
  get peerDeviceId(): string {
    return this.ratchet.peerDeviceId;
  }
  /** The conversation the session is bound to. */
  get conversationId(): string {
    return this.ratchet.conversationId;
  }
  /** The peer's Ed25519 identity public key, hex. */
  get peerIdentityKey(): string {
    return this.ratchet.peerIdentityKeyHex;
  }
  /** design §7 fingerprint of the peer identity key, to compare out of band. */
  get peerFingerprint(): string {
    return fingerprint(this.ratchet.peerIdentityKeyHex);
  }
  /** True when the session was agreed with PQXDH (X25519 + ML-KEM-768), false for classical X3DH. */
  get postQuantum(): boolean {
    return this.ratchet.postQuantum;
  }
  /** True while this initiator has not yet received a reply (its headers still carry `x3dh`). */
  get awaitingFirstReply(): boolean {
    return this.ratchet.awaitingFirstReply;
  }
  /** Skipped message keys currently stored. */
  get skippedKeyCount(): number {
    return this.ratchet.skippedKeyCount;
  }
}
