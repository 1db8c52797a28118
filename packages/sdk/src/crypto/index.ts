/**
 * End-to-end encryption core of the Parley SDK: the legacy 1:1 protocol of contract §1.3
 * (X3DH over X25519 + Double Ratchet, XChaCha20-Poly1305 with 24-byte random nonces, Ed25519
 * identity keys, BLAKE2b fingerprints) and the wire frame of contract §2.4.
 *
 * Conventions: byte values are `Uint8Array`; keys, signatures and nonces on the wire are
 * lowercase hex (design §7); `header_blob` and `ciphertext` are standard padded base64.
 * Every failure is a {@link CryptoError} whose `code` names the reason. Browser-safe (no static
 * import of Node built-ins; node:crypto is used on Node through `process.getBuiltinModule`); the
 * durable file store lives in `@parley/sdk/node`.
 */

// ---- Errors -------------------------------------------------------------------------------

/**
 * `CryptoError` (`name` "CryptoError", `code`: {@link CryptoErrorCode}) is thrown by every
 * function of this module: `invalid_input`, `invalid_key`, `malformed_frame`, `bad_signature`,
 * `decrypt_failed`, `replay`, `too_many_skipped`, `wrong_peer`, `unknown_prekey`, `new_session`,
 * `invalid_state`, `not_ready`.
 */
export { CryptoError, type CryptoErrorCode } from './primitives.js';

// ---- Crypto provider ----------------------------------------------------------------------

/**
 * Which implementation runs Ed25519, X25519 and ChaCha20-Poly1305, chosen once at the first
 * crypto call: `cryptoProvider()` → {name: 'node' | 'noble', native, implementation, reason}.
 * node:crypto on Node (after a known-answer self-test), @noble elsewhere; both give identical
 * bytes. `useCryptoProvider('noble' | 'node')` switches (tests, benchmarks);
 * `PARLEY_CRYPTO_PROVIDER=noble` forces the fallback.
 */
export { cryptoProvider, useCryptoProvider, type CryptoProviderInfo, type CryptoProviderName } from './primitives.js';

// ---- Primitives (node:crypto or @noble, see cryptoProvider) ---------------------------------

/**
 * Sizes in bytes: KEY_BYTES 32 (Ed25519/X25519 keys), SIGNATURE_BYTES 64 (Ed25519),
 * XCHACHA_NONCE_BYTES 24, AEAD_TAG_BYTES 16.
 */
export { KEY_BYTES, SIGNATURE_BYTES, XCHACHA_NONCE_BYTES, AEAD_TAG_BYTES } from './primitives.js';

/**
 * Encodings: lowercase hex (`hexToBytes(hex, expectedLength?)` throws `invalid_input`), standard
 * padded base64, strict UTF-8, byte concatenation and constant-time equality, best-effort `wipe`.
 */
export {
  bytesToHex,
  hexToBytes,
  bytesToBase64,
  base64ToBytes,
  utf8Encode,
  utf8Decode,
  concatBytes,
  equalBytes,
  wipe,
  randomBytes,
} from './primitives.js';

/**
 * Ed25519 (RFC 8032): keygen → {secretKey (32-byte seed), publicKey (32)}; sign → 64 bytes;
 * verify is strict (RFC 8032 / FIPS 186-5 decoding, like node:crypto) and never throws.
 * X25519 (RFC 7748): keygen, public key, DH (throws `invalid_key` on an all-zero result).
 * Ed25519→X25519 conversion of public (birational map) and secret keys.
 */
export {
  ed25519Keygen,
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  x25519Keygen,
  x25519PublicKey,
  x25519DH,
  ed25519PublicToX25519,
  ed25519SecretToX25519,
  type KeyPair,
} from './primitives.js';

/** HKDF-SHA256 (RFC 5869), HMAC-SHA256 (RFC 2104), BLAKE2b-256 (RFC 7693). */
export { hkdfSha256, hmacSha256, blake2b256 } from './primitives.js';

/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): `aeadSeal(key32, plaintext, aad?)` →
 * {nonce (24 random bytes), ciphertext (plaintext length + 16-byte tag)}; `aeadOpen` throws
 * `decrypt_failed`. The explicit-nonce pair is for known-answer tests and must never reuse a nonce.
 */
export {
  aeadSeal,
  aeadOpen,
  xchacha20poly1305Encrypt,
  xchacha20poly1305Decrypt,
  type SealedBox,
} from './primitives.js';

/** ChaCha20-Poly1305 (RFC 8439 §2.8) with a 12-byte nonce (`CHACHA_NONCE_BYTES`); decrypt throws `decrypt_failed`. */
export { chacha20poly1305Encrypt, chacha20poly1305Decrypt, CHACHA_NONCE_BYTES } from './primitives.js';

