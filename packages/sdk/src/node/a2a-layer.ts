/**
 * The A2A layer of a running agent (`runtime.ts` API-key agents, `agent.ts` enrolled devices): a
 * messenger of its own and {@link SecureChannels} on the agent's socket.
 */
import type { ParleyClient } from '../client/rest.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import type { RealtimeClient } from '../realtime/client.js';
import type { FrameTap } from '../realtime/frames.js';
import { SecureChannels } from '../secure/a2a.js';
import { SecureMessenger } from '../secure/messenger.js';
import type { SharedPrekeys } from '../secure/types.js';
import type { SessionStore } from '../storage.js';

/**
 * The A2A layer of a device: a messenger of its own (`a2a-<device_id>`) and {@link SecureChannels}
 * attached to the socket. With `mls` the messenger has MLS on and publishes the device's MLS
 * KeyPackages (`start()` tops them up), so channels asked for with `mls` get an MLS session when
 * the peer has KeyPackages too; it must then be the device's only MLS messenger (API-key agents,
 * whose owner conversations stay X3DH + Double Ratchet). Without it (enrolled devices, whose
 * conversation messenger publishes the KeyPackages) channels are X3DH + Double Ratchet.
 */
export async function openChannelLayer(options: {
  identity: DeviceIdentity;
  store: SessionStore;
  client: ParleyClient;
  realtime: RealtimeClient;
  tap: FrameTap;
  auth: 'api_key' | 'device';
  log: (line: string) => void;
  /** MLS sessions for channels (see above). Default false. */
  mls?: boolean;
  /** Refuse classical sessions (`SecureMessengerOptions.requirePostQuantum`). */
  requirePostQuantum?: boolean;
  /** The device's prekeys, held by its main messenger (`SecureMessenger.prekeySharing()`). */
  prekeysFrom?: SharedPrekeys;
}): Promise<{ channels: SecureChannels; messenger: SecureMessenger }> {
  const deviceId = options.identity.deviceId!;
  const messenger = await SecureMessenger.open({
    identity: options.identity,
    store: options.store,
    storeKey: `a2a-${deviceId}`,
    // The service keeps one prekey directory per device, held by the device's main messenger.
    ...(options.prekeysFrom ? { prekeysFrom: options.prekeysFrom } : {}),
    ...(options.mls ? { client: options.client, mls: true } : { mls: false }),
    ...(options.requirePostQuantum ? { requirePostQuantum: true } : {}),
  });
  const channels = await SecureChannels.open({ messenger, store: options.store, client: options.client, auth: options.auth });
  messenger.on('error', (e) => options.log(`warning: a2a ${e.code}: ${e.message}`));
  channels.on('error', (e) => options.log(`warning: a2a: ${e.message}`));
  channels.on('channel', (c) => options.log(`channel ${c.channel_id.slice(0, 8)} with ${c.peer_hub_address}: ${c.open ? 'open' : c.status}`));
  await messenger.start();
  channels.attach(options.realtime, options.tap);
  return { channels, messenger };
}
