/**
 * X3DH key agreement ("The X3DH Key Agreement Protocol", Signal, rev. 1, 2016-11-04) for
 * curve X25519, hash SHA-256, without one-time prekeys (none are published yet).
 *
 * Parameters (X3DH §2.1):
 * - curve: X25519; identity keys are Ed25519 and take part in DH through the birational map to
 *   X25519 (the Ed25519 signature on the message header replaces XEdDSA).
 * - hash: SHA-256; KDF (X3DH §2.2): HKDF with F = 32 0xFF bytes prepended to the input key
 *   material, a 32-byte zero salt, info = {@link X3DH_INFO}, 32 bytes out.
 * - Encode(PK) (X3DH §2.5): the single byte 0x05 (curve type X25519) followed by the 32-byte
 *   little-endian u-coordinate; identity keys are encoded in their X25519 form.
 *
 * The responder's "signed prekey" SPK_B is its device `ephemeral_public_key` as published by the
 * server (authenticated by the server, not by a signature from IK_B — see the docstring of
 * {@link x3dhInitiate}).
 */
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

/** Result of the key agreement on either side. */
export interface X3dhSharedSecret {
  /** SK: 32-byte shared secret, the Double Ratchet's initial root key. */
  sharedKey: Uint8Array;
  /** AD = Encode(IK_A) || Encode(IK_B): 66 bytes, bound into every AEAD of the session. */
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

/** AD = Encode(IK_A) || Encode(IK_B) from the two Ed25519 identity public keys (initiator first). */
export function x3dhAssociatedData(initiatorIdentityKey: Uint8Array, responderIdentityKey: Uint8Array): Uint8Array {
  return concatBytes(
    encodePublicKey(ed25519PublicToX25519(initiatorIdentityKey)),
    encodePublicKey(ed25519PublicToX25519(responderIdentityKey)),
  );
}

/**
 * Initiator side (Alice, X3DH §3.3) without a one-time prekey:
 * DH1 = DH(IK_A, SPK_B), DH2 = DH(EK_A, IK_B), DH3 = DH(EK_A, SPK_B), SK = KDF(DH1 || DH2 || DH3).
 *
 * X3DH §3.3 asks Alice to verify the prekey signature first; the server publishes
 * `ephemeral_public_key` without one, so SPK_B is only as authentic as the server's directory
 * (compare fingerprints out of band for protection against a malicious server).
 *
 * @param local Alice's device keys (IK_A).
 * @param peerIdentityKey IK_B, Bob's 32-byte Ed25519 identity public key.
 * @param peerSignedPrekey SPK_B, Bob's 32-byte X25519 `ephemeral_public_key`.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH.
 */
export function x3dhInitiate(local: DeviceIdentity, peerIdentityKey: Uint8Array, peerSignedPrekey: Uint8Array): X3dhInitiation {
  return initiatorAgreement(local, peerIdentityKey, peerSignedPrekey, (dhs) => x3dhKdf(dhs));
}

/**
 * The initiator's side shared by X3DH §3.3 and PQXDH §3.3: a fresh EK_A, DH1 = DH(IK_A, SPK_B),
 * DH2 = DH(EK_A, IK_B), DH3 = DH(EK_A, SPK_B); `derive(DH1 || DH2 || DH3)` gives SK (it may
 * append more key material, e.g. the KEM secret). Every intermediate secret is erased.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH.
 */
export function initiatorAgreement(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerSignedPrekey: Uint8Array,
  derive: (dhOutputs: Uint8Array) => Uint8Array,
): X3dhInitiation {
  const peerIdentityX = ed25519PublicToX25519(peerIdentityKey);
  const ephemeral = x25519Keygen();
  const dh1 = local.dhWithIdentityKey(peerSignedPrekey);
  const dh2 = x25519DH(ephemeral.secretKey, peerIdentityX);
  const dh3 = x25519DH(ephemeral.secretKey, peerSignedPrekey);
  const km = concatBytes(dh1, dh2, dh3);
  try {
    return {
      sharedKey: derive(km),
      associatedData: x3dhAssociatedData(local.identityPublicKey, peerIdentityKey),
      ephemeralPublicKey: ephemeral.publicKey,
    };
  } finally {
    wipe(ephemeral.secretKey, dh1, dh2, dh3, km);
  }
}

/**
 * Responder side (Bob, X3DH §3.4): the same SK from Alice's initial message, with
 * DH1 = DH(SPK_B, IK_A), DH2 = DH(IK_B, EK_A), DH3 = DH(SPK_B, EK_A).
 *
 * @param local Bob's device keys (IK_B, and SPK_B = his ephemeral key).
 * @param peerIdentityKey IK_A, Alice's 32-byte Ed25519 identity public key.
 * @param peerEphemeralKey EK_A, from Alice's initial message.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH.
 */
export function x3dhRespond(local: DeviceIdentity, peerIdentityKey: Uint8Array, peerEphemeralKey: Uint8Array): X3dhSharedSecret {
  return responderAgreement(local, peerIdentityKey, peerEphemeralKey, (dhs) => x3dhKdf(dhs));
}

/**
 * The responder's side shared by X3DH §3.4 and PQXDH §3.4: DH1 = DH(SPK_B, IK_A),
 * DH2 = DH(IK_B, EK_A), DH3 = DH(SPK_B, EK_A); `derive(DH1 || DH2 || DH3)` gives SK.
 * @throws CryptoError `invalid_key` when a peer key is not a valid point or gives an all-zero DH.
 */
export function responderAgreement(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerEphemeralKey: Uint8Array,
  derive: (dhOutputs: Uint8Array) => Uint8Array,
): X3dhSharedSecret {
  const peerIdentityX = ed25519PublicToX25519(peerIdentityKey);
  const dh1 = local.dhWithEphemeralKey(peerIdentityX);
  const dh2 = local.dhWithIdentityKey(peerEphemeralKey);
  const dh3 = local.dhWithEphemeralKey(peerEphemeralKey);
  const km = concatBytes(dh1, dh2, dh3);
  try {
    return {
      sharedKey: derive(km),
      associatedData: x3dhAssociatedData(peerIdentityKey, local.identityPublicKey),
    };
  } finally {
    wipe(dh1, dh2, dh3, km);
  }
}
