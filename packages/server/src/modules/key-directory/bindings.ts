/**
 * The key bindings the areas commit (design §8.39), built from what they store, with the labels
 * and values of `@parley/protocol` key-directory/labels.ts (the forms the service answers them in,
 * so a client recomputes each value from the answer it holds).
 */
import { deviceKeysLabel, deviceKeysValue, oneTimePrekeyLabel, oneTimePrekeyValue, pqOneTimePrekeyLabel, pqPrekeyLabel, signedPrekeyLabel, signedPrekeyValue } from '@parley/protocol';
import type { KeyBinding } from './service.js';

/** `device/<id>`: a device's identity and X25519 keys (hex). */
export const deviceBinding = (d: { id: string; identityPublicKey: string; ephemeralPublicKey: string }): KeyBinding => ({
  label: deviceKeysLabel(d.id),
  value: deviceKeysValue({ identity_public_key: d.identityPublicKey, ephemeral_public_key: d.ephemeralPublicKey }),
});

/** A stored prekey row: key id, public key and (signed prekeys) signature bytes. */
export interface PrekeyRow {
  keyId: string;
  publicKey: Buffer;
  signature: Buffer | null;
}

const served = (p: PrekeyRow) => ({ key_id: p.keyId, public_key: p.publicKey.toString('base64'), ...(p.signature ? { signature: p.signature.toString('base64') } : {}) });

/**
 * The bindings of a prekey publish: the served signed prekey (`x25519`: the signed X3DH prekey;
 * `pq`: the last-resort PQXDH prekey) and each one-time prekey.
 */
export function prekeyBindings(kind: 'x25519' | 'pq', deviceId: string, signed: PrekeyRow | undefined, oneTime: readonly PrekeyRow[]): KeyBinding[] {
  const out: KeyBinding[] = [];
  if (signed) {
    const s = served(signed) as { key_id: string; public_key: string; signature: string };
    out.push({ label: kind === 'x25519' ? signedPrekeyLabel(deviceId) : pqPrekeyLabel(deviceId), value: signedPrekeyValue(s) });
  }
  for (const p of oneTime) out.push({ label: kind === 'x25519' ? oneTimePrekeyLabel(deviceId, p.keyId) : pqOneTimePrekeyLabel(deviceId, p.keyId), value: oneTimePrekeyValue(served(p)) });
  return out;
}
