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
 * Every message key is used once and deleted (forward secrecy, contract §1.3). A frame whose key is
 * gone (already decrypted, or evicted) is refused as `replay`. Decryption works on a copy of the
 * state and commits it only on success (§3.5: "if an exception is raised … discard any changes").
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { DeviceIdentity } from './keys.js';
import {
  MAX_CONVERSATION_ID_CHARS,
  MAX_COUNTER,
  X3dhHeaderSchema,
  headerSignatureMessage,
  headerSigningBytes,
  verifyFrameSignature,
  type Frame,
  type MessageHeader,
  type X3dhHeader,
} from './frame.js';
import {
  CryptoError,
  KEY_BYTES,
  XCHACHA_NONCE_BYTES,
  bytesToHex,
  concatBytes,
  equalBytes,
  hexToBytes,
  hkdfSha256,
  hmacSha256,
  randomBytes,
  utf8Encode,
  wipe,
  x25519DH,
  x25519Keygen,
  x25519PublicKey,
  xchacha20poly1305Decrypt,
  xchacha20poly1305Encrypt,
  type KeyPair,
} from './primitives.js';

/** Default MAX_SKIP: most message keys one chain may skip in one step (Double Ratchet §3.2). */
export const DEFAULT_MAX_SKIP = 1000;
/** Default cap on stored skipped message keys across all chains (oldest evicted first). */
export const DEFAULT_MAX_SKIPPED_KEYS = 2000;
/** HKDF info of KDF_RK: the application-specific byte sequence of Double Ratchet §5.2. */
export const KDF_RK_INFO = utf8Encode('Parley_DoubleRatchet_RootChain_v1');
/** Retired receiving ratchet keys remembered to classify stale frames as replays. */
const RETIRED_RATCHET_KEYS = 64;
const MESSAGE_KEY_CONSTANT = Uint8Array.of(0x01);
const CHAIN_KEY_CONSTANT = Uint8Array.of(0x02);

/** Limits of a session; both are numbers of message keys. */
export interface DoubleRatchetOptions {
  /** MAX_SKIP: most message keys skipped in one receiving chain by one message (default 1000). */
  maxSkip?: number;
  /** Most skipped message keys stored in total; beyond it the oldest are deleted (default 2000). */
  maxSkippedKeys?: number;
}

/** Which side of X3DH the session started on. */
export type RatchetRole = 'initiator' | 'responder';

/**
 * KDF_RK (Double Ratchet §5.2): HKDF-SHA256(salt = rk, ikm = dh_out, info = KDF_RK_INFO), 64 bytes
 * → [new root key, new chain key].
 */
export function kdfRk(rootKey: Uint8Array, dhOutput: Uint8Array): [rootKey: Uint8Array, chainKey: Uint8Array] {
  const out = hkdfSha256(dhOutput, rootKey, KDF_RK_INFO, 64);
  const result: [Uint8Array, Uint8Array] = [out.slice(0, 32), out.slice(32, 64)];
  wipe(out);
  return result;
}

/** KDF_CK (Double Ratchet §5.2): [HMAC-SHA256(ck, 0x02) as next chain key, HMAC-SHA256(ck, 0x01) as message key]. */
export function kdfCk(chainKey: Uint8Array): [chainKey: Uint8Array, messageKey: Uint8Array] {
  return [hmacSha256(chainKey, CHAIN_KEY_CONSTANT), hmacSha256(chainKey, MESSAGE_KEY_CONSTANT)];
}

interface RatchetState {
  role: RatchetRole;
  localDeviceId: string;
  peerDeviceId: string;
  /** The conversation of the session context (x3dh.ts `SessionContext`); every header names it. */
  conversationId: string;
  localIdentityKey: Uint8Array;
  peerIdentityKey: Uint8Array;
  /** X3DH AD = Encode(IK_A) || Encode(IK_B) || encoded session context. */
  ad: Uint8Array;
  /** DHs: our current ratchet key pair. */
  dhs: KeyPair;
  /** DHr: the peer's current ratchet public key (null until the responder's first message). */
  dhr: Uint8Array | null;
  /** RK: root key. */
  rk: Uint8Array;
  /** CKs / CKr: sending and receiving chain keys. */
  cks: Uint8Array | null;
  ckr: Uint8Array | null;
  /** Ns, Nr: message numbers for sending and receiving; PN: messages in the previous sending chain. */
  ns: number;
  nr: number;
  pn: number;
  /** MKSKIPPED: `${ratchet_pub hex}:${n}` → message key, in insertion order (oldest first). */
  skipped: Map<string, Uint8Array>;
  /** Receiving ratchet keys already stepped past (newest last), to name stale frames replays. */
  retiredRatchetKeys: string[];
  /** Initiator: the X3DH fields put on every header until the first reply decrypts. */
  pendingX3dh: X3dhHeader | null;
  /** EK_A of the X3DH run this session comes from (hex); identifies the session. */
  x3dhEphemeralKey: string;
  /** True when the session was agreed with PQXDH (an ML-KEM-768 secret in SK), false for X3DH. */
  postQuantum: boolean;
  maxSkip: number;
  maxSkippedKeys: number;
}

