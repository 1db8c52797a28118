/**
 * X25519 signed and one-time prekeys of X3DH ("The X3DH Key Agreement Protocol", Signal,
 * revision 1): their encoding, signature and identifiers, and the device-side store that rotates
 * them and deletes their private keys.
 *
 * - Signed prekey SPK_B (X3DH §2.1, §3.2): an X25519 key published with
 *   Sig(IK_B, domainSeparated(SIGNING_DOMAINS.signedPrekey, Encode(SPK_B))): an Ed25519 signature
 *   (64 bytes) by the device identity key over "parley/v2/signed-prekey" || 0x00 || Encode(SPK_B)
 *   (`@parley/protocol` signing-domains.ts), in place of XEdDSA. Encode is X3DH §2.5's
 *   0x05 || u (x3dh.ts). The initiator verifies it before use and aborts on failure (X3DH §3.3).
 * - One-time prekeys OPK_B (X3DH §3.2): unsigned X25519 keys, each handed out once by the server.
 * - Identifiers (X3DH §3.3: the initial message names "which of Bob's prekeys Alice used"): the
 *   first 16 bytes of SHA-256(Encode(PK)), 32 lowercase hex characters, so an identifier names one
 *   key and the server cannot pair a key with another one's identifier.
 * - Rotation (X3DH §3.2: a new signed prekey "at some interval (e.g. once a week …)"; the previous
 *   private key kept "for some period of time, to handle messages using it that have been delayed
 *   in transit", then deleted "for forward secrecy"): a new signed prekey every
 *   {@link PrekeySchedule.rotateAfterMs} (7 days by default); the previous private key is kept
 *   {@link PrekeySchedule.graceMs} more (7 days), then wiped, so a later compromise of the device
 *   cannot decrypt recorded initial messages made to it (X3DH §4.6).
 * - One-time prekey private keys are deleted when an initial message uses them (X3DH §3.4), so a
 *   replayed initial message, or a second one the server built on the same OPK, is refused.
 *
 * The store ({@link PrekeyStore}) is mutable and serialisable ({@link PrekeyStateJSON}); its JSON
 * holds private keys and must be kept with the device's other secrets.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { SIGNING_DOMAINS, domainSeparated, type OneTimePrekey as OneTimePrekeyWire, type SignedPrekey as SignedPrekeyWire } from '@parley/protocol';
import type { DeviceIdentity } from './keys.js';
import {
  CryptoError,
  KEY_BYTES,
  SIGNATURE_BYTES,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  ed25519Verify,
  hexToBytes,
  wipe,
  x25519DH,
  x25519Keygen,
  x25519PublicKey,
  type KeyPair,
} from './primitives.js';
import { encodePublicKey } from './x3dh.js';

/** Length of a prekey identifier, hex characters (16 bytes). */
export const PREKEY_ID_CHARS = 32;

/** A signed prekey as published and verified (bytes). */
export interface X25519SignedPrekey {
  /** {@link prekeyId} of `publicKey`. */
  keyId: string;
  /** SPK_B: 32-byte X25519 public key. */
  publicKey: Uint8Array;
  /** 64-byte Ed25519 signature by IK_B over {@link signedPrekeySigningInput}(publicKey). */
  signature: Uint8Array;
}

/** A one-time prekey as published (bytes). */
export interface X25519OneTimePrekey {
  /** {@link prekeyId} of `publicKey`. */
  keyId: string;
  /** OPK_B: 32-byte X25519 public key. */
  publicKey: Uint8Array;
}

/** A peer's prekey bundle as claimed (X3DH §3.3); `signedPrekey` must be verified before use. */
export interface PeerPrekeyBundle {
  /** SPK_B with its signature by IK_B. */
  signedPrekey: X25519SignedPrekey;
  /** OPK_B, when the service had one left for this claim. */
  oneTimePrekey?: X25519OneTimePrekey;
}

/**
 * What the X3DH responder needs of its prekeys (X3DH §3.4; {@link PrekeyStore} is one): the signed
 * prekey pair an initial message names, and DH with the one-time prekey it names.
 */
export type PrekeyHolder = Pick<PrekeyStore, 'signedPrekeyPair' | 'oneTimeDh'>;

/** Identifier of an X25519 prekey: hex of the first 16 bytes of SHA-256(Encode(PK)). */
export function prekeyId(publicKey: Uint8Array): string {
  return bytesToHex(sha256(encodePublicKey(publicKey)).subarray(0, PREKEY_ID_CHARS / 2));
}

/** The bytes IK_B signs for SPK_B: "parley/v2/signed-prekey" || 0x00 || Encode(SPK_B). */
export function signedPrekeySigningInput(publicKey: Uint8Array): Uint8Array {
  return domainSeparated(SIGNING_DOMAINS.signedPrekey, encodePublicKey(publicKey));
}

