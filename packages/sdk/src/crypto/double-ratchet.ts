/**
 * The Double Ratchet ("The Double Ratchet Algorithm", Signal, rev. 1, 2016-11-20), §3 with the
 * recommended cryptographic algorithms of §5.2, except that ENCRYPT is XChaCha20-Poly1305
 * (contract §1.3) keyed directly by the one-time message key with a 24-byte random nonce:
 *
 * - GENERATE_DH: a fresh X25519 key pair; DH: X25519.
 * - KDF_RK(rk, dh_out): HKDF-SHA256 with rk as salt, dh_out as input key material and
 *   {@link KDF_RK_INFO} as info; 64 bytes split into (new root key, chain key).
 * - KDF_CK(ck): HMAC-SHA256 keyed by ck; message key = HMAC(ck, 0x01), next chain key = HMAC(ck, 0x02).
 * - HEADER(dh_pair, pn, n): `{device_id, recipient_device_id, conversation_id, ratchet_pub,
 *   msg_num: n, pn, nonce, x3dh?}` (see frame.ts), signed with the sender's Ed25519 identity key
 *   under the `parley/v2/message-header` signing domain. A received header must name this
 *   session's conversation and this device (`wrong_context` otherwise).
 * - CONCAT(AD, header): the X3DH AD (Encode(IK_A) || Encode(IK_B) || session context, x3dh.ts)
 *   followed by the canonical header bytes.
 * - MAX_SKIP (per chain, default 1000) and a cap on the total number of stored skipped message
 *   keys (default 2000, oldest evicted first, as §3.5 / §6.4 suggest).
 *
 * The state and its saved form are in `ratchet-state.ts`; the KDFs and the chain steps of
 * RatchetDecrypt in `ratchet-chains.ts`.
 *
 * Every message key is used once and deleted (forward secrecy, contract §1.3). A frame whose key is
 * gone (already decrypted, or evicted) is refused as `replay`. Decryption works on a copy of the
 * state and commits it only on success (§3.5: "if an exception is raised … discard any changes").
 */
import type { DeviceIdentity } from './keys.js';
import { headerSignatureMessage, headerSigningBytes, verifyFrameSignature, MAX_COUNTER, type Frame, type MessageHeader, type X3dhHeader } from './frame.js';
import {
  CryptoError,
  XCHACHA_NONCE_BYTES,
  bytesToHex,
  concatBytes,
  equalBytes,
  randomBytes,
  wipe,
  x25519DH,
  x25519Keygen,
  xchacha20poly1305Encrypt,
  type KeyPair,
} from './primitives.js';
import { kdfCk, kdfRk, ratchetDecrypt } from './ratchet-chains.js';
import {
  cloneState,
  limits,
  parseRatchetState,
  ratchetStateToJSON,
  retire,
  type DoubleRatchetOptions,
  type RatchetRole,
  type RatchetState,
  type RatchetStateJSON,
} from './ratchet-state.js';

export { KDF_RK_INFO, kdfCk, kdfRk } from './ratchet-chains.js';
export {
  DEFAULT_MAX_SKIP,
  DEFAULT_MAX_SKIPPED_KEYS,
  RATCHET_STATE_VERSION,
  RatchetStateSchema,
  isUnboundRatchetState,
  type DoubleRatchetOptions,
  type RatchetRole,
  type RatchetStateJSON,
} from './ratchet-state.js';

/** Parameters shared by both initialisations (the outcome of X3DH). */
export interface RatchetInit {
  local: DeviceIdentity;
  /** The peer's device UUID (header `device_id` of its frames). */
  peerDeviceId: string;
  /** The conversation of the session context bound into `associatedData`; every header names it. */
  conversationId: string;
  /** The peer's 32-byte Ed25519 identity public key; frames must be signed by it. */
  peerIdentityKey: Uint8Array;
  /** SK from X3DH (32 bytes). */
  sharedKey: Uint8Array;
  /** AD from X3DH (66 bytes). */
  associatedData: Uint8Array;
  options?: DoubleRatchetOptions;
}

/** How the initiator's headers name the key agreement: X3DH fields, with `pq` for PQXDH. */
function isPqxdh(x3dh: X3dhHeader): boolean {
  return x3dh.pq !== undefined;
}

/**
 * A Double Ratchet session between this device and one peer device. Produces and consumes
 * decoded {@link Frame}s; {@link RatchetSession} (session.ts) wraps it with the wire encoding.
 */
export class DoubleRatchet {
  private state: RatchetState;
  private readonly local: DeviceIdentity;

  private constructor(local: DeviceIdentity, state: RatchetState) {
    if (!equalBytes(local.identityPublicKey, state.localIdentityKey)) {
      throw new CryptoError('invalid_state', 'the session state belongs to another identity key');
    }
    if (local.deviceId !== undefined && local.deviceId !== state.localDeviceId) {
      throw new CryptoError('invalid_state', 'the session state belongs to another device');
    }
    this.local = local;
    this.state = state;
  }

