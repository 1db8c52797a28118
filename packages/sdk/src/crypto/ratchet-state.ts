/**
 * Double Ratchet session state ("The Double Ratchet Algorithm", Signal, rev. 1, §3.2 state
 * variables) and its serialized form: the in-memory {@link RatchetState}, the JSON schema of a saved
 * state, the limits (MAX_SKIP and the skipped-key cap, §3.5 / §6.4), copying a state for an
 * operation that commits only on success, and erasing the secrets a committed state dropped.
 * Used by `double-ratchet.ts` (the session) and `ratchet-chains.ts` (the chain steps).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MAX_CONVERSATION_ID_CHARS, MAX_COUNTER, X3dhHeaderSchema, type X3dhHeader } from './frame.js';
import { CryptoError, KEY_BYTES, bytesToHex, equalBytes, hexToBytes, wipe, x25519PublicKey, type KeyPair } from './primitives.js';

/** Default MAX_SKIP: most message keys one chain may skip in one step (Double Ratchet §3.2). */
export const DEFAULT_MAX_SKIP = 1000;
/** Default cap on stored skipped message keys across all chains (oldest evicted first). */
export const DEFAULT_MAX_SKIPPED_KEYS = 2000;
/** Retired receiving ratchet keys remembered to classify stale frames as replays. */
export const RETIRED_RATCHET_KEYS = 64;

/** Limits of a session; both are numbers of message keys. */
export interface DoubleRatchetOptions {
  /** MAX_SKIP: most message keys skipped in one receiving chain by one message (default 1000). */
  maxSkip?: number;
  /** Most skipped message keys stored in total; beyond it the oldest are deleted (default 2000). */
  maxSkippedKeys?: number;
}

/** Which side of X3DH the session started on. */
export type RatchetRole = 'initiator' | 'responder';

/** The variables of one session (Double Ratchet §3.2), with the secrets as bytes. */
export interface RatchetState {
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

/** The limits in force: `options`, else `fallback` (a saved state's), else the defaults. @throws CryptoError `invalid_input`. */
export function limits(options: DoubleRatchetOptions | undefined, fallback?: { maxSkip: number; maxSkippedKeys: number }) {
  const maxSkip = options?.maxSkip ?? fallback?.maxSkip ?? DEFAULT_MAX_SKIP;
  const maxSkippedKeys = options?.maxSkippedKeys ?? fallback?.maxSkippedKeys ?? DEFAULT_MAX_SKIPPED_KEYS;
  for (const [name, v] of [['maxSkip', maxSkip], ['maxSkippedKeys', maxSkippedKeys]] as const) {
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_COUNTER) throw new CryptoError('invalid_input', `${name} must be an integer in [0, 2^32)`);
  }
  return { maxSkip, maxSkippedKeys };
}

/** The MKSKIPPED key of message `n` of the receiving chain of ratchet key `ratchetPubHex`. */
export function skippedKey(ratchetPubHex: string, n: number): string {
  return `${ratchetPubHex}:${n}`;
}

/** A copy of `s` an operation may change and commit only on success (Double Ratchet §3.5). */
export function cloneState(s: RatchetState): RatchetState {
  // Byte arrays are never mutated in place while an operation runs (every KDF output is a new
  // array), so sharing them is safe; the containers are copied.
  return { ...s, dhs: { ...s.dhs }, skipped: new Map(s.skipped), retiredRatchetKeys: [...s.retiredRatchetKeys] };
}

/** After a commit, erase the secrets the old state held that the new state no longer uses. */
export function retire(old: RatchetState, next: RatchetState): void {
  if (old.rk !== next.rk) wipe(old.rk);
  if (old.cks !== next.cks) wipe(old.cks);
  if (old.ckr !== next.ckr) wipe(old.ckr);
  if (old.dhs.secretKey !== next.dhs.secretKey) wipe(old.dhs.secretKey);
  if (old.skipped !== next.skipped) {
    for (const [k, mk] of old.skipped) if (next.skipped.get(k) !== mk) wipe(mk);
  }
}

/** The saved form of a session state (every key and secret as lowercase hex). */
export function ratchetStateToJSON(s: RatchetState): RatchetStateJSON {
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
 * A session state from its saved form (string or parsed value); `options` override the stored limits.
 * @throws CryptoError `invalid_state` when the JSON is malformed or inconsistent, or was saved
 * before conversation binding ({@link isUnboundRatchetState}); `invalid_input` for bad limits.
 */
export function parseRatchetState(json: string | RatchetStateJSON, options?: DoubleRatchetOptions): RatchetState {
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
  return {
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
  };
}
