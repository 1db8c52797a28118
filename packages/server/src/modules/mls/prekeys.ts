/**
 * X25519 prekey bundles of X3DH (Signal, revision 1): a device publishes its signed prekey SPK_B
 * with Sig(IK_B, Encode(SPK_B)) (replacing the previous one: only the newest is served; the device
 * keeps older private keys for its own grace period) and batches of one-time prekeys OPK_B
 * (X3DH §3.2). A peer about to start a session claims the bundle (X3DH §3.3): the signed prekey and
 * the oldest unclaimed one-time prekey, which is consumed in the same transaction and never handed
 * out again (X3DH §3.2: "the server deletes the one-time prekey"; here it is marked claimed).
 *
 * Stored in the PQ prekey table as kind `x25519` and served as opaque bytes: the service checks
 * encodings and that each public key is a usable X25519 key (RFC 7748, not of low order), never the
 * signature (the claimer verifies it against the identity key it already holds; a forged one makes
 * the claimer abort, X3DH §3.3). Who may claim is the PQ prekeys' rule (prekey-directory.ts); across
 * tenants the bundle carries no one-time prekey. 404 when the device published no signed prekey
 * (an older client).
 */
import { randomUUID } from 'node:crypto';
import { MAX_ONE_TIME_PREKEYS_AVAILABLE, type PrekeyBundle, type PrekeyCount, type PublishPrekeysRequest } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { prekeyBindings, type KeyDirectory } from '../key-directory/index.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { isX25519PublicKey } from '../../lib/public-keys.js';
import { getDevice } from '../devices/index.js';
import * as repo from './prekeys-repo.js';
import { blob, claimableDevice, distinctKeyIds } from './prekey-directory.js';

/** Bytes of an X25519 public key and of an Ed25519 signature. */
const KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;

/** Decode a base64 X25519 public key; 400 naming `what` unless it is a usable key (RFC 7748). */
function x25519Key(b64: string, what: string): Buffer {
  const key = blob(b64, KEY_BYTES, what);
  if (!isX25519PublicKey(key)) throw badRequest(`${what} must be a valid X25519 public key: 32 bytes, not of low order`);
  return key;
}

export class PrekeyService {
  constructor(
    private readonly db: Db,
    private readonly directory: KeyDirectory,
  ) {}

  /**
   * Publish X3DH prekeys of `deviceId`: `signed_prekey` replaces the served one, `one_time` are
   * added. 400 when neither is given, for bad encodings or keys, a signature that is not 64 bytes,
   * repeated key ids, or more than {@link MAX_ONE_TIME_PREKEYS_AVAILABLE} unclaimed one-time
   * prekeys in total.
   */
  publish(tenantId: string, deviceId: string, body: PublishPrekeysRequest): Promise<PrekeyCount> {
    const oneTime = body.one_time ?? [];
    const spk = body.signed_prekey;
    if (spk === undefined && oneTime.length === 0) throw badRequest('give signed_prekey, one_time or both');
    distinctKeyIds([spk, ...oneTime].filter((p) => p !== undefined).map((p) => p.key_id));
    const base = { tenantId, deviceId };
    const signed = spk && {
      ...base,
      id: randomUUID(),
      keyId: spk.key_id,
      publicKey: x25519Key(spk.public_key, 'signed_prekey.public_key'),
      signature: blob(spk.signature, SIGNATURE_BYTES, 'signed_prekey.signature'),
    };
    if (signed && signed.signature.length !== SIGNATURE_BYTES) throw badRequest(`signed_prekey.signature must be ${SIGNATURE_BYTES} bytes`);
    const rows = oneTime.map((p, i) => ({ ...base, id: randomUUID(), keyId: p.key_id, publicKey: x25519Key(p.public_key, `one_time[${i}].public_key`), signature: null }));
    return withTenant(this.db, tenantId, async (tx) => {
      const before = await repo.holdings(tx, 'x25519', deviceId);
      if (before.oneTime + rows.length > MAX_ONE_TIME_PREKEYS_AVAILABLE) {
        throw badRequest(`a device holds at most ${MAX_ONE_TIME_PREKEYS_AVAILABLE} unclaimed one-time prekeys (has ${before.oneTime})`);
      }
      if (signed) await repo.replaceLastResort(tx, 'x25519', signed);
      if (rows.length > 0) await repo.insertOneTime(tx, 'x25519', rows);
      await this.directory.publish(tx, prekeyBindings('x25519', deviceId, signed, rows));
      return { device_id: deviceId, signed_prekey_key_id: signed?.keyId ?? before.lastResortKeyId, one_time_available: before.oneTime + rows.length };
    });
  }

  /** The signed prekey id served for a device of the tenant and its unclaimed one-time prekeys; 404 for a device the tenant does not have. */
  holdings(tenantId: string, deviceId: string): Promise<PrekeyCount> {
    return withTenant(this.db, tenantId, async (tx) => {
      if (!(await getDevice(tx, deviceId))) throw notFound('device');
      const h = await repo.holdings(tx, 'x25519', deviceId);
      return { device_id: deviceId, signed_prekey_key_id: h.lastResortKeyId, one_time_available: h.oneTime };
    });
  }

  /**
   * Claim the prekey bundle of `deviceId` for `claimedBy` (see the file comment for who may): the
   * signed prekey and one one-time prekey (consumed) while any is left, none across tenants.
   * @throws 404 for a device the caller may not claim, or one that published no signed prekey.
   */
  claim(tenantId: string, deviceId: string, claimedBy: string): Promise<PrekeyBundle> {
    return withTenant(this.db, tenantId, async (tx) => {
      const { crossTenant } = await claimableDevice(tx, tenantId, deviceId, claimedBy);
      const spk = await repo.lastResort(tx, 'x25519', deviceId);
      if (!spk?.signature) throw notFound('signed prekey for this device (it published none)');
      const otpk = crossTenant ? undefined : await repo.claimOneTime(tx, 'x25519', deviceId, claimedBy);
      return {
        device_id: deviceId,
        signed_prekey: { key_id: spk.keyId, public_key: spk.publicKey.toString('base64'), signature: spk.signature.toString('base64') },
        one_time_prekey: otpk ? { key_id: otpk.keyId, public_key: otpk.publicKey.toString('base64') } : null,
      };
    });
  }
}
