/**
 * Device key material (contract §2.3, design §7): an Ed25519 identity key pair and an X25519
 * "ephemeral" key pair. The ephemeral key is the one the server publishes as
 * `ephemeral_public_key`; in X3DH terms it plays the role of the signed prekey SPK (it is
 * medium-term, not per message). Private keys never leave the client.
 *
 * A device also holds (design §8.34) a last-resort ML-KEM-768 prekey for PQXDH
 * (pq-prekey.ts), stored as its 64-byte seed and signed by the identity key. It belongs to the
 * device, like the ephemeral key, so every messenger of the device can answer PQXDH. Identities
 * saved before it have none until {@link DeviceIdentity.withPqPrekey}.
 */
import { mlKem768Decapsulate, mlKem768Keygen, MLKEM_SEED_BYTES, type MlKemKeyPair } from './ml-kem.js';
import { pqPrekeyId, pqPrekeySigningInput, type SignedPqPrekey } from './pq-prekey.js';
import {
  CryptoError,
  KEY_BYTES,
  bytesToHex,
  ed25519Keygen,
  ed25519PublicKey,
  ed25519SecretToX25519,
  ed25519Sign,
  equalBytes,
  fingerprint,
  hexToBytes,
  proofOfPossession,
  randomBytes,
  wipe,
  x25519DH,
  x25519Keygen,
  x25519PublicKey,
  type KeyPair,
} from './primitives.js';

/**
 * Exported form of a {@link DeviceIdentity}: every key as lowercase hex (32 bytes = 64 chars).
 * Holds private keys: store it encrypted or in a platform keystore.
 */
export interface DeviceIdentityJSON {
  v: 1;
  /** The server-assigned device UUID, once enrolled. */
  device_id?: string;
  identity_secret_key: string;
  identity_public_key: string;
  ephemeral_secret_key: string;
  ephemeral_public_key: string;
  /** Seed d || z of the ML-KEM-768 PQ prekey (64 bytes, 128 hex characters); absent in identities saved without one. */
  pq_prekey_seed?: string;
}

/** The device's PQ prekey: its seed, key pair and signed public form. */
interface PqPrekeyState {
  seed: Uint8Array;
  keyPair: MlKemKeyPair;
  prekey: SignedPqPrekey;
}

/** The public half of a device, as sent to `POST /enroll` and `POST /devices/register`. */
export interface DevicePublicKeys {
  identity_public_key: string;
  ephemeral_public_key: string;
}

const DEVICE_ID_MAX = 128;

/** Derive the PQ prekey of `seed` (d || z) and sign it with the identity key under the PQ prekey domain ({@link pqPrekeySigningInput}). */
function pqPrekeyState(identity: KeyPair, seed: Uint8Array): PqPrekeyState {
  const keyPair = mlKem768Keygen(seed);
  const signature = ed25519Sign(pqPrekeySigningInput(keyPair.publicKey), identity.secretKey);
  return { seed, keyPair, prekey: { keyId: pqPrekeyId(keyPair.publicKey), publicKey: keyPair.publicKey, signature } };
}

function checkDeviceId(deviceId: string): string {
  if (typeof deviceId !== 'string' || deviceId.length === 0 || deviceId.length > DEVICE_ID_MAX) {
    throw new CryptoError('invalid_input', `device_id must be a non-empty string of at most ${DEVICE_ID_MAX} characters`);
  }
  return deviceId;
}

/**
 * A device's long-term keys. Immutable: {@link DeviceIdentity.withDeviceId} returns a copy.
 * Secret keys stay inside the object; callers get signatures and DH outputs, not raw secrets.
 */
export class DeviceIdentity {
  private readonly identity: KeyPair;
  private readonly ephemeral: KeyPair;
  private readonly pq: PqPrekeyState | undefined;
  /** The server-assigned device UUID (known after enrollment), else undefined. */
  readonly deviceId: string | undefined;

  private constructor(identity: KeyPair, ephemeral: KeyPair, deviceId: string | undefined, pq: PqPrekeyState | undefined) {
    this.identity = identity;
    this.ephemeral = ephemeral;
    this.deviceId = deviceId;
    this.pq = pq;
  }