  /**
   * RatchetInitAlice (Double Ratchet §3.3): DHs = GENERATE_DH(), DHr = SPK_B,
   * (RK, CKs) = KDF_RK(SK, DH(DHs, DHr)). Headers carry `x3dh` until a reply decrypts.
   * @throws CryptoError `not_ready` when `local` has no device id, `invalid_key` for a bad SPK_B.
   */
  static initAlice(init: RatchetInit & { peerSignedPrekey: Uint8Array; x3dh: X3dhHeader }): DoubleRatchet {
    const { maxSkip, maxSkippedKeys } = limits(init.options);
    const localDeviceId = requireDeviceId(init.local);
    const dhs = x25519Keygen();
    const dhOut = x25519DH(dhs.secretKey, init.peerSignedPrekey);
    const [rk, cks] = kdfRk(init.sharedKey, dhOut);
    wipe(dhOut);
    return new DoubleRatchet(init.local, {
      role: 'initiator',
      localDeviceId,
      peerDeviceId: init.peerDeviceId,
      conversationId: init.conversationId,
      localIdentityKey: init.local.identityPublicKey,
      peerIdentityKey: init.peerIdentityKey.slice(),
      ad: init.associatedData.slice(),
      dhs,
      dhr: init.peerSignedPrekey.slice(),
      rk,
      cks,
      ckr: null,
      ns: 0,
      nr: 0,
      pn: 0,
      skipped: new Map(),
      retiredRatchetKeys: [],
      pendingX3dh: { ...init.x3dh },
      x3dhEphemeralKey: init.x3dh.ephemeral_key,
      postQuantum: isPqxdh(init.x3dh),
      maxSkip,
      maxSkippedKeys,
    });
  }

  /**
   * RatchetInitBob (Double Ratchet §3.3): DHs = the signed-prekey pair (our ephemeral key pair),
   * DHr = none, RK = SK. The caller must then decrypt the initial message, which performs the
   * first DH ratchet step; until then the session cannot send.
   */
  static initBob(init: RatchetInit & { ratchetKeyPair: KeyPair; x3dhEphemeralKey: string; postQuantum?: boolean }): DoubleRatchet {
    const { maxSkip, maxSkippedKeys } = limits(init.options);
    const localDeviceId = requireDeviceId(init.local);
    return new DoubleRatchet(init.local, {
      role: 'responder',
      localDeviceId,
      peerDeviceId: init.peerDeviceId,
      conversationId: init.conversationId,
      localIdentityKey: init.local.identityPublicKey,
      peerIdentityKey: init.peerIdentityKey.slice(),
      ad: init.associatedData.slice(),
      dhs: { secretKey: init.ratchetKeyPair.secretKey.slice(), publicKey: init.ratchetKeyPair.publicKey.slice() },
      dhr: null,
      rk: init.sharedKey.slice(),
      cks: null,
      ckr: null,
      ns: 0,
      nr: 0,
      pn: 0,
      skipped: new Map(),
      retiredRatchetKeys: [],
      pendingX3dh: null,
      x3dhEphemeralKey: init.x3dhEphemeralKey,
      postQuantum: init.postQuantum === true,
      maxSkip,
      maxSkippedKeys,
    });
  }

  /** Which side of X3DH this session started on. */
  get role(): RatchetRole {
    return this.state.role;
  }
  /** This device's id, as put in `device_id` of outgoing headers. */
  get localDeviceId(): string {
    return this.state.localDeviceId;
  }
  /** The peer device's id; incoming frames must carry it. */
  get peerDeviceId(): string {
    return this.state.peerDeviceId;
  }
  /** The conversation the session is bound to; every header names it. */
  get conversationId(): string {
    return this.state.conversationId;
  }
  /** The peer's Ed25519 identity public key, hex. */
  get peerIdentityKeyHex(): string {
    return bytesToHex(this.state.peerIdentityKey);
  }
  /** True while outgoing headers still carry the X3DH fields (initiator, before the first reply). */
  get awaitingFirstReply(): boolean {
    return this.state.pendingX3dh !== null;
  }
  /** Number of skipped message keys currently stored. */
  get skippedKeyCount(): number {
    return this.state.skipped.size;
  }
  /** EK_A (hex) of the X3DH run this session comes from. */
  get x3dhEphemeralKey(): string {
    return this.state.x3dhEphemeralKey;
  }
  /** True when the session's SK came from PQXDH (hybrid X25519 + ML-KEM-768), false for X3DH. */
  get postQuantum(): boolean {
    return this.state.postQuantum;
  }
  /** The limits in force. */
  get limits(): Required<DoubleRatchetOptions> {
    return { maxSkip: this.state.maxSkip, maxSkippedKeys: this.state.maxSkippedKeys };
  }

