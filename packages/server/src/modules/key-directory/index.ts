/**
 * Key transparency (design §8.39): the area's public surface. The areas that store keys a client
 * will trust (devices, API-key client keys, prekeys, `did:hub` documents) commit them with
 * {@link KeyDirectory.publish} in their own transaction; the labels and values are
 * `@parley/protocol`'s (key-directory/labels.ts).
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { AuditLogKeys } from '../../keys/index.js';
import { KeyDirectoryInfoService, type WitnessPolicy } from './info.js';
import { KeyDirectoryReports } from './reports.js';
import { keyDirectoryRoutes } from './routes.js';
import { KeyDirectory } from './service.js';
import { DirectoryVrf } from './vrf-key.js';

export type { KeyBinding, KeyDirectory } from './service.js';
export { deviceBinding, prekeyBindings } from './bindings.js';
export type { WitnessPolicy } from './info.js';
export { WitnessPublisher } from './witnesses.js';

/** The key directory area and the directory other areas publish to. */
export interface KeyDirectoryArea extends Area {
  directory: KeyDirectory;
}

/** Loads (or creates) the VRF key and the log key, and the directory's entries so far. */
export async function createKeyDirectory(
  d: Pick<Platform, 'db' | 'secrets' | 'config' | 'keyRefreshMs' | 'notifier'> & { witnessPolicy: (tenantId: string) => Promise<WitnessPolicy> },
): Promise<KeyDirectoryArea> {
  const keys = new AuditLogKeys(d.db, d.secrets, d.config.publicUrl, d.keyRefreshMs);
  await keys.init();
  const vrf = await DirectoryVrf.load(d.db, d.secrets);
  const directory = new KeyDirectory(d.db, vrf, keys);
  await directory.sync();
  const info = new KeyDirectoryInfoService(keys, vrf.publicKey, d.witnessPolicy);
  const reports = new KeyDirectoryReports(d.db, d.notifier);
  return {
    directory,
    async routes(app) {
      await app.register(keyDirectoryRoutes, { prefix: API_PREFIX, directory, info, reports });
    },
  };
}
