/**
 * Cluster job: commit to the key directory (design §8.39) every key binding stored before the
 * directory existed, so clients that verify keys keep reaching devices enrolled earlier: each
 * device's identity and X25519 keys, its served signed X3DH and last-resort PQXDH prekeys, its
 * unclaimed one-time prekeys, and the DID keys of hub identities. Publishing is idempotent (a
 * label whose current value is already the stored one gets no new entry), so the job is safe to
 * run again; it runs at the first poll of a cluster and then once a year as a safety net.
 * `scheduled_jobs.last_result` records how many bindings and identities it looked at.
 */
import { isNull } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { devices, hubIdentities, pqPrekeys } from '../db/schema/index.js';
import { crossTenant } from '../db/tenant.js';
import { commitDidKeys } from '../modules/hub/index.js';
import { deviceBinding, prekeyBindings, type KeyBinding, type KeyDirectory } from '../modules/key-directory/index.js';
import { scheduleClusterJob, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the backfill. */
export const KEY_DIRECTORY_BACKFILL_JOB = 'key_directory_backfill';
/** Bindings committed per transaction. */
const BATCH = 200;
const REASON = 'key directory backfill: every stored key binding, across tenants';

/** The stored bindings of every device not deleted (keys, served signed prekeys, unclaimed one-time prekeys). */
async function storedBindings(db: Db): Promise<KeyBinding[]> {
  return crossTenant(db, REASON, async (tx) => {
    const out = (await tx.select({ id: devices.id, identityPublicKey: devices.identityPublicKey, ephemeralPublicKey: devices.ephemeralPublicKey }).from(devices).where(isNull(devices.deletedAt))).map(deviceBinding);
    const prekeys = await tx
      .select({ deviceId: pqPrekeys.deviceId, kind: pqPrekeys.kind, keyId: pqPrekeys.keyId, publicKey: pqPrekeys.publicKey, signature: pqPrekeys.signature, lastResort: pqPrekeys.lastResort })
      .from(pqPrekeys)
      .where(isNull(pqPrekeys.claimedAt));
    for (const p of prekeys) {
      const kind = p.kind === 'x25519' ? 'x25519' : 'pq';
      if (p.lastResort && p.signature) out.push(...prekeyBindings(kind, p.deviceId, p, []));
      else if (!p.lastResort) out.push(...prekeyBindings(kind, p.deviceId, undefined, [p]));
    }
    return out;
  });
}

/** Run the backfill once. @returns how many device and prekey bindings and hub identities were looked at. */
export async function backfillKeyDirectory(db: Db, directory: KeyDirectory): Promise<{ bindings: number; identities: number }> {
  const bindings = await storedBindings(db);
  for (let i = 0; i < bindings.length; i += BATCH) {
    await crossTenant(db, REASON, (tx) => directory.publish(tx, bindings.slice(i, i + BATCH)));
  }
  const identities = await crossTenant(db, REASON, (tx) => tx.select({ id: hubIdentities.id }).from(hubIdentities));
  for (let i = 0; i < identities.length; i += BATCH) {
    await crossTenant(db, REASON, async (tx) => {
      for (const { id } of identities.slice(i, i + BATCH)) await commitDidKeys(tx, directory, id);
    });
  }
  return { bindings: bindings.length, identities: identities.length };
}

/** Schedule the backfill across the cluster: due at the first poll, then yearly. Returns `stop()`. */
export function scheduleKeyDirectoryBackfill(o: Omit<PeriodicJobOptions, 'intervalMs'> & { directory: KeyDirectory }): () => Promise<void> {
  return scheduleClusterJob({
    db: o.db,
    name: KEY_DIRECTORY_BACKFILL_JOB,
    intervalMs: 365 * 86_400_000,
    pollMs: o.pollMs,
    onError: o.onError,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.instanceId ? { instanceId: o.instanceId } : {}),
    run: () => backfillKeyDirectory(o.db, o.directory),
  });
}