/**
 * design §7: `fingerprint(identityKey)` → "xxxx xxxx xxxx xxxx xxxx xxxx xxxx xxxx" (first 16
 * bytes of BLAKE2b-256 of the raw key, lowercase hex); `proofOfPossession(identitySecretKey)` →
 * 128-hex Ed25519 signature over the raw 32-byte identity public key; its verifier never throws.
 */
export { fingerprint, proofOfPossession, verifyProofOfPossession } from './primitives.js';

// ---- Device keys ---------------------------------------------------------------------------

/**
 * `DeviceIdentity` (contract §2.3): Ed25519 identity + X25519 ephemeral (signed-prekey role) key
 * pairs; `generate(deviceId?)`, `fromJSON(json)` (throws `invalid_state`), `toJSON()` (hex, holds
 * private keys), `withDeviceId(id)`, `publicKeys`, `fingerprint`, `sign`, `proofOfPossession()`.
 */
export { DeviceIdentity, type DeviceIdentityJSON, type DevicePublicKeys } from './keys.js';

// ---- X3DH ----------------------------------------------------------------------------------

/**
 * X3DH (Signal, "The X3DH Key Agreement Protocol") without one-time prekeys:
 * `x3dhInitiate(local, IK_B, SPK_B, context)` → {sharedKey SK (32), associatedData AD (66 +
 * encoded context), ephemeralPublicKey EK_A (32)}; `x3dhRespond(local, IK_A, EK_A, context)` →
 * {sharedKey, associatedData}. `context` (`SessionContext`) names the conversation and both
 * devices. Throws `invalid_key` for invalid or low-order keys.
 */
export {
  x3dhInitiate,
  encodeSessionContext,
  type SessionContext,
  x3dhRespond,
  x3dhKdf,
  agreementKdf,
  x3dhAssociatedData,
  encodePublicKey,
  X3DH_INFO,
  type X3dhSharedSecret,
  type X3dhInitiation,
} from './x3dh.js';

// ---- Post-quantum: ML-KEM-768, signed PQ prekeys, PQXDH (design §8.34) -------------

/**
 * ML-KEM-768 (FIPS 203) through @noble/post-quantum: `mlKem768Keygen(seed64?)` →
 * {publicKey (1184), secretKey (2400)}; `mlKem768Encapsulate(pk, m32?)` → {ciphertext (1088),
 * sharedSecret (32)}; `mlKem768Decapsulate(ct, sk)` → 32 bytes (implicit rejection). Throws
 * `invalid_input` (lengths) or `invalid_key` (FIPS 203 §7.2/§7.3 checks).
 */
export {
  mlKem768Keygen,
  mlKem768Encapsulate,
  mlKem768Decapsulate,
  MLKEM768_PUBLIC_KEY_BYTES,
  MLKEM768_SECRET_KEY_BYTES,
  MLKEM768_CIPHERTEXT_BYTES,
  MLKEM_SHARED_SECRET_BYTES,
  MLKEM_SEED_BYTES,
  MLKEM_MESSAGE_BYTES,
  type MlKemKeyPair,
  type MlKemEncapsulation,
} from './ml-kem.js';

/**
 * Signed PQ prekeys (PQXDH §3.2): `encodeKemPublicKey(pk)` (EncodeKEM: 0x0b || pk),
 * `pqPrekeyId(pk)` (32 hex), `pqPrekeySigningInput(pk)` (what the identity key signs: the
 * `parley/v2/pq-prekey` domain, 0x00, EncodeKEM), `verifyPqPrekey(identityKey, prekey)` (never
 * throws; the tagged form only), and the wire form {key_id, public_key, signature} (base64) with
 * `pqPrekeyToWire` / `pqPrekeyFromWire`.
 * A `DeviceIdentity` holds its own: `pqPrekey`, `withPqPrekey()`, `pqDecapsulate()`.
 */
export {
  encodeKemPublicKey,
  pqPrekeyId,
  pqPrekeySigningInput,
  verifyPqPrekey,
  pqPrekeyToWire,
  pqPrekeyFromWire,
  MLKEM768_KEY_TYPE,
  PQ_KEM_NAME,
  type SignedPqPrekey,
  type PqPrekeyWire,
} from './pq-prekey.js';

