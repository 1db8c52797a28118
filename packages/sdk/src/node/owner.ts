/**
 * `connectOwner`: an owner device in a Node process (a script, a test, a back office) that talks
 * to the owner's agents end to end, as the owners' web app does in the browser.
 *
 * - Keys: the owner device's keys are made here and kept in a state directory sealed at rest
 *   (`state-store.ts`: `identity.json`, and the messenger state `secure-<device_id>.json`). The
 *   first run registers the device (`POST /devices/register` with a key binding,
 *   `client/key-binding.ts`); later runs reuse it while the service lists it as an ACTIVE owner
 *   device, and register a new one (fresh session state) otherwise.
 * - Conversations: the service gives every owner device a conversation with every agent
 *   (docs/architecture.md); `relink` repairs missing ones at every start.
 * - Messages: a {@link SecureMessenger} (MLS when the agent supports it, else X3DH + Double
 *   Ratchet) sending over REST (`POST /conversations/{id}/messages`, owner JWT + `X-Device-Id`)
 *   and receiving over the owner's WebSocket, with catch-up per conversation.
 *
 * The owner JWT comes from the tenant's identity provider (with the built-in development one:
 * `npm run -s cli -- owner-token --sub you@example.com`); the owner must belong to a tenant
 * (signing in to the web app once creates it).
 */
import type { Conversation } from '@parley/protocol';
import { registerOwnerDeviceBound } from '../client/key-binding.js';
import { ParleyClient, type FetchLike, type TokenSource } from '../client/rest.js';
import type { Content } from '../content/types.js';
import { DeviceIdentity } from '../crypto/keys.js';
import { conversationCatchUp } from '../realtime/catch-up.js';
import { RealtimeClient } from '../realtime/client.js';
import type { WebSocketLikeConstructor } from '../realtime/types.js';
import { SecureMessenger } from '../secure/messenger.js';
import { ownerPeerResolver, restTransport } from '../secure/transport.js';
import type { SecureMessage } from '../secure/types.js';
import { IDENTITY_KEY } from './agent.js';
import { openAgentStore, type StateStore, type StateStoreOptions } from './state-store.js';
import { nodeWebSocket } from './ws.js';

/** Options of {@link connectOwner}. */
export interface ConnectOwnerOptions extends StateStoreOptions {
  /** Service base URL, e.g. `http://127.0.0.1:8080`. */
  server: string;
  /** The owner JWT (or a function answering the current one). */
  ownerToken: TokenSource;
  /** Where the owner device's keys and sessions are kept (created 0700 when missing). */
  stateDir: string;
  /** Name of the owner device at its registration (default `node owner client`). */
  name?: string;
  /** WebSocket implementation (default: the `ws` package). */
  WebSocket?: WebSocketLikeConstructor;
  /** Custom fetch (tests). */
  fetch?: FetchLike;
}

/** A connected owner device (see the file comment). */
export interface OwnerClient {
  /** REST client acting as the owner, with this device as `X-Device-Id`. */
  client: ParleyClient;
  /** This owner device's id. */
  deviceId: string;
  /** Fingerprint of this device's identity key (what its agents see). */
  fingerprint: string;
  /** The end-to-end messenger (`send`, `sendText`, the `message` event). */
  messenger: SecureMessenger;
  /** The owner's WebSocket (owner events such as `device_pending`, `device_linked`). */
  realtime: RealtimeClient;
  store: StateStore;
  /** This device's conversations, one per agent. */
  conversations(): Promise<Conversation[]>;
  /**
   * The conversation with an ACTIVE agent: the one whose device id or name is `agent`, or, when
   * omitted, the most recently enrolled one. @throws Error when there is none.
   */
  conversationWith(agent?: string): Promise<string>;
  /**
   * Send `content` (a string is sent as `text`) in a conversation and resolve with the next message
   * the agent sends there (waiting from before the send, so a fast answer is not missed).
   * @throws SecureMessengerError or ParleyApiError from the send; Error after `timeoutMs` (default 60 000).
   */
  ask(conversationId: string, content: string | Content, options?: { timeoutMs?: number }): Promise<SecureMessage>;
  /** Close the socket and wait until the messenger settled. */
  close(): Promise<void>;
}