/** Sign the X25519 public key `publicKey` as `identity`'s signed prekey (X3DH §3.2). */
export function signPrekey(identity: DeviceIdentity, publicKey: Uint8Array): X25519SignedPrekey {
  return { keyId: prekeyId(publicKey), publicKey: publicKey.slice(), signature: identity.sign(signedPrekeySigningInput(publicKey)) };
}

/**
 * True when `prekey.signature` is the owner's signature over {@link signedPrekeySigningInput} and
 * `prekey.keyId` is the key's identifier (X3DH §3.3: Alice verifies before using it). Never throws.
 * @param ownerIdentityKey IK_B, the 32-byte Ed25519 identity public key of the prekey's device.
 */
export function verifySignedPrekey(ownerIdentityKey: Uint8Array, prekey: X25519SignedPrekey): boolean {
  try {
    if (prekey.signature.length !== SIGNATURE_BYTES || prekey.keyId !== prekeyId(prekey.publicKey)) return false;
    return ed25519Verify(prekey.signature, signedPrekeySigningInput(prekey.publicKey), ownerIdentityKey);
  } catch {
    return false;
  }
}

/** Wire form of a signed prekey (`POST /api/v1/prekeys`): base64 key and signature. */
export function signedPrekeyToWire(p: X25519SignedPrekey): SignedPrekeyWire {
  return { key_id: p.keyId, public_key: bytesToBase64(p.publicKey), signature: bytesToBase64(p.signature) };
}

/** Wire form of a one-time prekey. */
export function oneTimePrekeyToWire(p: X25519OneTimePrekey): OneTimePrekeyWire {
  return { key_id: p.keyId, public_key: bytesToBase64(p.publicKey) };
}

/**
 * Parse a one-time prekey from the wire: 32-byte key, and `key_id` its {@link prekeyId}.
 * @throws CryptoError `invalid_input` otherwise.
 */
export function oneTimePrekeyFromWire(wire: OneTimePrekeyWire): X25519OneTimePrekey {
  const publicKey = base64ToBytes(String(wire.public_key), 'prekey public_key');
  if (publicKey.length !== KEY_BYTES) throw new CryptoError('invalid_input', `prekey public_key must be ${KEY_BYTES} bytes`);
  if (wire.key_id !== prekeyId(publicKey)) throw new CryptoError('invalid_input', 'prekey key_id does not name its public key');
  return { keyId: wire.key_id, publicKey };
}

/**
 * Parse a signed prekey from the wire (key, id and signature length checked; the signature is NOT
 * verified: use {@link verifySignedPrekey}).
 * @throws CryptoError `invalid_input` for bad base64, lengths or identifier.
 */
export function signedPrekeyFromWire(wire: SignedPrekeyWire): X25519SignedPrekey {
  const { keyId, publicKey } = oneTimePrekeyFromWire(wire);
  const signature = base64ToBytes(String(wire.signature), 'prekey signature');
  if (signature.length !== SIGNATURE_BYTES) throw new CryptoError('invalid_input', `prekey signature must be ${SIGNATURE_BYTES} bytes`);
  return { keyId, publicKey, signature };
}

