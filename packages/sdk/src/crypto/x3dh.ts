/**
 * X3DH key agreement ("The X3DH Key Agreement Protocol", Signal, rev. 1, 2016-11-04) for
 * curve X25519, hash SHA-256, with an optional one-time prekey (DH4, X3DH §3.3).
 *
 * Parameters (X3DH §2.1):
 * - curve: X25519; identity keys are Ed25519 and take part in DH through the birational map to
 *   X25519 (the Ed25519 signature on the message header replaces XEdDSA).
 * - hash: SHA-256; KDF (X3DH §2.2): HKDF with F = 32 0xFF bytes prepended to the input key
 *   material, a 32-byte zero salt, info = {@link X3DH_INFO}, 32 bytes out.
 * - Encode(PK) (X3DH §2.5): the single byte 0x05 (curve type X25519) followed by the 32-byte
 *   little-endian u-coordinate; identity keys are encoded in their X25519 form.
 *
 * - AD (X3DH §3.3: "Alice may append additional information to AD, such as usernames"):
 *   Encode(IK_A) || Encode(IK_B) || the encoded session context ({@link encodeSessionContext}:
 *   conversation id, initiator and responder device ids). Every AEAD of the session covers it,
 *   so a session — and each of its messages — exists for one conversation between two devices.
 *
 * The responder's signed prekey SPK_B is the one it published with Sig(IK_B, Encode(SPK_B))
 * (prekeys.ts; the caller verifies it before use), or, for a legacy peer that published none, its
 * device `ephemeral_public_key` as the server's directory serves it (authenticated by the server
 * only). One-time prekeys OPK_B come from the same claim (prekeys.ts).
 */
import { canonicalJson, MAX_CONVERSATION_ID_CHARS } from './frame.js';
import type { DeviceIdentity } from './keys.js';
import {
  CryptoError,
  KEY_BYTES,
  concatBytes,
  ed25519PublicToX25519,
  hkdfSha256,
  utf8Encode,
  wipe,
  x25519DH,
  x25519Keygen,
} from './primitives.js';

/** HKDF info for the X3DH KDF: the ASCII string identifying this application and protocol. */
export const X3DH_INFO = utf8Encode('Parley_X3DH_X25519_SHA256_v1');
/** Curve-type byte of {@link encodePublicKey} (X25519). */
export const X25519_KEY_TYPE = 0x05;

/**
 * What a session is for, the same on both devices: bound into the X3DH / PQXDH associated data
 * and named by every message header (frame.ts), so the server cannot move a session or a message
 * to another conversation or device.
 */
export interface SessionContext {
  /** The conversation as both devices name it (1 to 256 characters). */
  conversationId: string;
  /** Device id of the X3DH initiator (Alice). */
  initiatorDeviceId: string;
  /** Device id of the X3DH responder (Bob). */
  responderDeviceId: string;
}

/**
 * The session context's bytes appended to AD: UTF-8 of the RFC 8785 canonical JSON
 * `{"conversation_id":…,"initiator_device_id":…,"responder_device_id":…}`.
 * @throws CryptoError `invalid_input` when a field is empty or too long.
 */
export function encodeSessionContext(context: SessionContext): Uint8Array {
  const { conversationId, initiatorDeviceId, responderDeviceId } = context;
  for (const [name, v, max] of [
    ['conversationId', conversationId, MAX_CONVERSATION_ID_CHARS],
    ['initiatorDeviceId', initiatorDeviceId, 128],
    ['responderDeviceId', responderDeviceId, 128],
  ] as const) {
    if (typeof v !== 'string' || v.length === 0 || v.length > max) {
      throw new CryptoError('invalid_input', `session context ${name} must be a string of 1 to ${max} characters`);
    }
  }
  return utf8Encode(canonicalJson({ conversation_id: conversationId, initiator_device_id: initiatorDeviceId, responder_device_id: responderDeviceId }));
}

/** Result of the key agreement on either side. */
export interface X3dhSharedSecret {
  /** SK: 32-byte shared secret, the Double Ratchet's initial root key. */
  sharedKey: Uint8Array;
  /**
   * AD = Encode(IK_A) || Encode(IK_B) || {@link encodeSessionContext}(context): 66 bytes plus the
   * context, bound into every AEAD of the session.
   */
  associatedData: Uint8Array;
}

/** Initiator's result: the shared secret plus the ephemeral public key EK_A to send. */
export interface X3dhInitiation extends X3dhSharedSecret {
  /** EK_A, the initiator's fresh X25519 ephemeral public key (its secret is already erased). */
  ephemeralPublicKey: Uint8Array;
}

