/** Client-side key helpers for tests: Ed25519 identity and X25519 ephemeral keys as raw hex. */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export interface DeviceKeys {
  identityPublicKey: string;
  ephemeralPublicKey: string;
  privateKey: KeyObject;
  /** Ed25519 signature over `message`, hex. */
  sign(message: Uint8Array | string): string;
  /** Enrollment proof of possession: signature over the raw identity public key. */
  proof(): string;
}

const rawHex = (k: KeyObject) => Buffer.from(k.export({ format: 'jwk' }).x!, 'base64url').toString('hex');

export function newDeviceKeys(): DeviceKeys {
  const id = generateKeyPairSync('ed25519');
  const eph = generateKeyPairSync('x25519');
  const identityPublicKey = rawHex(id.publicKey);
  const s = (m: Uint8Array | string) => sign(null, typeof m === 'string' ? Buffer.from(m, 'utf8') : m, id.privateKey).toString('hex');
  return {
    identityPublicKey,
    ephemeralPublicKey: rawHex(eph.publicKey),
    privateKey: id.privateKey,
    sign: s,
    proof: () => s(Buffer.from(identityPublicKey, 'hex')),
  };
}

/** A fresh hub-identity owner key as `POST /hub/register` wants it (contract §2.8): base64 of a raw Ed25519 public key. */
export function hubOwnerKey(): string {
  return Buffer.from(newDeviceKeys().identityPublicKey, 'hex').toString('base64');
}

/**
 * Weak keys (RFC 8032, RFC 7748): the Ed25519 identity point (small order, `01 00…00`), and the
 * "universal" signature (R = identity, S = 0) that verifies for every message under it; X25519
 * u-coordinates of low order (0, 1, a point of order 8) that make every shared secret zero.
 */
export const SMALL_ORDER_ED25519 = '01' + '00'.repeat(31);
export const UNIVERSAL_SIGNATURE = '01' + '00'.repeat(63);
export const LOW_ORDER_X25519 = ['00'.repeat(32), '01' + '00'.repeat(31), 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800'];
