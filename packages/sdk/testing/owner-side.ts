/**
 * The owner's side of a test against a real server: a newly registered owner device of `owner`
 * with a secure messenger (REST sends, peers from `GET /conversations/{id}/keys`) and a socket,
 * collecting decrypted messages and socket events.
 */
import { ParleyClient } from '../src/client/rest.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { RealtimeClient } from '../src/realtime/client.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { ownerPeerResolver, restTransport } from '../src/secure/transport.js';
import type { SecureMessage } from '../src/secure/types.js';
import { MemorySessionStore } from '../src/storage.js';

/** Register an owner device of `owner` (acting device of `owner` from now on) and connect it (see the file comment). */
export async function ownerSide(owner: ParleyClient, ownerJwt: string, baseUrl: string) {
  const keys = DeviceIdentity.generate();
  const od = await owner.registerOwnerDevice(keys.publicKeys);
  owner.setOwnerDeviceId(od.device_id);
  const store = new MemorySessionStore();
  const messenger = await SecureMessenger.open({
    identity: keys.withDeviceId(od.device_id),
    store,
    client: owner,
    resolvePeer: ownerPeerResolver(owner, od.device_id),
    transport: restTransport(owner, od.device_id),
  });
  const received: SecureMessage[] = [];
  messenger.on('message', (m) => void received.push(m));
  const events: { event: string; data: any }[] = [];
  const rt = new RealtimeClient({ url: baseUrl, token: ownerJwt, deviceId: od.device_id, WebSocket: nodeWebSocket() });
  rt.on('event', (e) => events.push(e));
  messenger.attach(rt, { transport: false });
  await messenger.start();
  await rt.connect();
  return { od, store, messenger, received, events, rt };
}