/** When signed prekeys rotate and how many one-time prekeys a device keeps published. */
export interface PrekeySchedule {
  /** Age (ms) at which the signed prekey is replaced. Default 7 days. */
  rotateAfterMs: number;
  /** How long (ms) a replaced signed prekey's private key is kept for initial messages in flight. Default 7 days. */
  graceMs: number;
  /** One-time prekeys generated per top-up. Default 50. */
  oneTimeBatch: number;
  /** Top up when the service holds fewer unclaimed one-time prekeys than this. Default 20. */
  oneTimeLowWater: number;
  /**
   * Most one-time private keys kept; beyond it the oldest (claimed by peers that never wrote, or
   * withdrawn) are wiped. Default 600 (the service holds at most 500 unclaimed).
   */
  maxOneTimeHeld: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The default {@link PrekeySchedule}: rotate weekly, one week of grace, batches of 50 below 20. */
export const DEFAULT_PREKEY_SCHEDULE: Readonly<PrekeySchedule> = Object.freeze({
  rotateAfterMs: 7 * DAY_MS,
  graceMs: 7 * DAY_MS,
  oneTimeBatch: 50,
  oneTimeLowWater: 20,
  maxOneTimeHeld: 600,
});

/**
 * Saved form of a {@link PrekeyStore}: secret keys and signatures as lowercase hex, times as epoch
 * milliseconds. `signed[0]` is the current signed prekey; the others are retired, in their grace
 * period. Holds private keys: keep it confidential.
 */
export interface PrekeyStateJSON {
  v: 1;
  signed: { key_id: string; secret_key: string; signature: string; created_at: number; retired_at?: number }[];
  one_time: { key_id: string; secret_key: string; created_at: number }[];
}

interface HeldSigned {
  keyPair: KeyPair;
  prekey: X25519SignedPrekey;
  createdAt: number;
  retiredAt?: number;
}

interface HeldOneTime {
  secretKey: Uint8Array;
  createdAt: number;
}

/** A saved time: a finite number of epoch milliseconds. @throws CryptoError `invalid_state` otherwise. */
function epochMs(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new CryptoError('invalid_state', 'prekey times must be epoch milliseconds');
  return v;
}

function newSignedPrekey(identity: DeviceIdentity, now: number): HeldSigned {
  const keyPair = x25519Keygen();
  return { keyPair, prekey: signPrekey(identity, keyPair.publicKey), createdAt: now };
}

/**
 * A device's X25519 prekeys with their private keys: the current signed prekey, retired ones in
 * their grace period, and the unused one-time prekeys. Mutable: every method that changes it says
 * so; persist {@link toJSON} after a change, and before publishing anything it generated.
 */
export class PrekeyStore {
  private signed: HeldSigned[];
  private readonly oneTime = new Map<string, HeldOneTime>();

  private constructor(
    signed: HeldSigned[],
    readonly schedule: Readonly<PrekeySchedule>,
  ) {
    this.signed = signed;
  }

  /** A new store holding a fresh signed prekey of `identity` made at `now` (epoch ms). */
  static create(identity: DeviceIdentity, now = Date.now(), schedule: Partial<PrekeySchedule> = {}): PrekeyStore {
    return new PrekeyStore([newSignedPrekey(identity, now)], { ...DEFAULT_PREKEY_SCHEDULE, ...schedule });
  }

  /**
   * Restore a saved store. Public keys are recomputed from the private keys and every signed
   * prekey's signature is checked against `identity`.
   * @throws CryptoError `invalid_state` when the JSON is malformed or belongs to another identity.
   */
  static fromJSON(json: PrekeyStateJSON | string, identity: DeviceIdentity, schedule: Partial<PrekeySchedule> = {}): PrekeyStore {
    try {
      const o = (typeof json === 'string' ? JSON.parse(json) : json) as Partial<PrekeyStateJSON> | null;
      if (!o || o.v !== 1 || !Array.isArray(o.signed) || o.signed.length === 0 || !Array.isArray(o.one_time)) {
        throw new CryptoError('invalid_state', 'unsupported prekey state format');
      }
      const signed = o.signed.map((s): HeldSigned => {
        const secretKey = hexToBytes(String(s.secret_key), KEY_BYTES, 'signed prekey secret_key');
        const keyPair = { secretKey, publicKey: x25519PublicKey(secretKey) };
        const prekey = { keyId: prekeyId(keyPair.publicKey), publicKey: keyPair.publicKey.slice(), signature: hexToBytes(String(s.signature), SIGNATURE_BYTES, 'signature') };
        if (prekey.keyId !== s.key_id || !verifySignedPrekey(identity.identityPublicKey, prekey)) {
          throw new CryptoError('invalid_state', 'a signed prekey does not belong to this identity');
        }
        return { keyPair, prekey, createdAt: epochMs(s.created_at), ...(s.retired_at === undefined ? {} : { retiredAt: epochMs(s.retired_at) }) };
      });
      const store = new PrekeyStore(signed, { ...DEFAULT_PREKEY_SCHEDULE, ...schedule });
      for (const k of o.one_time) {
        store.oneTime.set(String(k.key_id), { secretKey: hexToBytes(String(k.secret_key), KEY_BYTES, 'one-time secret_key'), createdAt: epochMs(k.created_at) });
      }
      return store;
    } catch (cause) {
      if (cause instanceof CryptoError && cause.code === 'invalid_state') throw cause;
      throw new CryptoError('invalid_state', `invalid prekey state: ${(cause as Error).message}`, { cause });
    }
  }

  /** Export with private keys (see {@link PrekeyStateJSON}); `JSON.stringify` uses this. */
  toJSON(): PrekeyStateJSON {
    return {
      v: 1,
      signed: this.signed.map((s) => ({
        key_id: s.prekey.keyId,
        secret_key: bytesToHex(s.keyPair.secretKey),
        signature: bytesToHex(s.prekey.signature),
        created_at: s.createdAt,
        ...(s.retiredAt === undefined ? {} : { retired_at: s.retiredAt }),
      })),
      one_time: [...this.oneTime].map(([keyId, k]) => ({ key_id: keyId, secret_key: bytesToHex(k.secretKey), created_at: k.createdAt })),
    };
  }

