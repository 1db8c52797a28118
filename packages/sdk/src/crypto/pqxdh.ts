/**
 * PQXDH key agreement ("The PQXDH Key Agreement Protocol", Signal, revision 3) for curve X25519,
 * hash SHA-256 and pqkem ML-KEM-768, with an optional one-time curve prekey (as X3DH here, x3dh.ts).
 *
 * Parameters (PQXDH §2.1):
 * - curve X25519, EncodeEC as X3DH's (`encodePublicKey` of x3dh.ts: 0x05 || u-coordinate); identity keys
 *   are Ed25519, used in DH through the birational map (x3dh.ts).
 * - hash SHA-256; info {@link PQXDH_INFO}, naming the curve, the hash and the KEM.
 * - pqkem ML-KEM-768 (FIPS 203, ml-kem.ts); EncodeKEM and the signed PQ prekey: pq-prekey.ts.
 *
 * KDF (PQXDH §2.2): HKDF-SHA256 over F || KM with F = 32 0xFF bytes, a 32-byte zero salt and
 * info = PQXDH_INFO, 32 bytes out. KM = DH1 || DH2 || DH3 || SS, or DH1 || DH2 || DH3 || DH4 || SS
 * with a one-time curve prekey OPK_B (PQXDH §3.3). AD = EncodeEC(IK_A) || EncodeEC(IK_B)
 * || the encoded session context, as in X3DH (x3dh.ts `x3dhAssociatedData`). The initial message carries, besides X3DH's fields, the KEM ciphertext
 * CT and the identifier of the PQ prekey used (frame.ts `x3dh.pq`).
 *
 * Negotiation (design §8.34): the initiator runs PQXDH when the responder published a PQ prekey
 * whose signature verifies, classical X3DH otherwise; the responder follows the initial message.
 */
import type { DeviceIdentity } from './keys.js';
import { mlKem768Encapsulate } from './ml-kem.js';
import { verifyPqPrekey, type SignedPqPrekey } from './pq-prekey.js';
import { CryptoError, concatBytes, utf8Encode, wipe } from './primitives.js';
import {
  agreementKdf,
  deviceEphemeralPrekeys,
  initiatorAgreement,
  responderAgreement,
  type ResponderPrekeys,
  type SessionContext,
  type X3dhInitiation,
  type X3dhSharedSecret,
} from './x3dh.js';

/** HKDF info of the PQXDH KDF (PQXDH §2.1): application, curve, hash and KEM. */
export const PQXDH_INFO = utf8Encode('Parley_PQXDH_CURVE25519_SHA-256_ML-KEM-768');

/** Initiator's result: X3DH's plus the KEM ciphertext and the PQ prekey it was made for. */
export interface PqxdhInitiation extends X3dhInitiation {
  /** CT: the 1088-byte ML-KEM-768 ciphertext to send in the initial message. */
  kemCiphertext: Uint8Array;
  /** Identifier of the PQ prekey CT was made for (32 hex characters). */
  pqPrekeyId: string;
}

/** Something that can decapsulate with a PQ prekey by identifier ({@link DeviceIdentity} is one). */
export interface PqPrekeyHolder {
  /** SS = ML-KEM.Decaps(CT) with the prekey `keyId`; throws CryptoError `unknown_prekey` when not held. */
  pqDecapsulate(keyId: string, ciphertext: Uint8Array): Uint8Array;
}

/** KDF(DH1 || DH2 || DH3 [|| DH4] || SS) of PQXDH §3.3 (32 bytes); erases its own copy of the input. */
export function pqxdhKdf(dhOutputs: Uint8Array, kemSecret: Uint8Array): Uint8Array {
  const km = concatBytes(dhOutputs, kemSecret);
  try {
    return agreementKdf(km, PQXDH_INFO);
  } finally {
    wipe(km);
  }
}

