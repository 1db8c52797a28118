/**
 * Key material a {@link SecureMessenger} (`messenger.ts`) keeps published on the service: its
 * signed PQ prekey (PQXDH, design §8.34; `post-quantum.ts`), its X25519 signed and one-time
 * prekeys (X3DH rev. 1 §3.2; `prekeys.ts`) and its MLS KeyPackages (RFC 9420 §10), one stock per
 * ciphersuite. New private keys are saved under the messenger's lock before anything is published.
 * Also the sharing of this device's prekeys with a second messenger of the device.
 */
import { ParleyApiError } from '../client/errors.js';
import type { ParleyClient } from '../client/rest.js';
import type { PrekeyStore } from '../crypto/prekeys.js';
import { bytesToBase64 } from '../mls/base64.js';
import { ciphersuiteId } from '../mls/ciphersuites.js';
import type { MessengerCore } from './messenger-core.js';
import { describe, type MessengerHost } from './messenger-host.js';
import { offeredSuites } from './messenger-sessions.js';
import { ensurePqPrekey, keyPackageStock } from './post-quantum.js';
import { ensurePrekeys, speaksPrekeys, type PrekeyUpkeep } from './prekeys.js';
import { SecureMessengerError, type SharedPrekeys } from './types.js';

/**
 * Publish the device's signed PQ prekey unless the service already serves it (`SecureMessenger.ensurePqPrekey`).
 * @throws SecureMessengerError `key_packages` (also reported).
 */
export async function publishPqPrekey(host: MessengerHost): Promise<boolean> {
  const client = host.options.client;
  if (!client) return false;
  try {
    return await ensurePqPrekey(client, host.identity, host.deviceId);
  } catch (err) {
    const e = new SecureMessengerError('key_packages', `publishing the PQ prekey failed: ${describe(err)}`, { cause: err });
    host.report(e);
    throw e;
  }
}

/**
 * Rotate and publish the device's X25519 prekeys as needed (`SecureMessenger.ensurePrekeys`);
 * undefined with `prekeys` off, without a client with the prekey routes, or on an older service.
 * @throws SecureMessengerError `key_packages` (also reported), `stopped`, `persist_failed`.
 */
export async function publishPrekeys(core: MessengerCore, host: MessengerHost): Promise<PrekeyUpkeep | undefined> {
  const client = host.options.client;
  const store = core.prekeys;
  if (host.options.prekeys !== true || !store || !client || !speaksPrekeys(client)) return undefined;
  try {
    return await ensurePrekeys(client, host.identity, host.deviceId, store, () => savePrekeys(core, store));
  } catch (err) {
    if (err instanceof ParleyApiError && (err.status === 404 || err.status === 405)) return undefined;
    const e = err instanceof SecureMessengerError ? err : new SecureMessengerError('key_packages', `publishing the X25519 prekeys failed: ${describe(err)}`, { cause: err });
    if (e.code === 'key_packages') host.report(e);
    throw e;
  }
}

/** Save the state with `store`'s new keys (under the lock); refused once a failed write reloaded the state. */
function savePrekeys(core: MessengerCore, store: PrekeyStore): Promise<void> {
  return core.exclusive(async () => {
    core.ensureRunning();
    if (store !== core.prekeys) throw new SecureMessengerError('stopped', 'the prekey store was reloaded after a failed write');
    await core.persist();
  });
}

/**
 * Top each suite's stock of MLS KeyPackages on the service up to `target` when it fell below `min`
 * (`POST /mls/key-packages`); the private parts are saved first. Answers how many were published.
 * @throws SecureMessengerError `key_packages` (also reported), `stopped`, `persist_failed`.
 */
export async function publishKeyPackages(core: MessengerCore, host: MessengerHost, client: ParleyClient, min: number, target: number): Promise<number> {
  try {
    // One stock per suite: hybrid X-Wing KeyPackages only where the service labels suites.
    const stock = keyPackageStock(await client.keyPackageCount(host.deviceId, { deviceId: host.deviceId }), await offeredSuites(host));
    let published = 0;
    for (const [suite, available] of stock) {
      if (available >= min) continue;
      const count = target - available;
      const packages = await core.exclusive(async () => {
        core.ensureRunning();
        const kps = await core.mls!.generateKeyPackages(count, suite);
        await core.persist();
        return kps;
      });
      await client.publishKeyPackages({ key_packages: packages.map(bytesToBase64), cipher_suite: ciphersuiteId(suite) }, { deviceId: host.deviceId });
      published += count;
    }
    return published;
  } catch (err) {
    const e = err instanceof SecureMessengerError ? err : new SecureMessengerError('key_packages', `publishing MLS KeyPackages failed: ${describe(err)}`, { cause: err });
    if (e.code === 'key_packages') host.report(e);
    throw e;
  }
}

/** This device's prekeys for a second messenger of the device (`SecureMessenger.prekeySharing`). */
export function prekeySharing(core: MessengerCore, host: MessengerHost): SharedPrekeys {
  return {
    store: () => core.prekeys,
    consume: (keyId) =>
      core.exclusive(async () => {
        if (!core.prekeys?.hasOneTime(keyId)) return;
        core.prekeys.consumeOneTime(keyId);
        await core.persist();
        host.topUpSoon();
      }),
  };
}
