/**
 * A signed audit log for the web app's tests (design §8.33): checkpoints of the Certificate
 * Transparency reference tree (the SDK's test fixtures/rfc6962.ts), signed as C2SP notes by a
 * test key, and the key's `GET /audit/log-key` answer.
 */
import { bytesToBase64, concatBytes, ed25519Keygen, ed25519Sign, formatVkey, noteKeyId, utf8Encode, type AuditCheckpoint, type AuditConsistencyProof, type AuditLogKey } from '@parley/sdk';
import { CT_CONSISTENCY, CT_ROOTS } from '@parley/sdk/testing';

const b64 = (hex: string) => bytesToBase64(Uint8Array.from(Buffer.from(hex, 'hex')));

const PROOFS = new Map(CT_CONSISTENCY.map((v) => [`${v.first}:${v.second}`, v.proof]));

export const TENANT = '00000000-0000-4000-8000-0000000000e1';
const HOST = 'parley.test';

/** A log key: its vkey and a signer of checkpoints of the reference tree. */
export function logKey() {
  const { publicKey, secretKey } = ed25519Keygen();
  const name = `${HOST}/audit-log`;
  const keyId = noteKeyId(name, publicKey);
  const id = Uint8Array.of(keyId >>> 24, (keyId >>> 16) & 0xff, (keyId >>> 8) & 0xff, keyId & 0xff);
  return {
    vkey: formatVkey(name, publicKey),
    /** The signed checkpoint of the reference tree at `size` (a forged `rootHex` when given). */
    checkpoint(size: number, rootHex = CT_ROOTS[size - 1]!): AuditCheckpoint {
      const created_at = '2026-03-01T12:00:00.000Z';
      const text = `${HOST}/audit/${TENANT}\n${size}\n${b64(rootHex)}\ntimestamp ${created_at}\n`;
      const sig = ed25519Sign(utf8Encode(text), secretKey);
      return { tree_size: size, root_hash: b64(rootHex), created_at, checkpoint: `${text}\n— ${name} ${bytesToBase64(concatBytes(id, sig))}\n` };
    },
  };
}

export const consistency = (first: number, second: number): AuditConsistencyProof => ({ first, second, proof: (PROOFS.get(`${first}:${second}`) ?? []).map(b64) });

export const keyAnswer = (vkey: string, previous: string[] = []): AuditLogKey => ({ key_name: `${HOST}/audit-log`, public_key: '00'.repeat(32), vkey, previous: previous.map((v) => ({ key_name: `${HOST}/audit-log`, public_key: '00'.repeat(32), vkey: v })) });