const Hex32 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Counter = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });

/**
 * `v` of a serialized session state: 2 since sessions are bound to a conversation (state v1 has no
 * `conversation_id` and an AD without the session context; it is refused, see {@link isUnboundRatchetState}).
 */
export const RATCHET_STATE_VERSION = 2;

/** JSON shape of a serialized session state (every key and secret as lowercase hex). */
export const RatchetStateSchema = Type.Object(
  {
    v: Type.Literal(RATCHET_STATE_VERSION),
    protocol: Type.Literal('x3dh-dr'),
    role: Type.Union([Type.Literal('initiator'), Type.Literal('responder')]),
    local_device_id: Type.String({ minLength: 1, maxLength: 128 }),
    peer_device_id: Type.String({ minLength: 1, maxLength: 128 }),
    conversation_id: Type.String({ minLength: 1, maxLength: MAX_CONVERSATION_ID_CHARS }),
    local_identity_key: Hex32,
    peer_identity_key: Hex32,
    /** AD: 66 bytes of identity keys plus the encoded session context (at most ~700 bytes). */
    ad: Type.String({ pattern: '^[0-9a-f]{134,}$', maxLength: 4096 }),
    dhs: Type.Object({ secret_key: Hex32, public_key: Hex32 }, { additionalProperties: false }),
    dhr: Type.Union([Hex32, Type.Null()]),
    rk: Hex32,
    cks: Type.Union([Hex32, Type.Null()]),
    ckr: Type.Union([Hex32, Type.Null()]),
    ns: Counter,
    nr: Counter,
    pn: Counter,
    skipped: Type.Array(
      Type.Object({ ratchet_pub: Hex32, msg_num: Counter, mk: Hex32 }, { additionalProperties: false }),
    ),
    retired_ratchet_keys: Type.Array(Hex32, { maxItems: RETIRED_RATCHET_KEYS }),
    pending_x3dh: Type.Union([X3dhHeaderSchema, Type.Null()]),
    x3dh_ephemeral_key: Hex32,
    max_skip: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    max_skipped_keys: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    /** `pqxdh` when SK came from PQXDH; absent for X3DH (so classical states serialize as before). */
    key_agreement: Type.Optional(Type.Literal('pqxdh')),
  },
  { additionalProperties: false },
);
/** A serialized session state. Holds secrets (root, chain and skipped message keys): protect it at rest. */
export type RatchetStateJSON = Static<typeof RatchetStateSchema>;

/**
 * True for a session state saved by an SDK before conversation binding (`x3dh-dr` state v1): it
 * cannot be restored (`invalid_state`) — its peer no longer reads its frames either — so a caller
 * drops it and starts a new session. Never throws.
 */
export function isUnboundRatchetState(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { v?: unknown }).v === 1 && (json as { protocol?: unknown }).protocol === 'x3dh-dr';
}

function limits(options: DoubleRatchetOptions | undefined, fallback?: { maxSkip: number; maxSkippedKeys: number }) {
  const maxSkip = options?.maxSkip ?? fallback?.maxSkip ?? DEFAULT_MAX_SKIP;
  const maxSkippedKeys = options?.maxSkippedKeys ?? fallback?.maxSkippedKeys ?? DEFAULT_MAX_SKIPPED_KEYS;
  for (const [name, v] of [['maxSkip', maxSkip], ['maxSkippedKeys', maxSkippedKeys]] as const) {
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_COUNTER) throw new CryptoError('invalid_input', `${name} must be an integer in [0, 2^32)`);
  }
  return { maxSkip, maxSkippedKeys };
}

function skippedKey(ratchetPubHex: string, n: number): string {
  return `${ratchetPubHex}:${n}`;
}