  /**
   * Fresh identity (Ed25519), ephemeral (X25519) and PQ prekey (ML-KEM-768) key pairs from the
   * platform CSPRNG.
   */
  static generate(deviceId?: string): DeviceIdentity {
    const identity = ed25519Keygen();
    return new DeviceIdentity(identity, x25519Keygen(), deviceId === undefined ? undefined : checkDeviceId(deviceId), pqPrekeyState(identity, randomBytes(MLKEM_SEED_BYTES)));
  }

  /**
   * Import an exported identity (object or its JSON text). Public keys are recomputed from the
   * secret keys and must match the stored ones.
   * @throws CryptoError `invalid_state` when the JSON is malformed or the key pairs do not match.
   */
  static fromJSON(json: DeviceIdentityJSON | string): DeviceIdentity {
    try {
      const o = (typeof json === 'string' ? JSON.parse(json) : json) as Partial<DeviceIdentityJSON> | null;
      if (!o || typeof o !== 'object' || o.v !== 1) throw new CryptoError('invalid_state', 'unsupported identity format');
      const idSecret = hexToBytes(String(o.identity_secret_key), KEY_BYTES, 'identity_secret_key');
      const ephSecret = hexToBytes(String(o.ephemeral_secret_key), KEY_BYTES, 'ephemeral_secret_key');
      const identity = { secretKey: idSecret, publicKey: ed25519PublicKey(idSecret) };
      const ephemeral = { secretKey: ephSecret, publicKey: x25519PublicKey(ephSecret) };
      if (!equalBytes(identity.publicKey, hexToBytes(String(o.identity_public_key), KEY_BYTES, 'identity_public_key'))) {
        throw new CryptoError('invalid_state', 'identity_public_key does not match identity_secret_key');
      }
      if (!equalBytes(ephemeral.publicKey, hexToBytes(String(o.ephemeral_public_key), KEY_BYTES, 'ephemeral_public_key'))) {
        throw new CryptoError('invalid_state', 'ephemeral_public_key does not match ephemeral_secret_key');
      }
      const pq = o.pq_prekey_seed === undefined ? undefined : pqPrekeyState(identity, hexToBytes(String(o.pq_prekey_seed), MLKEM_SEED_BYTES, 'pq_prekey_seed'));
      return new DeviceIdentity(identity, ephemeral, o.device_id === undefined ? undefined : checkDeviceId(o.device_id), pq);
    } catch (cause) {
      if (cause instanceof CryptoError && cause.code === 'invalid_state') throw cause;
      throw new CryptoError('invalid_state', `invalid device identity: ${(cause as Error).message}`, { cause });
    }
  }

  /** Export with private keys, hex (see {@link DeviceIdentityJSON}); `JSON.stringify` uses this. */
  toJSON(): DeviceIdentityJSON {
    return {
      v: 1,
      ...(this.deviceId === undefined ? {} : { device_id: this.deviceId }),
      identity_secret_key: bytesToHex(this.identity.secretKey),
      identity_public_key: this.identityPublicKeyHex,
      ephemeral_secret_key: bytesToHex(this.ephemeral.secretKey),
      ephemeral_public_key: this.ephemeralPublicKeyHex,
      ...(this.pq === undefined ? {} : { pq_prekey_seed: bytesToHex(this.pq.seed) }),
    };
  }

  /** The same keys with the server-assigned device UUID attached. */
  withDeviceId(deviceId: string): DeviceIdentity {
    return new DeviceIdentity(this.identity, this.ephemeral, checkDeviceId(deviceId), this.pq);
  }

  /**
   * The same keys with a PQ prekey: a new one (or the one of `seed`, d || z, 64 bytes), replacing
   * any present. Save the result before publishing its {@link pqPrekey}.
   * @throws CryptoError `invalid_input` for a seed of another length.
   */
  withPqPrekey(seed?: Uint8Array): DeviceIdentity {
    const s = seed === undefined ? randomBytes(MLKEM_SEED_BYTES) : seed.slice();
    return new DeviceIdentity(this.identity, this.ephemeral, this.deviceId, pqPrekeyState(this.identity, s));
  }