/**
 * X25519 signed and one-time prekeys (X3DH §3.2): `prekeyId(pk)` (32 hex),
 * `signedPrekeySigningInput(pk)` (the `parley/v2/signed-prekey` domain, 0x00, Encode(pk)),
 * `signPrekey(identity, pk)`, `verifySignedPrekey(identityKey, prekey)` (never throws), the wire
 * forms, and `PrekeyStore`: the device's prekey private keys with rotation (weekly, one week of
 * grace, then wiped) and one-time prekeys deleted on use; `toJSON()` / `fromJSON(json, identity)`.
 */
export {
  prekeyId,
  signedPrekeySigningInput,
  signPrekey,
  verifySignedPrekey,
  signedPrekeyToWire,
  signedPrekeyFromWire,
  oneTimePrekeyToWire,
  oneTimePrekeyFromWire,
  PrekeyStore,
  DEFAULT_PREKEY_SCHEDULE,
  PREKEY_ID_CHARS,
  type X25519SignedPrekey,
  type X25519OneTimePrekey,
  type PrekeySchedule,
  type PrekeyStateJSON,
} from './prekeys.js';

/**
 * PQXDH (Signal, revision 3; X25519, SHA-256, ML-KEM-768): `pqxdhInitiate(local, IK_B, SPK_B,
 * signedPqPrekey, context)` → X3DH's result plus {kemCiphertext, pqPrekeyId}; `pqxdhRespond(local,
 * IK_A, EK_A, ct, prekeyId, context, holder?)` → {sharedKey, associatedData}. SK = KDF(DH1 || DH2 || DH3 || SS)
 * with info `PQXDH_INFO`. `RatchetSession.initiate(…, { pqPrekey })` uses it.
 */
export { pqxdhInitiate, pqxdhRespond, pqxdhKdf, PQXDH_INFO, type PqxdhInitiation, type PqPrekeyHolder } from './pqxdh.js';

// ---- Double Ratchet -------------------------------------------------------------------------

/**
 * `DoubleRatchet` (Signal, "The Double Ratchet Algorithm"): `initAlice` / `initBob`,
 * `encrypt(bytes)` → Frame, `decrypt(frame)` → bytes (state unchanged on error),
 * `serialize()` / `deserialize(json, local, options?)`. MAX_SKIP default 1000
 * (`DEFAULT_MAX_SKIP`), total skipped-key cap default 2000 (`DEFAULT_MAX_SKIPPED_KEYS`).
 * `kdfRk` (HKDF-SHA256) and `kdfCk` (HMAC-SHA256) are the KDF_RK / KDF_CK of §5.2.
 */
export {
  DoubleRatchet,
  DEFAULT_MAX_SKIP,
  DEFAULT_MAX_SKIPPED_KEYS,
  KDF_RK_INFO,
  kdfRk,
  kdfCk,
  RatchetStateSchema,
  type DoubleRatchetOptions,
  type RatchetInit,
  type RatchetRole,
  type RatchetStateJSON,
} from './double-ratchet.js';

// ---- Wire frame -----------------------------------------------------------------------------

/**
 * Wire frame (`x3dh-dr` v2): header {device_id, recipient_device_id, conversation_id, ratchet_pub,
 * msg_num, pn, nonce, x3dh?}, Ed25519 signature over the domain-separated canonical header bytes
 * (`headerSignatureMessage`), ciphertext. `encodeFrame` → {header_blob, ciphertext} (base64);
 * `decodeFrame` checks shape only (throws `malformed_frame`, or `unsupported_version` for a v1
 * frame); `decodeAndVerifyFrame` also verifies the signature (throws `bad_signature`).
 */
export {
  encodeFrame,
  decodeFrame,
  decodeAndVerifyFrame,
  verifyFrameSignature,
  headerSigningBytes,
  headerSignatureMessage,
  canonicalJson,
  MAX_CONVERSATION_ID_CHARS,
  isMessageHeader,
  MessageHeaderSchema,
  X3dhHeaderSchema,
  PqHeaderSchema,
  FRAME_VERSION,
  FRAME_PROTOCOL,
  MAX_HEADER_BLOB_CHARS,
  type Frame,
  type MessageHeader,
  type X3dhHeader,
  type PqHeader,
  type WireMessage,
} from './frame.js';

// ---- Session facade -------------------------------------------------------------------------

/**
 * `RatchetSession`: `initiate(local, {device_id, identity_public_key, ephemeral_public_key},
 * {conversationId})`, `respond(local, firstMessage, peerIdentityKey, {conversationId})` → {session, plaintext},
 * `encrypt(bytes)` → {header_blob, ciphertext}, `decrypt({header_blob, ciphertext})` → bytes,
 * `toJSON()` / `serialize()` / `fromJSON(json, local)`, `isInitialMessage(message)`.
 */
export { RatchetSession, type PeerDevice, type InitiateOptions, type RespondOptions, type RespondResult } from './session.js';
