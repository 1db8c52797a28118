/**
 * The service's VAPID key (RFC 8292; design §8.36 "Push delivery"): one P-256 key pair that signs
 * every Web Push request, created by the first instance that starts and shared by every other
 * through `platform_keys` (purpose {@link VAPID_KEY_PURPOSE}, the private half sealed with the
 * secrets key as every platform key, keys/platform-keys.ts). Both halves are stored as multibase
 * base64url (`u` + base64url without padding): the public key is the 65-byte uncompressed point,
 * the private key the 32-byte scalar, the forms `web-push` takes.
 */
import webpush from 'web-push';
import type { Db } from '../../db/client.js';
import { loadPlatformKeyRow } from '../../keys/index.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** `platform_keys.purpose` of the VAPID key. */
export const VAPID_KEY_PURPOSE = 'web-push-vapid';

/** The VAPID key and subject, as `web-push`'s `vapidDetails` takes them. */
export interface VapidDetails {
  /** `mailto:` or `https:` contact (the JWT `sub` claim). */
  subject: string;
  /** base64url (no padding) of the uncompressed P-256 point (65 bytes). */
  publicKey: string;
  /** base64url (no padding) of the private scalar (32 bytes). */
  privateKey: string;
}

const MULTIBASE_BASE64URL = 'u';

async function generateVapid(): Promise<{ publicKeyMultibase: string; privateKeyMultibase: string }> {
  const { publicKey, privateKey } = webpush.generateVAPIDKeys();
  return { publicKeyMultibase: MULTIBASE_BASE64URL + publicKey, privateKeyMultibase: MULTIBASE_BASE64URL + privateKey };
}

const unwrap = (multibase: string): string => {
  if (!multibase.startsWith(MULTIBASE_BASE64URL)) throw new Error('VAPID key is not multibase base64url');
  return multibase.slice(1);
};

/**
 * The shared VAPID key, created when the database has none (concurrent first starts agree on one).
 * @throws when the stored key is sealed under no key of `box`, or is not multibase base64url.
 */
export async function loadVapidKey(db: Db, box: SecretBox, subject: string): Promise<VapidDetails> {
  const row = await loadPlatformKeyRow(db, box, VAPID_KEY_PURPOSE, undefined, generateVapid);
  return { subject, publicKey: unwrap(row.publicKeyMultibase), privateKey: unwrap(row.privateKeyMultibase) };
}