function cloneState(s: RatchetState): RatchetState {
  // Byte arrays are never mutated in place while an operation runs (every KDF output is a new
  // array), so sharing them is safe; the containers are copied.
  return { ...s, dhs: { ...s.dhs }, skipped: new Map(s.skipped), retiredRatchetKeys: [...s.retiredRatchetKeys] };
}

/** After a commit, erase the secrets the old state held that the new state no longer uses. */
function retire(old: RatchetState, next: RatchetState): void {
  if (old.rk !== next.rk) wipe(old.rk);
  if (old.cks !== next.cks) wipe(old.cks);
  if (old.ckr !== next.ckr) wipe(old.ckr);
  if (old.dhs.secretKey !== next.dhs.secretKey) wipe(old.dhs.secretKey);
  if (old.skipped !== next.skipped) {
    for (const [k, mk] of old.skipped) if (next.skipped.get(k) !== mk) wipe(mk);
  }
}

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
    const s = this.state;
    const hexOrNull = (b: Uint8Array | null) => (b === null ? null : bytesToHex(b));
    return {
      v: RATCHET_STATE_VERSION,
      protocol: 'x3dh-dr',
      role: s.role,
      local_device_id: s.localDeviceId,
      peer_device_id: s.peerDeviceId,
      conversation_id: s.conversationId,
      local_identity_key: bytesToHex(s.localIdentityKey),
      peer_identity_key: bytesToHex(s.peerIdentityKey),
      ad: bytesToHex(s.ad),
      dhs: { secret_key: bytesToHex(s.dhs.secretKey), public_key: bytesToHex(s.dhs.publicKey) },
      dhr: hexOrNull(s.dhr),
      rk: bytesToHex(s.rk),
      cks: hexOrNull(s.cks),
      ckr: hexOrNull(s.ckr),
      ns: s.ns,
      nr: s.nr,
      pn: s.pn,
      skipped: [...s.skipped].map(([k, mk]) => {
        const [ratchetPub, n] = k.split(':') as [string, string];
        return { ratchet_pub: ratchetPub, msg_num: Number(n), mk: bytesToHex(mk) };
      }),
      retired_ratchet_keys: [...s.retiredRatchetKeys],
      pending_x3dh: s.pendingX3dh ? { ...s.pendingX3dh } : null,
      x3dh_ephemeral_key: s.x3dhEphemeralKey,
      max_skip: s.maxSkip,
      max_skipped_keys: s.maxSkippedKeys,
      ...(s.postQuantum ? { key_agreement: 'pqxdh' as const } : {}),
    };
  }

  /**
   * Restore a session from {@link serialize} output (string or parsed value). `local` must be the
   * identity the session was created with; `options` override the stored limits.
   * @throws CryptoError `invalid_state` when the JSON is malformed, inconsistent, belongs to
   * another identity, or was saved before conversation binding ({@link isUnboundRatchetState}).
   */
  static deserialize(json: string | RatchetStateJSON, local: DeviceIdentity, options?: DoubleRatchetOptions): DoubleRatchet {
    let o: unknown;
    try {
      o = typeof json === 'string' ? JSON.parse(json) : json;
    } catch (cause) {
      throw new CryptoError('invalid_state', 'session state is not JSON', { cause });
    }
    if (isUnboundRatchetState(o)) {
      throw new CryptoError('invalid_state', 'the session state predates conversation binding (x3dh-dr state v1): start a new session');
    }
    if (!Value.Check(RatchetStateSchema, o)) throw new CryptoError('invalid_state', 'session state has the wrong shape');
    const h = (s: string) => hexToBytes(s, KEY_BYTES);
    const dhs = { secretKey: h(o.dhs.secret_key), publicKey: h(o.dhs.public_key) };
    if (!equalBytes(x25519PublicKey(dhs.secretKey), dhs.publicKey)) {
      throw new CryptoError('invalid_state', 'session state ratchet key pair does not match');
    }
    const skipped = new Map<string, Uint8Array>();
    for (const e of o.skipped) skipped.set(skippedKey(e.ratchet_pub, e.msg_num), h(e.mk));
    const { maxSkip, maxSkippedKeys } = limits(options, { maxSkip: o.max_skip, maxSkippedKeys: o.max_skipped_keys });
    return new DoubleRatchet(local, {
      role: o.role,
      localDeviceId: o.local_device_id,
      peerDeviceId: o.peer_device_id,
      conversationId: o.conversation_id,
      localIdentityKey: h(o.local_identity_key),
      peerIdentityKey: h(o.peer_identity_key),
      ad: hexToBytes(o.ad),
      dhs,
      dhr: o.dhr === null ? null : h(o.dhr),
      rk: h(o.rk),
      cks: o.cks === null ? null : h(o.cks),
      ckr: o.ckr === null ? null : h(o.ckr),
      ns: o.ns,
      nr: o.nr,
      pn: o.pn,
      skipped,
      retiredRatchetKeys: [...o.retired_ratchet_keys],
      pendingX3dh: o.pending_x3dh ? { ...o.pending_x3dh } : null,
      x3dhEphemeralKey: o.x3dh_ephemeral_key,
      postQuantum: o.key_agreement === 'pqxdh',
      maxSkip,
      maxSkippedKeys,
    });
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

/** The body of RatchetDecrypt, on a state copy `s` that the caller commits only on success. */
function ratchetDecrypt(s: RatchetState, frame: Frame): Uint8Array {
  const { header } = frame;
  const aad = concatBytes(s.ad, headerSigningBytes(header));
  const nonce = hexToBytes(header.nonce, XCHACHA_NONCE_BYTES);

  // TrySkippedMessageKeys
  const key = skippedKey(header.ratchet_pub, header.msg_num);
  const stored = s.skipped.get(key);
  if (stored) {
    const plaintext = xchacha20poly1305Decrypt(stored, nonce, frame.ciphertext, aad);
    s.skipped.delete(key); // wiped by retire() once the caller commits
    return plaintext;
  }

  const currentDhr = s.dhr === null ? null : bytesToHex(s.dhr);
  if (header.ratchet_pub === currentDhr) {
    if (header.msg_num < s.nr) {
      throw new CryptoError('replay', 'message key already used or evicted (replayed or duplicate frame)');
    }
  } else {
    if (s.retiredRatchetKeys.includes(header.ratchet_pub)) {
      throw new CryptoError('replay', 'frame from a past receiving chain whose key is gone (replayed or evicted)');
    }
    skipMessageKeys(s, header.pn);
    dhRatchet(s, hexToBytes(header.ratchet_pub, KEY_BYTES));
  }
  skipMessageKeys(s, header.msg_num);
  if (s.ckr === null) {
    // only reachable with the initiator's initial DHr (SPK_B), which the peer never sends from
    throw new CryptoError('decrypt_failed', 'no receiving chain for this ratchet key');
  }
  const [ckr, mk] = kdfCk(s.ckr);
  try {
    const plaintext = xchacha20poly1305Decrypt(mk, nonce, frame.ciphertext, aad);
    s.ckr = ckr;
    s.nr += 1;
    return plaintext;
  } finally {
    wipe(mk);
  }
}

/** SkipMessageKeys (Double Ratchet §3.5), bounded by MAX_SKIP and the total cap. */
function skipMessageKeys(s: RatchetState, until: number): void {
  if (s.nr + s.maxSkip < until) {
    throw new CryptoError('too_many_skipped', `message ${until} would skip ${until - s.nr} keys (MAX_SKIP is ${s.maxSkip})`);
  }
  if (s.ckr === null || s.dhr === null) return;
  const dhrHex = bytesToHex(s.dhr);
  let ckr = s.ckr;
  while (s.nr < until) {
    const [nextCk, mk] = kdfCk(ckr);
    s.skipped.set(skippedKey(dhrHex, s.nr), mk);
    ckr = nextCk;
    s.nr += 1;
  }
  s.ckr = ckr;
  while (s.skipped.size > s.maxSkippedKeys) {
    const oldest = s.skipped.keys().next().value as string;
    s.skipped.delete(oldest);
  }
}

/** DHRatchet (Double Ratchet §3.5): step both chains with the peer's new ratchet public key. */
function dhRatchet(s: RatchetState, peerRatchetPub: Uint8Array): void {
  if (s.dhr !== null) {
    s.retiredRatchetKeys.push(bytesToHex(s.dhr));
    if (s.retiredRatchetKeys.length > RETIRED_RATCHET_KEYS) s.retiredRatchetKeys.shift();
  }
  s.pn = s.ns;
  s.ns = 0;
  s.nr = 0;
  s.dhr = peerRatchetPub;
  const dh1 = x25519DH(s.dhs.secretKey, s.dhr);
  [s.rk, s.ckr] = kdfRk(s.rk, dh1);
  s.dhs = x25519Keygen();
  const dh2 = x25519DH(s.dhs.secretKey, s.dhr);
  [s.rk, s.cks] = kdfRk(s.rk, dh2);
  wipe(dh1, dh2);
}