  /** The current signed prekey, to publish (a copy). */
  get signedPrekey(): X25519SignedPrekey {
    const p = this.signed[0]!.prekey;
    return { keyId: p.keyId, publicKey: p.publicKey.slice(), signature: p.signature.slice() };
  }

  /** Ids of the signed prekeys whose private keys are held: the current one first, then those in grace. */
  get signedPrekeyIds(): string[] {
    return this.signed.map((s) => s.prekey.keyId);
  }

  /** How many one-time private keys are held (published, not yet used). */
  get oneTimeHeld(): number {
    return this.oneTime.size;
  }

  /**
   * Apply the schedule at `now` (epoch ms): a signed prekey older than `rotateAfterMs` is replaced
   * by a new one (signed by `identity`) and retired; retired ones whose grace has run out are
   * wiped and dropped. Returns whether anything changed.
   */
  rotate(identity: DeviceIdentity, now = Date.now()): boolean {
    let changed = false;
    const current = this.signed[0]!;
    if (now - current.createdAt >= this.schedule.rotateAfterMs) {
      current.retiredAt = now;
      this.signed.unshift(newSignedPrekey(identity, now));
      changed = true;
    }
    const kept = this.signed.filter((s, i) => i === 0 || s.retiredAt === undefined || now - s.retiredAt < this.schedule.graceMs);
    for (const s of this.signed) if (!kept.includes(s)) wipe(s.keyPair.secretKey);
    changed ||= kept.length !== this.signed.length;
    this.signed = kept;
    return changed;
  }

  /**
   * Generate `count` one-time prekeys made at `now` and keep their private keys; returns the
   * public halves to publish. Beyond `maxOneTimeHeld` the oldest held ones are wiped.
   */
  generateOneTime(count: number, now = Date.now()): X25519OneTimePrekey[] {
    const out: X25519OneTimePrekey[] = [];
    for (let i = 0; i < count; i++) {
      const kp = x25519Keygen();
      const keyId = prekeyId(kp.publicKey);
      this.oneTime.set(keyId, { secretKey: kp.secretKey, createdAt: now });
      out.push({ keyId, publicKey: kp.publicKey });
    }
    for (const [keyId, k] of this.oneTime) {
      if (this.oneTime.size <= this.schedule.maxOneTimeHeld) break;
      wipe(k.secretKey);
      this.oneTime.delete(keyId);
    }
    return out;
  }

  /**
   * The key pair of the signed prekey `keyId` (a copy), current or in grace, at `now`: the X3DH
   * responder's SPK_B (X3DH §3.4), also Bob's first ratchet key pair. A retired one past its grace
   * is wiped first and refused.
   * @throws CryptoError `unknown_prekey` when it is not held (never published by this device,
   *   or already deleted after rotation).
   */
  signedPrekeyPair(keyId: string, now = Date.now()): KeyPair {
    const s = this.signed.find((x, i) => x.prekey.keyId === keyId && (i === 0 || x.retiredAt === undefined || now - x.retiredAt < this.schedule.graceMs));
    if (!s) throw new CryptoError('unknown_prekey', 'the initial message names a signed prekey this device does not hold (unknown, or deleted after rotation)');
    return { secretKey: s.keyPair.secretKey.slice(), publicKey: s.keyPair.publicKey.slice() };
  }

  /** Whether the one-time prekey `keyId` is held (published and not used yet). */
  hasOneTime(keyId: string): boolean {
    return this.oneTime.has(keyId);
  }

  /**
   * DH(OPK_B, peer) with the one-time prekey `keyId` (the responder's DH4 of X3DH §3.4), without
   * deleting it: call {@link consumeOneTime} once the initial message is accepted.
   * @throws CryptoError `unknown_prekey` when it is not held (unknown, or already used);
   *   `invalid_key` for a low-order peer key.
   */
  oneTimeDh(keyId: string, peerPublicKey: Uint8Array): Uint8Array {
    const k = this.oneTime.get(keyId);
    if (!k) throw new CryptoError('unknown_prekey', 'the initial message names a one-time prekey this device does not hold (unknown, or already used)');
    return x25519DH(k.secretKey, peerPublicKey);
  }

  /** Wipe and delete the one-time prekey `keyId` (X3DH §3.4: after use). Returns whether it was held. */
  consumeOneTime(keyId: string): boolean {
    const k = this.oneTime.get(keyId);
    if (!k) return false;
    wipe(k.secretKey);
    return this.oneTime.delete(keyId);
  }
}