/** Encode(PK) of X3DH §2.5: 0x05 || 32-byte X25519 u-coordinate (33 bytes). */
export function encodePublicKey(x25519PublicKey: Uint8Array): Uint8Array {
  if (!(x25519PublicKey instanceof Uint8Array) || x25519PublicKey.length !== KEY_BYTES) {
    throw new CryptoError('invalid_input', 'X25519 public key must be 32 bytes');
  }
  return concatBytes(Uint8Array.of(X25519_KEY_TYPE), x25519PublicKey);
}

/**
 * KDF(KM) of X3DH §2.2 and PQXDH §2.2 for curve X25519 and hash SHA-256: HKDF-SHA256 with input
 * key material F || KM (F = 32 0xFF bytes), a 32-byte zero salt and the protocol's `info`; 32
 * bytes out.
 */
export function agreementKdf(keyMaterial: Uint8Array, info: Uint8Array): Uint8Array {
  const ikm = concatBytes(new Uint8Array(32).fill(0xff), keyMaterial);
  try {
    return hkdfSha256(ikm, new Uint8Array(32), info, 32);
  } finally {
    wipe(ikm);
  }
}

/** KDF(KM) of X3DH §2.2: HKDF-SHA256(F || KM, salt = 0^32, info = X3DH_INFO), 32 bytes. */
export function x3dhKdf(keyMaterial: Uint8Array): Uint8Array {
  return agreementKdf(keyMaterial, X3DH_INFO);
}

/**
 * AD = Encode(IK_A) || Encode(IK_B) || {@link encodeSessionContext}(context), from the two
 * Ed25519 identity public keys (initiator first) and the session context.
 */
export function x3dhAssociatedData(initiatorIdentityKey: Uint8Array, responderIdentityKey: Uint8Array, context: SessionContext): Uint8Array {
  return concatBytes(
    encodePublicKey(ed25519PublicToX25519(initiatorIdentityKey)),
    encodePublicKey(ed25519PublicToX25519(responderIdentityKey)),
    encodeSessionContext(context),
  );
}

/**
 * Initiator side (Alice, X3DH §3.3): DH1 = DH(IK_A, SPK_B), DH2 = DH(EK_A, IK_B),
 * DH3 = DH(EK_A, SPK_B), with a one-time prekey DH4 = DH(EK_A, OPK_B);
 * SK = KDF(DH1 || DH2 || DH3 [|| DH4]).
 *
 * X3DH §3.3 asks Alice to verify the prekey signature first: the caller does (prekeys.ts
 * `verifySignedPrekey`; `RatchetSession.initiate` with `prekeys`). A legacy peer's
 * `ephemeral_public_key` carries no signature and is only as authentic as the server's directory
 * (compare fingerprints out of band).
 *
 * @param local Alice's device keys (IK_A).
 * @param peerIdentityKey IK_B, Bob's 32-byte Ed25519 identity public key.
 * @param peerSignedPrekey SPK_B, Bob's 32-byte X25519 signed prekey (or legacy `ephemeral_public_key`).
 * @param context the conversation and the two devices, appended to AD.
 * @param peerOneTimePrekey OPK_B, Bob's 32-byte X25519 one-time prekey, when the claim gave one.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH;
 *   `invalid_input` for a malformed context.
 */
export function x3dhInitiate(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerSignedPrekey: Uint8Array,
  context: SessionContext,
  peerOneTimePrekey?: Uint8Array,
): X3dhInitiation {
  return initiatorAgreement(local, peerIdentityKey, peerSignedPrekey, context, (dhs) => x3dhKdf(dhs), peerOneTimePrekey);
}

/**
 * The initiator's side shared by X3DH §3.3 and PQXDH §3.3: a fresh EK_A, DH1 = DH(IK_A, SPK_B),
 * DH2 = DH(EK_A, IK_B), DH3 = DH(EK_A, SPK_B) and, with `peerOneTimePrekey`, DH4 = DH(EK_A, OPK_B);
 * `derive(DH1 || DH2 || DH3 [|| DH4])` gives SK (it may append more key material, e.g. the KEM
 * secret: PQXDH's DH1 || DH2 || DH3 || DH4 || SS). AD binds `context`. Every intermediate secret is erased.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH;
 *   `invalid_input` for a malformed context.
 */
