/**
 * The key directory's VRF key (design §8.39; RFC 9381 ECVRF-EDWARDS25519-SHA512-TAI): one Ed25519
 * seed in `platform_keys` (purpose `key-directory-vrf`, private half sealed with the secrets key),
 * created by the first instance that starts and shared by all. It is never rotated: a new key would
 * move every label to another index (a new directory).
 */
import { keyDirectoryHashing, vrfInputOf, vrfProofToHash, vrfProve, vrfPublicKey } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { BoundedCache } from '../../lib/bounded-cache.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { decodePrivateKeyMultibase, loadPlatformKeyRow } from '../../keys/index.js';
import { sha256 } from './log-tree.js';

const hashing = keyDirectoryHashing(sha256);

/** `platform_keys.purpose` of the VRF key. */
export const VRF_KEY_PURPOSE = 'key-directory-vrf';

/** A label's VRF proof (80 bytes, of its VRF input: `vrfInputOf`) and its index. */
export interface LabelIndex {
  proof: Buffer;
  index: Buffer;
}

export class DirectoryVrf {
  /** VRF proofs and outputs by VRF input, which never change for one key (a proof costs a few milliseconds). */
  private readonly cache = new BoundedCache<{ proof: Buffer; output: Uint8Array }>(50_000);

  private constructor(
    private readonly seed: Uint8Array,
    /** The VRF public key (32 bytes). */
    readonly publicKey: Uint8Array,
  ) {}

  /** Load (or create, once for all instances) the VRF key. @throws when it cannot be read, created or opened. */
  static async load(db: Db, box: SecretBox): Promise<DirectoryVrf> {
    const row = await loadPlatformKeyRow(db, box, VRF_KEY_PURPOSE);
    const seed = decodePrivateKeyMultibase(row.privateKeyMultibase);
    return new DirectoryVrf(seed, vrfPublicKey(seed));
  }

  /** The VRF proof and index of `label` (`@parley/protocol` key-directory/labels.ts). */
  of(label: string): LabelIndex {
    const { vrfLabel, subKey } = vrfInputOf(label);
    let hit = this.cache.get(vrfLabel);
    if (!hit) {
      const proof = Buffer.from(vrfProve(this.seed, new TextEncoder().encode(vrfLabel)));
      hit = { proof, output: vrfProofToHash(proof) };
      this.cache.set(vrfLabel, hit);
    }
    return { proof: hit.proof, index: Buffer.from(hashing.labelIndex(hit.output, subKey)) };
  }
}
