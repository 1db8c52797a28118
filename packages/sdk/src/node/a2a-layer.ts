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
import type { SessionStore } from '../storage.js';

/**
 * The A2A layer of a device: a messenger of its own (`a2a-<device_id>`, X3DH + Double Ratchet)
 * and {@link SecureChannels} attached to the socket.
 */
export async function openChannelLayer(options: {
  identity: DeviceIdentity;
  store: SessionStore;
  client: ParleyClient;
  realtime: RealtimeClient;
  tap: FrameTap;
  auth: 'api_key' | 'device';
  log: (line: string) => void;
}): Promise<{ channels: SecureChannels; messenger: SecureMessenger }> {
  const deviceId = options.identity.deviceId!;
  const messenger = await SecureMessenger.open({ identity: options.identity, store: options.store, storeKey: `a2a-${deviceId}`, mls: false });
  const channels = await SecureChannels.open({ messenger, store: options.store, client: options.client, auth: options.auth });
  messenger.on('error', (e) => options.log(`warning: a2a ${e.code}: ${e.message}`));
  channels.on('error', (e) => options.log(`warning: a2a: ${e.message}`));
  channels.on('channel', (c) => options.log(`channel ${c.channel_id.slice(0, 8)} with ${c.peer_hub_address}: ${c.open ? 'open' : c.status}`));
  await messenger.start();
  channels.attach(options.realtime, options.tap);
  return { channels, messenger };
}