export function initiatorAgreement(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerSignedPrekey: Uint8Array,
  context: SessionContext,
  derive: (dhOutputs: Uint8Array) => Uint8Array,
  peerOneTimePrekey?: Uint8Array,
): X3dhInitiation {
  const associatedData = x3dhAssociatedData(local.identityPublicKey, peerIdentityKey, context);
  const peerIdentityX = ed25519PublicToX25519(peerIdentityKey);
  const ephemeral = x25519Keygen();
  const dhs: Uint8Array[] = [];
  try {
    dhs.push(local.dhWithIdentityKey(peerSignedPrekey));
    dhs.push(x25519DH(ephemeral.secretKey, peerIdentityX));
    dhs.push(x25519DH(ephemeral.secretKey, peerSignedPrekey));
    if (peerOneTimePrekey !== undefined) dhs.push(x25519DH(ephemeral.secretKey, peerOneTimePrekey));
    return { sharedKey: deriveFrom(dhs, derive), associatedData, ephemeralPublicKey: ephemeral.publicKey };
  } finally {
    wipe(ephemeral.secretKey, ...dhs);
  }
}

/** `derive(DH1 || … || DHn)`, erasing the concatenation. */
function deriveFrom(dhs: Uint8Array[], derive: (dhOutputs: Uint8Array) => Uint8Array): Uint8Array {
  const km = concatBytes(...dhs);
  try {
    return derive(km);
  } finally {
    wipe(km);
  }
}

/**
 * The responder's prekeys an initial message names (X3DH §3.4): DH with the signed prekey SPK_B
 * and, when the message used one, with the one-time prekey OPK_B. Each returns a fresh 32-byte
 * output the agreement erases.
 */
export interface ResponderPrekeys {
  /** DH(SPK_B, peerPublicKey). */
  signedPrekeyDh(peerPublicKey: Uint8Array): Uint8Array;
  /** DH(OPK_B, peerPublicKey): set only when the initial message names a one-time prekey. */
  oneTimeDh?(peerPublicKey: Uint8Array): Uint8Array;
}

/** The legacy responder prekeys: SPK_B is the device's ephemeral key, no one-time prekey. */
export function deviceEphemeralPrekeys(local: DeviceIdentity): ResponderPrekeys {
  return { signedPrekeyDh: (peerPublicKey) => local.dhWithEphemeralKey(peerPublicKey) };
}

/**
 * Responder side (Bob, X3DH §3.4): the same SK from Alice's initial message, with
 * DH1 = DH(SPK_B, IK_A), DH2 = DH(IK_B, EK_A), DH3 = DH(SPK_B, EK_A) and, when the message names a
 * one-time prekey, DH4 = DH(OPK_B, EK_A).
 *
 * @param local Bob's device keys (IK_B).
 * @param peerIdentityKey IK_A, Alice's 32-byte Ed25519 identity public key.
 * @param peerEphemeralKey EK_A, from Alice's initial message.
 * @param context the conversation and the two devices, appended to AD (as the initiator's).
 * @param prekeys the SPK_B (and OPK_B) the message names; default the legacy device ephemeral key.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH;
 *   `invalid_input` for a malformed context; `unknown_prekey` from `prekeys`.
 */
export function x3dhRespond(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerEphemeralKey: Uint8Array,
  context: SessionContext,
  prekeys: ResponderPrekeys = deviceEphemeralPrekeys(local),
): X3dhSharedSecret {
  return responderAgreement(local, peerIdentityKey, peerEphemeralKey, context, (dhs) => x3dhKdf(dhs), prekeys);
}

/**
 * The responder's side shared by X3DH §3.4 and PQXDH §3.4: DH1 = DH(SPK_B, IK_A),
 * DH2 = DH(IK_B, EK_A), DH3 = DH(SPK_B, EK_A) and, with `prekeys.oneTimeDh`, DH4 = DH(OPK_B, EK_A);
 * `derive(DH1 || DH2 || DH3 [|| DH4])` gives SK. AD binds `context`.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH;
 *   `invalid_input` for a malformed context; `unknown_prekey` from `prekeys`.
 */
export function responderAgreement(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerEphemeralKey: Uint8Array,
  context: SessionContext,
  derive: (dhOutputs: Uint8Array) => Uint8Array,
  prekeys: ResponderPrekeys = deviceEphemeralPrekeys(local),
): X3dhSharedSecret {
  const associatedData = x3dhAssociatedData(peerIdentityKey, local.identityPublicKey, context);
  const peerIdentityX = ed25519PublicToX25519(peerIdentityKey);
  const dhs: Uint8Array[] = [];
  try {
    dhs.push(prekeys.signedPrekeyDh(peerIdentityX));
    dhs.push(local.dhWithIdentityKey(peerEphemeralKey));
    dhs.push(prekeys.signedPrekeyDh(peerEphemeralKey));
    if (prekeys.oneTimeDh) dhs.push(prekeys.oneTimeDh(peerEphemeralKey));
    return { sharedKey: deriveFrom(dhs, derive), associatedData };
  } finally {
    wipe(...dhs);
  }
}