  /**
   * RatchetEncrypt (Double Ratchet §3.4): advance the sending chain, build and sign the header,
   * encrypt under the new message key (deleted right after) with a fresh 24-byte random nonce.
   * @throws CryptoError `not_ready` when there is no sending chain yet (a responder that has not
   * decrypted the initial message) or the sending counter is exhausted.
   */
  encrypt(plaintext: Uint8Array): Frame {
    if (!(plaintext instanceof Uint8Array)) throw new CryptoError('invalid_input', 'plaintext must be a Uint8Array');
    const s = this.state;
    if (s.cks === null) throw new CryptoError('not_ready', 'no sending chain yet: the responder must decrypt the initial message first');
    if (s.ns >= MAX_COUNTER) throw new CryptoError('not_ready', 'sending chain exhausted');
    const [cks, mk] = kdfCk(s.cks);
    try {
      const nonce = randomBytes(XCHACHA_NONCE_BYTES);
      const header: MessageHeader = {
        device_id: s.localDeviceId,
        recipient_device_id: s.peerDeviceId,
        conversation_id: s.conversationId,
        ratchet_pub: bytesToHex(s.dhs.publicKey),
        msg_num: s.ns,
        pn: s.pn,
        nonce: bytesToHex(nonce),
        ...(s.pendingX3dh ? { x3dh: { ...s.pendingX3dh } } : {}),
      };
      const signed = headerSigningBytes(header);
      const ciphertext = xchacha20poly1305Encrypt(mk, nonce, plaintext, concatBytes(s.ad, signed));
      const signature = this.local.sign(headerSignatureMessage(header));
      const next: RatchetState = { ...s, cks, ns: s.ns + 1 };
      this.state = next;
      retire(s, next);
      return { header, signature, ciphertext };
    } finally {
      wipe(mk);
    }
  }

  /**
   * RatchetDecrypt (Double Ratchet §3.5) of a frame from the peer. Verifies, in order: the header
   * signature against the peer identity key, the sender device id, the context (the header names
   * this session's conversation and this device), the X3DH fields (if any), then decrypts with a
   * stored skipped key or by stepping the ratchets. The state changes only if the whole operation
   * succeeds; the message key used is deleted.
   * @throws CryptoError `bad_signature`, `wrong_peer`, `wrong_context`, `new_session`, `replay`,
   * `too_many_skipped`, `invalid_key` or `decrypt_failed`; the state is then unchanged.
   */
  decrypt(frame: Frame): Uint8Array {
    const old = this.state;
    if (!verifyFrameSignature(frame, old.peerIdentityKey)) {
      throw new CryptoError('bad_signature', 'header signature does not verify against the peer identity key');
    }
    const { header } = frame;
    if (header.device_id !== old.peerDeviceId) {
      throw new CryptoError('wrong_peer', `frame from device ${header.device_id}, session peer is ${old.peerDeviceId}`);
    }
    checkHeaderContext(header, old.conversationId, old.localDeviceId);
    if (header.x3dh) {
      const x = header.x3dh;
      if (old.role === 'initiator' || x.ephemeral_key !== old.x3dhEphemeralKey || x.identity_key !== bytesToHex(old.peerIdentityKey)) {
        throw new CryptoError('new_session', 'the frame starts a new X3DH session; establish it with RatchetSession.respond');
      }
    }
    const next = cloneState(old);
    const plaintext = ratchetDecrypt(next, frame);
    next.pendingX3dh = null; // a message from the peer proves it has the session (X3DH §3.3)
    this.state = next;
    retire(old, next);
    return plaintext;
  }

  /** The whole state as a JSON string (hex). Contains secrets: store it protected. */
  serialize(): string {
    return JSON.stringify(this.toJSON());
  }

  /** The whole state as a JSON value (see {@link RatchetStateJSON}). */
  toJSON(): RatchetStateJSON {
    return ratchetStateToJSON(this.state);
  }

  /**
   * Restore a session from {@link serialize} output (string or parsed value). `local` must be the
   * identity the session was created with; `options` override the stored limits.
   * @throws CryptoError `invalid_state` when the JSON is malformed, inconsistent, belongs to
   * another identity, or was saved before conversation binding ({@link isUnboundRatchetState}).
   */
  static deserialize(json: string | RatchetStateJSON, local: DeviceIdentity, options?: DoubleRatchetOptions): DoubleRatchet {
    return new DoubleRatchet(local, parseRatchetState(json, options));
  }
}

/**
 * The header must name the session's conversation and this device as recipient.
 * @throws CryptoError `wrong_context`.
 */
export function checkHeaderContext(header: MessageHeader, conversationId: string, localDeviceId: string): void {
  if (header.conversation_id !== conversationId || header.recipient_device_id !== localDeviceId) {
    throw new CryptoError(
      'wrong_context',
      `frame for conversation ${header.conversation_id} / device ${header.recipient_device_id}, session is ${conversationId} / ${localDeviceId}`,
    );
  }
}

/** The local device id. @throws CryptoError `not_ready` when the identity has none yet. */
export function requireDeviceId(local: DeviceIdentity): string {
  if (local.deviceId === undefined) {
    throw new CryptoError('not_ready', 'the local DeviceIdentity has no device id yet (use withDeviceId after enrollment)');
  }
  return local.deviceId;
}
