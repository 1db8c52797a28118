/**
 * A small facade over X3DH (x3dh.ts), the Double Ratchet (double-ratchet.ts) and the wire frame
 * (frame.ts): one {@link RatchetSession} per pair of devices (the legacy 1:1 protocol of
 * SPEC §1.3), speaking the `{header_blob, ciphertext}` fields of SPEC §2.4 / §6.1.
 *
 * Typical use:
 * ```ts
 * // Alice, knowing Bob's device from the server (DESIGN §7 owner_public_keys / client_key_accepted):
 * const alice = RatchetSession.initiate(aliceIdentity, { device_id, identity_public_key, ephemeral_public_key });
 * const wire = alice.encrypt(utf8Encode('hello'));            // → POST /conversations/{id}/messages
 * // Bob, receiving the first message from sender_device_id whose identity key he knows:
 * const { session: bob, plaintext } = RatchetSession.respond(bobIdentity, wire, aliceIdentityKeyHex);
 * await store.save(conversationId, bob.serialize());          // persist after every encrypt/decrypt
 * ```
 *
 * Post-quantum (issue 16, DESIGN §8.34): given the peer's signed ML-KEM-768 prekey
 * (`initiate(…, { pqPrekey })`, e.g. from `POST /api/v1/pq-prekeys/claim`), the initiator runs
 * PQXDH instead of X3DH; without one (an old peer, or none published) it runs X3DH as before. The
 * responder follows whatever the initial message carries, so both ends fall back to classical
 * X3DH when either lacks PQ support. The Double Ratchet on top is the same.
 */
import { DoubleRatchet, type DoubleRatchetOptions, type RatchetRole, type RatchetStateJSON } from './double-ratchet.js';
import { decodeFrame, encodeFrame, verifyFrameSignature, type WireMessage } from './frame.js';
import type { DeviceIdentity } from './keys.js';
import { PQ_KEM_NAME, type SignedPqPrekey } from './pq-prekey.js';
import { pqxdhInitiate, pqxdhRespond, type PqPrekeyHolder } from './pqxdh.js';
import { CryptoError, KEY_BYTES, bytesToHex, equalBytes, fingerprint, hexToBytes, wipe } from './primitives.js';
import { x3dhInitiate, x3dhRespond, type X3dhInitiation } from './x3dh.js';
import type { X3dhHeader } from './frame.js';

/** A peer device as the server publishes it (SPEC §2.3, DESIGN §7); keys are 64-char hex. */
export interface PeerDevice {
  device_id: string;
  /** Ed25519 identity public key, hex. */
  identity_public_key: string;
  /** X25519 ephemeral public key (X3DH signed-prekey role), hex. */
  ephemeral_public_key: string;
}

/** Options of {@link RatchetSession.initiate}. */
export interface InitiateOptions extends DoubleRatchetOptions {
  /**
   * The peer's signed ML-KEM-768 prekey: when given, the session is agreed with PQXDH (its
   * signature must verify against the peer identity key); omitted, with classical X3DH.
   */
  pqPrekey?: SignedPqPrekey;
}

/** Options of {@link RatchetSession.respond}. */
export interface RespondOptions extends DoubleRatchetOptions {
  /** When given, the initial frame's `device_id` must equal it (e.g. the server's `sender_device_id`). */
  peerDeviceId?: string;
  /** Who decapsulates a PQXDH initial message's KEM ciphertext; default `local` (its PQ prekey). */
  pqPrekeys?: PqPrekeyHolder;
}

