/**
 * A signed audit log for the web app's tests (DESIGN §8.33): checkpoints of the Certificate
 * Transparency reference tree (RFC 6962 test leaves, roots and consistency proofs published with
 * Google's CT and transparency-dev/merkle test suites), signed as C2SP notes by a test key, and a
 * fake REST client serving them.
 */
import { bytesToBase64, concatBytes, ed25519Keygen, ed25519Sign, formatVkey, noteKeyId, utf8Encode } from '@parley/sdk';
import type { AuditCheckpoint, AuditConsistencyProof, AuditLogKey } from '@parley/sdk';

const b64 = (hex: string) => bytesToBase64(Uint8Array.from(Buffer.from(hex, 'hex')));

/** Root of the reference tree of n leaves, n = 1..8. */
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
/** Reference consistency proofs. */
const PROOFS: Record<string, string[]> = {
  '6:8': ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7'],
  '2:5': ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'],
};

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
    checkpoint(size: number, rootHex = ROOTS[size - 1]!): AuditCheckpoint {
      const created_at = '2026-03-01T12:00:00.000Z';
      const text = `${HOST}/audit/${TENANT}\n${size}\n${b64(rootHex)}\ntimestamp ${created_at}\n`;
      const sig = ed25519Sign(utf8Encode(text), secretKey);
      return { tree_size: size, root_hash: b64(rootHex), created_at, checkpoint: `${text}\n— ${name} ${bytesToBase64(concatBytes(id, sig))}\n` };
    },
  };
}

export const consistency = (first: number, second: number): AuditConsistencyProof => ({ first, second, proof: (PROOFS[`${first}:${second}`] ?? []).map(b64) });

export const keyAnswer = (vkey: string, previous: string[] = []): AuditLogKey => ({ key_name: `${HOST}/audit-log`, public_key: '00'.repeat(32), vkey, previous: previous.map((v) => ({ key_name: `${HOST}/audit-log`, public_key: '00'.repeat(32), vkey: v })) });
