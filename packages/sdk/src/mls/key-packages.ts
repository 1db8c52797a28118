/**
 * KeyPackages of {@link MlsClient} (RFC 9420 §10): their MLSMessage encoding, creating one for this
 * device (basic credential = the UTF-8 device id, lifetime from an hour before now to cover clock
 * skew), checking one claimed from the server before adding its device (§10.1), and
 * {@link inspectKeyPackage} for callers outside a group.
 */
import {
  defaultCapabilities,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  type AuthenticationService,
  type CiphersuiteImpl,
  type ClientState,
  type CryptoProvider,
  type KeyPackage,
} from 'ts-mls';
// Part of ts-mls's published `./*.js` export map (ts-mls is pinned), not re-exported from its root.
import { verifyKeyPackage } from 'ts-mls/keyPackage.js';
import { utf8Encode } from './base64.js';
import { MLS_SUPPORTED_CIPHERSUITES, ciphersuiteImpl } from './ciphersuites.js';
import type { Ed25519KeyPair, KeyPackageInfo } from './client-types.js';
import { parleyMlsCryptoProvider } from './crypto-provider.js';
import { MlsClientError } from './errors.js';
import { credentialDeviceId } from './roster.js';
import { decodeWholeMlsMessage } from './wire.js';

/** KeyPackages are valid from one hour before creation, to tolerate clock skew between devices. */
const NOT_BEFORE_SKEW_SECONDS = 3600;

/** A KeyPackage this client generated, with its private parts (until a Welcome uses it). */
export interface StoredKeyPackage {
  publicPackage: KeyPackage;
  encoded: Uint8Array;
  initPrivateKey: Uint8Array;
  hpkePrivateKey: Uint8Array;
}

/** Lowercase hex of bytes (KeyPackageRefs are keyed by it). */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** A KeyPackage as an encoded MLSMessage (wire format mls_key_package). */
export function encodeKeyPackageMessage(kp: KeyPackage): Uint8Array {
  return encodeMlsMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp });
}

/** The KeyPackage in an encoded MLSMessage. @throws MlsClientError `invalid_key_package` (another wire format), `malformed_message`. */
export function decodeKeyPackageMessage(bytes: Uint8Array): KeyPackage {
  const msg = decodeWholeMlsMessage(bytes);
  if (msg.wireformat !== 'mls_key_package') {
    throw new MlsClientError('invalid_key_package', `expected a KeyPackage, got ${msg.wireformat}`);
  }
  return msg.keyPackage;
}

/**
 * Reads a KeyPackage (encoded MLSMessage) and verifies its signature; for the device that claims
 * one from the server, or for the server to check a published KeyPackage belongs to its publisher.
 */
export async function inspectKeyPackage(bytes: Uint8Array, cryptoProvider: CryptoProvider = parleyMlsCryptoProvider): Promise<KeyPackageInfo> {
  const kp = decodeKeyPackageMessage(bytes);
  if (!MLS_SUPPORTED_CIPHERSUITES.includes(kp.cipherSuite)) {
    throw new MlsClientError('invalid_key_package', `unsupported ciphersuite ${kp.cipherSuite}`);
  }
  const cs = await ciphersuiteImpl(cryptoProvider, kp.cipherSuite).catch((cause) => {
    throw new MlsClientError('invalid_key_package', `ciphersuite ${kp.cipherSuite} is not available here`, { cause });
  });
  const valid = await verifyKeyPackage(kp, cs.signature).catch(() => false);
  if (!valid) throw new MlsClientError('invalid_key_package', 'KeyPackage signature does not verify');
  const deviceId = credentialDeviceId(kp.leafNode.credential);
  if (deviceId === undefined) throw new MlsClientError('invalid_key_package', 'KeyPackage credential is not a basic device id');
  return {
    deviceId,
    signaturePublicKey: kp.leafNode.signaturePublicKey,
    cipherSuite: kp.cipherSuite,
    notBefore: kp.leafNode.lifetime.notBefore,
    notAfter: kp.leafNode.lifetime.notAfter,
  };
}

/** A new KeyPackage of `deviceId` in suite `impl`, valid from {@link NOT_BEFORE_SKEW_SECONDS} ago for `lifetimeSeconds`. */
export async function newKeyPackage(deviceId: string, signature: Ed25519KeyPair, lifetimeSeconds: number, impl: CiphersuiteImpl): Promise<StoredKeyPackage> {
  const now = Math.floor(Date.now() / 1000);
  const { publicPackage, privatePackage } = await generateKeyPackageWithKey(
    { credentialType: 'basic', identity: utf8Encode(deviceId) },
    defaultCapabilities(),
    { notBefore: BigInt(now - NOT_BEFORE_SKEW_SECONDS), notAfter: BigInt(now + lifetimeSeconds) },
    [],
    signature,
    impl,
  );
  return {
    publicPackage,
    encoded: encodeKeyPackageMessage(publicPackage),
    initPrivateKey: privatePackage.initPrivateKey,
    hpkePrivateKey: privatePackage.hpkePrivateKey,
  };
}

/**
 * Check a claimed KeyPackage before adding its device to the group of `state` (RFC 9420 §10.1):
 * the group's suite, a basic credential, a valid signature, a current lifetime, and the client's
 * credential check. Answers the device id.
 * @throws MlsClientError `invalid_key_package`, `malformed_message`.
 */
export async function checkAddedKeyPackage(bytes: Uint8Array, state: ClientState, cs: CiphersuiteImpl, authService: AuthenticationService): Promise<{ kp: KeyPackage; deviceId: string }> {
  const kp = decodeKeyPackageMessage(bytes);
  if (kp.cipherSuite !== state.groupContext.cipherSuite) {
    throw new MlsClientError('invalid_key_package', `KeyPackage of ciphersuite ${kp.cipherSuite} for a group of ${state.groupContext.cipherSuite}`);
  }
  const deviceId = credentialDeviceId(kp.leafNode.credential);
  if (deviceId === undefined) throw new MlsClientError('invalid_key_package', 'KeyPackage credential is not a basic device id');
  if (!(await verifyKeyPackage(kp, cs.signature).catch(() => false))) {
    throw new MlsClientError('invalid_key_package', `KeyPackage of ${deviceId} has an invalid signature`);
  }
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (kp.leafNode.lifetime.notBefore > now || kp.leafNode.lifetime.notAfter < now) {
    throw new MlsClientError('invalid_key_package', `KeyPackage of ${deviceId} is expired or not yet valid`);
  }
  if (!(await authService.validateCredential(kp.leafNode.credential, kp.leafNode.signaturePublicKey))) {
    throw new MlsClientError('invalid_key_package', `credential of ${deviceId} refused by validateCredential`);
  }
  return { kp, deviceId };
}

/**
 * Check that `kp` is a matching Ed25519 key pair of suite `cs` (signs a probe and verifies it).
 * @throws MlsClientError `invalid_argument`.
 */
export async function checkSignatureKeyPair(cs: CiphersuiteImpl, kp: Ed25519KeyPair): Promise<void> {
  const probe = utf8Encode('parley mls signature key check');
  const ok = await cs.signature
    .sign(kp.signKey, probe)
    .then((sig) => cs.signature.verify(kp.publicKey, probe, sig))
    .catch(() => false);
  if (!ok) throw new MlsClientError('invalid_argument', 'signatureKeyPair is not a matching Ed25519 key pair');
}
