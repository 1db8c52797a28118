/**
 * Developer key tools for the README tour (the SDK replaces them for real clients): generate an
 * Ed25519 identity key and an X25519 ephemeral key as raw hex, and sign with the identity key.
 * Built on node:crypto only.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

const rawPublic = (k: KeyObject) => Buffer.from(k.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
const rawPrivate = (k: KeyObject) => Buffer.from(k.export({ format: 'jwk' }).d!, 'base64url').toString('hex');

/** PKCS#8 DER prefix of an Ed25519 private key (RFC 8410), followed by the 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface GeneratedKeys {
  identity_public_key: string;
  identity_private_key: string;
  ephemeral_public_key: string;
  ephemeral_private_key: string;
}

export function generateKeys(): GeneratedKeys {
  const id = generateKeyPairSync('ed25519');
  const eph = generateKeyPairSync('x25519');
  return {
    identity_public_key: rawPublic(id.publicKey),
    identity_private_key: rawPrivate(id.privateKey),
    ephemeral_public_key: rawPublic(eph.publicKey),
    ephemeral_private_key: rawPrivate(eph.privateKey),
  };
}

/** Ed25519 signature (hex) by a 32-byte private seed (hex) over `message`. */
export function signHex(privateSeedHex: string, message: Uint8Array): string {
  if (!/^[0-9a-fA-F]{64}$/.test(privateSeedHex)) throw new Error('the key must be 64 hex characters (32-byte Ed25519 seed)');
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(privateSeedHex, 'hex')]), format: 'der', type: 'pkcs8' });
  return sign(null, message, key).toString('hex');
}