/** What {@link RatchetSession.respond} returns: the new session and the initial message's plaintext. */
export interface RespondResult {
  session: RatchetSession;
  plaintext: Uint8Array;
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
   * @throws CryptoError `invalid_input` (malformed peer keys), `invalid_key` (not a valid point /
   * low-order key), `bad_signature` (the PQ prekey is not signed by the peer) or `not_ready` (no
   * local device id).
   */
  static initiate(local: DeviceIdentity, peer: PeerDevice, options?: InitiateOptions): RatchetSession {
    const peerIdentityKey = keyArg(peer.identity_public_key, 'identity_public_key');
    const peerSignedPrekey = keyArg(peer.ephemeral_public_key, 'ephemeral_public_key');
    if (typeof peer.device_id !== 'string' || peer.device_id.length === 0) {
      throw new CryptoError('invalid_input', 'peer device_id is required');
    }
    const { pqPrekey, ...limits } = options ?? {};
    let x3dh: X3dhInitiation;
    let pq: X3dhHeader['pq'];
    if (pqPrekey === undefined) {
      x3dh = x3dhInitiate(local, peerIdentityKey, peerSignedPrekey);
    } else {
      const agreed = pqxdhInitiate(local, peerIdentityKey, peerSignedPrekey, pqPrekey);
      x3dh = agreed;
      pq = { kem: PQ_KEM_NAME, prekey_id: agreed.pqPrekeyId, ciphertext: bytesToHex(agreed.kemCiphertext) };
    }
    try {
      const ratchet = DoubleRatchet.initAlice({
        local,
        peerDeviceId: peer.device_id,
        peerIdentityKey,
        sharedKey: x3dh.sharedKey,
        associatedData: x3dh.associatedData,
        peerSignedPrekey,
        x3dh: {
          identity_key: local.identityPublicKeyHex,
          ephemeral_key: bytesToHex(x3dh.ephemeralPublicKey),
          signed_prekey: bytesToHex(peerSignedPrekey),
          ...(pq ? { pq } : {}),
        },
        ...(options ? { options: limits } : {}),
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
   * signature verifies against it; its `signed_prekey` is this device's ephemeral key.
   *
   * Without one-time prekeys an initial message can be replayed to create the same session again
   * (X3DH §4.2); keep the session once created and route later frames to {@link decrypt}.
   *
   * @throws CryptoError `malformed_frame`, `wrong_peer`, `bad_signature`, `unknown_prekey` (also
   * for a PQ prekey this device does not hold), `invalid_key`, `decrypt_failed` (also for a
   * tampered KEM ciphertext) or `not_ready` (no local device id).
   */
  static respond(local: DeviceIdentity, firstMessage: WireMessage, peerIdentityKey: string | Uint8Array, options?: RespondOptions): RespondResult {
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
    if (options?.peerDeviceId !== undefined && options.peerDeviceId !== frame.header.device_id) {
      throw new CryptoError('wrong_peer', `frame from device ${frame.header.device_id}, expected ${options.peerDeviceId}`);
    }
    if (x.signed_prekey !== local.ephemeralPublicKeyHex) {
      throw new CryptoError('unknown_prekey', 'the initial message was built for another ephemeral (prekey) public key');
    }
    const ephemeralKey = hexToBytes(x.ephemeral_key, KEY_BYTES);
    const secret = x.pq
      ? pqxdhRespond(local, identityKey, ephemeralKey, hexToBytes(x.pq.ciphertext), x.pq.prekey_id, options?.pqPrekeys ?? local)
      : x3dhRespond(local, identityKey, ephemeralKey);
    const { peerDeviceId: _ignored, pqPrekeys: _holder, ...limits } = options ?? {};
    try {
      const ratchet = DoubleRatchet.initBob({
        local,
        peerDeviceId: frame.header.device_id,
        peerIdentityKey: identityKey,
        sharedKey: secret.sharedKey,
        associatedData: secret.associatedData,
        ratchetKeyPair: local.ephemeralKeyPair(),
        x3dhEphemeralKey: x.ephemeral_key,
        postQuantum: x.pq !== undefined,
        options: limits,
      });
      const plaintext = ratchet.decrypt(frame);
      return { session: new RatchetSession(ratchet), plaintext };
    } finally {
      wipe(secret.sharedKey);
    }
  }

  /**
   * Restore a session saved with {@link toJSON} / {@link serialize}.
   * @throws CryptoError `invalid_state` (malformed state, or saved by another identity).
   */
  static fromJSON(json: string | RatchetStateJSON, local: DeviceIdentity, options?: DoubleRatchetOptions): RatchetSession {
    return new RatchetSession(DoubleRatchet.deserialize(json, local, options));
  }

  /**
   * True when the message's (unverified) header carries X3DH fields, i.e. it may start a session
   * (route it to {@link respond} when no session with the sender exists).
   * @throws CryptoError `malformed_frame`.
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
   * @throws CryptoError `malformed_frame`, `bad_signature`, `wrong_peer`, `new_session`, `replay`
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
  /** The peer's Ed25519 identity public key, hex. */
  get peerIdentityKey(): string {
    return this.ratchet.peerIdentityKeyHex;
  }
  /** DESIGN §7 fingerprint of the peer identity key, to compare out of band. */
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