/**
 * Initiator side (Alice, PQXDH §3.3): verify Sig(IK_B, EncodeKEM(PQPK_B)), then
 * (CT, SS) = ML-KEM.Encaps(PQPK_B), DH1..DH3 (and DH4 with OPK_B) as X3DH,
 * SK = KDF(DH1 || DH2 || DH3 [|| DH4] || SS).
 *
 * SPK_B is the signed prekey the caller verified, or a legacy peer's unsigned
 * `ephemeral_public_key` (as in x3dh.ts); PQPK_B is signed by IK_B, so a server cannot substitute it.
 *
 * @param local Alice's device keys (IK_A).
 * @param peerIdentityKey IK_B, Bob's 32-byte Ed25519 identity public key.
 * @param peerSignedPrekey SPK_B, Bob's 32-byte X25519 signed prekey (or legacy `ephemeral_public_key`).
 * @param peerPqPrekey PQPK_B with its identifier and signature.
 * @param context the conversation and the two devices, appended to AD.
 * @param peerOneTimePrekey OPK_B, Bob's 32-byte X25519 one-time prekey, when the claim gave one.
 * @throws CryptoError `bad_signature` (the PQ prekey is not signed by IK_B or its id does not
 *   match), `invalid_key` (a curve key is not a valid point, or PQPK_B fails the FIPS 203 check),
 *   `invalid_input` (malformed context).
 */
export function pqxdhInitiate(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerSignedPrekey: Uint8Array,
  peerPqPrekey: SignedPqPrekey,
  context: SessionContext,
  peerOneTimePrekey?: Uint8Array,
): PqxdhInitiation {
  if (!verifyPqPrekey(peerIdentityKey, peerPqPrekey)) {
    throw new CryptoError('bad_signature', 'the PQ prekey is not signed by the peer identity key (or its key id does not match)');
  }
  const { ciphertext, sharedSecret } = mlKem768Encapsulate(peerPqPrekey.publicKey);
  try {
    const agreed = initiatorAgreement(local, peerIdentityKey, peerSignedPrekey, context, (dhs) => pqxdhKdf(dhs, sharedSecret), peerOneTimePrekey);
    return { ...agreed, kemCiphertext: ciphertext, pqPrekeyId: peerPqPrekey.keyId };
  } finally {
    wipe(sharedSecret);
  }
}

/**
 * Responder side (Bob, PQXDH §3.4): SS = ML-KEM.Decaps(CT) with the PQ prekey named in the
 * message, DH1..DH3 (and DH4) as X3DH, the same SK and AD. A tampered CT yields another SS (implicit
 * rejection), so the first message fails to decrypt rather than this call.
 *
 * @param local Bob's device keys (IK_B).
 * @param peerIdentityKey IK_A, Alice's 32-byte Ed25519 identity public key.
 * @param peerEphemeralKey EK_A from Alice's initial message.
 * @param kemCiphertext CT from Alice's initial message (1088 bytes).
 * @param pqPrekeyId identifier of the PQ prekey CT was made for.
 * @param context the conversation and the two devices, appended to AD (as the initiator's).
 * @param pqPrekeys who holds that prekey; default `local` (its last-resort PQ prekey).
 * @param prekeys the SPK_B (and OPK_B) the message names; default the legacy device ephemeral key.
 * @throws CryptoError `unknown_prekey` (no such PQ, signed or one-time prekey), `invalid_input`, `invalid_key`.
 */
export function pqxdhRespond(
  local: DeviceIdentity,
  peerIdentityKey: Uint8Array,
  peerEphemeralKey: Uint8Array,
  kemCiphertext: Uint8Array,
  pqPrekeyId: string,
  context: SessionContext,
  pqPrekeys: PqPrekeyHolder = local,
  prekeys: ResponderPrekeys = deviceEphemeralPrekeys(local),
): X3dhSharedSecret {
  const sharedSecret = pqPrekeys.pqDecapsulate(pqPrekeyId, kemCiphertext);
  try {
    return responderAgreement(local, peerIdentityKey, peerEphemeralKey, context, (dhs) => pqxdhKdf(dhs, sharedSecret), prekeys);
  } finally {
    wipe(sharedSecret);
  }
}