  /**
   * The signed ML-KEM-768 PQ prekey to publish (PQXDH §3.2; a copy), or undefined for an identity
   * saved without one (see {@link withPqPrekey}).
   */
  get pqPrekey(): SignedPqPrekey | undefined {
    const p = this.pq?.prekey;
    return p === undefined ? undefined : { keyId: p.keyId, publicKey: p.publicKey.slice(), signature: p.signature.slice() };
  }

  /**
   * ML-KEM-768 decapsulation with the PQ prekey named `keyId` (PQXDH §3.4, SS = PQKEM-DEC).
   * @throws CryptoError `unknown_prekey` when this device holds no PQ prekey of that id;
   *   `invalid_input` for a ciphertext of the wrong length.
   */
  pqDecapsulate(keyId: string, ciphertext: Uint8Array): Uint8Array {
    if (this.pq === undefined || this.pq.prekey.keyId !== keyId) {
      throw new CryptoError('unknown_prekey', 'the initial message was built for a PQ prekey this device does not hold');
    }
    return mlKem768Decapsulate(ciphertext, this.pq.keyPair.secretKey);
  }

  /** Raw 32-byte Ed25519 identity public key (a copy). */
  get identityPublicKey(): Uint8Array {
    return this.identity.publicKey.slice();
  }

  /** Ed25519 identity public key, 64 lowercase hex characters. */
  get identityPublicKeyHex(): string {
    return bytesToHex(this.identity.publicKey);
  }

  /** Raw 32-byte X25519 ephemeral (signed-prekey role) public key (a copy). */
  get ephemeralPublicKey(): Uint8Array {
    return this.ephemeral.publicKey.slice();
  }

  /** X25519 ephemeral public key, 64 lowercase hex characters. */
  get ephemeralPublicKeyHex(): string {
    return bytesToHex(this.ephemeral.publicKey);
  }

  /** The two public keys in the wire shape of the enrollment and registration bodies. */
  get publicKeys(): DevicePublicKeys {
    return { identity_public_key: this.identityPublicKeyHex, ephemeral_public_key: this.ephemeralPublicKeyHex };
  }

  /** design §7 fingerprint of the identity key ("xxxx xxxx xxxx xxxx xxxx xxxx xxxx xxxx"). */
  get fingerprint(): string {
    return fingerprint(this.identity.publicKey);
  }

  /** Ed25519 signature (64 bytes) by the identity key over `message`. */
  sign(message: Uint8Array): Uint8Array {
    return ed25519Sign(message, this.identity.secretKey);
  }

  /** Ed25519 signature by the identity key over `message`, 128 lowercase hex characters. */
  signHex(message: Uint8Array): string {
    return bytesToHex(this.sign(message));
  }

  /** Enrollment proof of possession (design §7): signature over the raw identity public key, hex. */
  proofOfPossession(): string {
    return proofOfPossession(this.identity.secretKey);
  }

  /**
   * X25519 DH between the identity key (converted Ed25519→X25519) and a peer X25519 public key.
   * Used by X3DH (DH1 on the initiator, DH2 on the responder).
   * @throws CryptoError `invalid_key` for a low-order peer key.
   */
  dhWithIdentityKey(peerX25519PublicKey: Uint8Array): Uint8Array {
    const secret = ed25519SecretToX25519(this.identity.secretKey);
    try {
      return x25519DH(secret, peerX25519PublicKey);
    } finally {
      wipe(secret);
    }
  }

  /**
   * X25519 DH between the ephemeral (signed-prekey role) key and a peer X25519 public key.
   * Used by X3DH on the responder (DH1, DH3).
   * @throws CryptoError `invalid_key` for a low-order peer key.
   */
  dhWithEphemeralKey(peerX25519PublicKey: Uint8Array): Uint8Array {
    return x25519DH(this.ephemeral.secretKey, peerX25519PublicKey);
  }

  /**
   * A copy of the ephemeral key pair. The X3DH responder uses it as its initial Double Ratchet
   * key pair (Double Ratchet §3.3 / X3DH §3.3: SPK_B is Bob's initial ratchet key); the session
   * replaces it at its first DH ratchet step.
   */
  ephemeralKeyPair(): KeyPair {
    return { secretKey: this.ephemeral.secretKey.slice(), publicKey: this.ephemeral.publicKey.slice() };
  }
}
