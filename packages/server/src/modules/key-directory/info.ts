/**
 * `GET /key-directory` (design §8.39): what a client pins to verify the directory — the checkpoint
 * origin `<host>/keys`, the platform keys that sign its checkpoints (the audit log's key and the
 * previous ones still signing after a rotation), the VRF public key, and the witness policy of the
 * caller's tenant.
 */
import { VRF_SUITE, type KeyDirectoryInfo } from '@parley/protocol';
import type { AuditLogKeys } from '../../keys/index.js';

/** The witnesses a tenant trusts (C2SP vkeys) and how many of their cosignatures a checkpoint needs. */
export interface WitnessPolicy {
  witnesses: string[];
  min_cosignatures: number;
}

export class KeyDirectoryInfoService {
  constructor(
    private readonly keys: AuditLogKeys,
    private readonly vrfPublicKey: Uint8Array,
    private readonly witnessPolicy: (tenantId: string) => Promise<WitnessPolicy>,
  ) {}

  /** The pinned facts for a caller of `tenantId`. */
  async info(tenantId: string): Promise<KeyDirectoryInfo> {
    const [{ previous, ...active }, signer, policy] = await Promise.all([this.keys.info(), this.keys.signer(), this.witnessPolicy(tenantId)]);
    return {
      origin: `${signer.host}/keys`,
      log_keys: [active, ...previous],
      vrf_suite: VRF_SUITE,
      vrf_public_key: Buffer.from(this.vrfPublicKey).toString('hex'),
      ...policy,
    };
  }
}
