/**
 * What the key directory holds (design §8.39): the label of every key binding the service serves
 * for session set-up or peer verification, and the value bytes committed for it. A value is the
 * UTF-8 of the RFC 8785 (JCS) serialisation of the binding's fields exactly as the service serves
 * them (keys in lowercase hex as the device directory answers them; prekeys in base64 as the claim
 * answers them), so a client recomputes it from the answer it holds.
 *
 * Labels: `device/<device id>` (identity and X25519 keys; API-key client keys and owner devices
 * are devices too), `device/<id>/signed-prekey` and `device/<id>/pq-prekey` (the served signed
 * X3DH prekey and last-resort PQXDH prekey; a new version on each rotation),
 * `device/<id>/one-time-prekey/<key id>` and `device/<id>/pq-one-time-prekey/<key id>` (one-time
 * prekeys, one version each), `did/<did>` (the verification methods of a `did:hub` document: a
 * new version when one is added). MLS KeyPackages carry the device's identity key as their credential key, which the
 * client checks against the `device/<id>` value.
 *
 * A label's index is the first 32 bytes of the VRF output of the label, except for a device's
 * other labels (its prekeys, which it publishes by the hundred): they share the VRF output of
 * `device/<id>`, and the index of `device/<id>/<rest>` is SHA-256("parley/v1/key-directory/index"
 * || 0x00 || VRF output || rest). One VRF proof then serves a whole session set-up; whoever may
 * look up a device's keys may look up its prekeys too, and one-time prekey ids are random, so the
 * shared output does not let anyone enumerate them.
 */
import { utf8ToBytes } from '@noble/hashes/utils.js';
import canonicalize from 'canonicalize';

/** `device/<id>`: the device's identity (Ed25519) and X25519 keys. */
export const deviceKeysLabel = (deviceId: string): string => `device/${deviceId}`;
/** `device/<id>/signed-prekey`: the signed X3DH prekey served for the device. */
export const signedPrekeyLabel = (deviceId: string): string => `device/${deviceId}/signed-prekey`;
/** `device/<id>/pq-prekey`: the last-resort PQXDH prekey served for the device. */
export const pqPrekeyLabel = (deviceId: string): string => `device/${deviceId}/pq-prekey`;
/** `device/<id>/one-time-prekey/<key id>`: one one-time X3DH prekey. */
export const oneTimePrekeyLabel = (deviceId: string, keyId: string): string => `device/${deviceId}/one-time-prekey/${keyId}`;
/** `device/<id>/pq-one-time-prekey/<key id>`: one one-time PQXDH prekey. */
export const pqOneTimePrekeyLabel = (deviceId: string, keyId: string): string => `device/${deviceId}/pq-one-time-prekey/${keyId}`;
/** `did/<did>`: the verification key of a `did:hub` document. */
export const didLabel = (did: string): string => `did/${did}`;

/**
 * What goes through the VRF for `label` and what then derives its index: the label itself, or
 * for a device's other labels `device/<id>` and the rest of the label (see the file comment).
 */
export function vrfInputOf(label: string): { vrfLabel: string; subKey?: string } {
  const m = /^(device\/[^/]+)\/(.+)$/.exec(label);
  return m ? { vrfLabel: m[1]!, subKey: m[2]! } : { vrfLabel: label };
}

/** The device a label belongs to, or undefined for a label of no device. */
export function labelDevice(label: string): string | undefined {
  const m = /^device\/([0-9a-f-]{36})(\/|$)/.exec(label);
  return m?.[1];
}


/** The value bytes of a binding: UTF-8 of JCS over its string fields. */
export function keyDirectoryValue(fields: Readonly<Record<string, string>>): Uint8Array {
  return utf8ToBytes(canonicalize(fields)!);
}

/** The value of `device/<id>`: both keys as lowercase hex. */
export const deviceKeysValue = (k: { identity_public_key: string; ephemeral_public_key: string }): Uint8Array =>
  keyDirectoryValue({ identity_public_key: k.identity_public_key.toLowerCase(), ephemeral_public_key: k.ephemeral_public_key.toLowerCase() });

/** The value of a signed prekey (X3DH or PQXDH last-resort): key id, public key and signature in base64. */
export const signedPrekeyValue = (p: { key_id: string; public_key: string; signature: string }): Uint8Array =>
  keyDirectoryValue({ key_id: p.key_id, public_key: p.public_key, signature: p.signature });

/** The value of a one-time prekey: key id and public key in base64 (and the signature of a PQ one). */
export const oneTimePrekeyValue = (p: { key_id: string; public_key: string; signature?: string }): Uint8Array =>
  keyDirectoryValue(p.signature === undefined ? { key_id: p.key_id, public_key: p.public_key } : { key_id: p.key_id, public_key: p.public_key, signature: p.signature });

/**
 * The value of `did/<did>`: the document's verification methods, each fragment of its `id`
 * (`owner-key`, `key-2`, …) to its `publicKeyMultibase`, as the DID document lists them.
 */
export const didDocumentValue = (methods: readonly { id: string; publicKeyMultibase: string }[]): Uint8Array =>
  keyDirectoryValue(Object.fromEntries(methods.map((m) => [m.id.slice(m.id.indexOf('#') + 1), m.publicKeyMultibase])));