/** The owner device of the state directory, registered anew when missing or no longer ACTIVE. */
async function ownerDevice(client: ParleyClient, store: StateStore, name: string): Promise<DeviceIdentity> {
  const text = await store.load(IDENTITY_KEY);
  const saved = text === undefined ? undefined : DeviceIdentity.fromJSON(text);
  if (saved?.deviceId) {
    const listed = (await client.listDevices()).devices.find((d) => d.device_id === saved.deviceId);
    if (listed?.kind === 'owner' && listed.status === 'ACTIVE') return saved;
  }
  const fresh = DeviceIdentity.generate();
  const keys = { identityPublicKey: fresh.identityPublicKeyHex, ephemeralPublicKey: fresh.ephemeralPublicKeyHex, sign: (m: Uint8Array) => fresh.sign(m) };
  const registered = await registerOwnerDeviceBound(client, keys, { name, platform: `node ${process.version}` });
  const identity = fresh.withDeviceId(registered.device_id);
  await store.save(IDENTITY_KEY, JSON.stringify(identity));
  return identity;
}

/**
 * Connect an owner device (see the file comment): load or register it, open its messenger and
 * socket. Resolves once the socket is open.
 * @throws ParleyApiError (401 bad owner JWT, 403 the owner belongs to no tenant), SealedStoreError,
 *   RealtimeError when the socket cannot open.
 */
export async function connectOwner(options: ConnectOwnerOptions): Promise<OwnerClient> {
  const client = new ParleyClient({ baseUrl: options.server, ownerToken: options.ownerToken, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const store = await openAgentStore(options.stateDir, options);
  const identity = await ownerDevice(client, store, options.name ?? 'node owner client');
  const deviceId = identity.deviceId!;
  client.setOwnerDeviceId(deviceId);
  await client.relinkDevice(deviceId);
  const conversations = async () => (await client.listConversations({ device_id: deviceId })).conversations;

  // The one messenger of this device receives every initial message to it: it keeps the prekeys.
  const messenger = await SecureMessenger.open({ identity, store, client, resolvePeer: ownerPeerResolver(client, deviceId), transport: restTransport(client, deviceId), prekeys: true });
  const sources = (await conversations()).map((c) => conversationCatchUp(client, c.conversation_id));
  const realtime = new RealtimeClient({ url: client.baseUrl, token: options.ownerToken, deviceId, WebSocket: options.WebSocket ?? nodeWebSocket(), catchUp: sources, initialCursors: messenger.initialCursors(sources) });
  messenger.attach(realtime, { transport: false });
  realtime.on('event', (e) => {
    const linked = e.event === 'device_linked' ? (e.data as { conversation_id?: string } | undefined)?.conversation_id : undefined;
    if (linked) realtime.addCatchUp(conversationCatchUp(client, linked));
  });
  await messenger.start();
  await realtime.connect();

  const conversationWith = async (agent?: string) => {
    const agents = (await client.listDevices()).devices.filter((d) => d.kind === 'agent' && d.status === 'ACTIVE' && (agent === undefined || d.device_id === agent || d.name === agent));
    const mine = await conversations();
    const newest = agents.sort((a, b) => b.enrolled_at.localeCompare(a.enrolled_at)).find((d) => mine.some((c) => c.agent_device_id === d.device_id));
    if (!newest) throw new Error(agent === undefined ? 'no ACTIVE agent yet: invite one and approve it' : `no ACTIVE agent named ${agent}`);
    return mine.find((c) => c.agent_device_id === newest.device_id)!.conversation_id;
  };

  const ask = async (conversationId: string, content: string | Content, opts: { timeoutMs?: number } = {}) => {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    let off: () => void = () => undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answer = new Promise<SecureMessage>((resolve, reject) => {
      off = messenger.on('message', (m) => {
        if (m.conversation_id === conversationId && m.sender_device_id !== deviceId && m.room_id === undefined) resolve(m);
      });
      timer = setTimeout(() => reject(new Error(`no answer in conversation ${conversationId} within ${timeoutMs} ms`)), timeoutMs);
    });
    answer.catch(() => undefined); // awaited below; a timeout during the send is not unhandled
    try {
      await (typeof content === 'string' ? messenger.sendText(conversationId, content) : messenger.send(conversationId, content));
      return await answer;
    } finally {
      off();
      clearTimeout(timer);
    }
  };

  return {
    client,
    deviceId,
    fingerprint: identity.fingerprint,
    messenger,
    realtime,
    store,
    conversations,
    conversationWith,
    ask,
    close: async () => {
      realtime.close('owner client closed');
      await messenger.close();
    },
  };
}
