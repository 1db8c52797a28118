/**
 * The API-key agent runtime (Node, contract §2.6, §4.19, §5 rule 4, §6.1): an agent the MCP
 * configuration identifies by an API key (`svc_agent_sk_…`) instead of an enrolled device.
 *
 * - Keys: the device keys are generated once and kept in the state directory (`identity.json`,
 *   the same file an enrolled agent uses); `api-agent.json` keeps the server, the API key (a
 *   secret: the directory is 0700, files 0600, sealed unless plain storage was chosen:
 *   `state-store.ts`), the device id it was bound to and the owner conversations from
 *   `client_key_accepted`.
 * - First connection: an unbound key's socket only accepts `client_key_register {identity_public_key,
 *   ephemeral_public_key, signature (Ed25519 by the identity key over its own 32 raw bytes, hex),
 *   platform, key_binding}` (the binding: a fresh signature over a nonce asked with the API key,
 *   client/key-binding.ts); the answer `client_key_accepted {device_id, conversations}` binds the key to these
 *   keys (trust on first use) and the socket then serves as that device. Later connections are
 *   served as the bound device directly. A new API key for the same state directory (after a
 *   rotation) registers the same keys again.
 * - Then: a {@link SecureMessenger} for the owner conversations (X3DH + Double Ratchet) over the
 *   socket, and {@link SecureChannels} on a messenger of their own for A2A channels, with MLS on:
 *   it publishes the device's MLS KeyPackages (with the API key), which the service hands only to
 *   the other party of an approved channel, so channels asked for with `mls` get MLS sessions
 *   when the peer has KeyPackages too (docs/decisions.md "MLS over A2A channels"). The owner
 *   conversations stay X3DH + Double Ratchet: one device has one MLS client. Rooms the device
 *   is a member of run on the owner-conversation messenger (`room-layer.ts`), and an owner device
 *   registered later is registered as a conversation when the service announces it
 *   (`owner-devices.ts`, `owner_device_linked`) and saved in `api-agent.json`. The socket
 *   reconnects with back-off and stays online until the key is revoked (4001), refused
 *   (4003/4401) or `stop()`.
 *
 * Known limit: an API key cannot read `GET /devices/{id}/messages`, so owner-conversation
 * messages sent while the agent was offline are not caught up (A2A channels are, from their
 * history).
 */
import { platform as osPlatform } from 'node:os';
import type { ClientKeyAccepted } from '@parley/protocol';
import { bindKeys } from '../client/key-binding.js';
import { ParleyClient, type FetchLike } from '../client/rest.js';
import { DeviceIdentity } from '../crypto/keys.js';
import { deviceCatchUp } from '../realtime/catch-up.js';
import { RealtimeClient, type ReconnectOptions } from '../realtime/client.js';
import { frameTap, FrameLink } from '../realtime/frames.js';
import type { WebSocketLikeConstructor } from '../realtime/types.js';
import type { SecureChannels } from '../secure/a2a.js';
import { SecureMessenger } from '../secure/messenger.js';
import type { RoomMessenger } from '../secure/rooms.js';
import type { SessionStore } from '../storage.js';
import { AGENT_KEY, AgentStateError, IDENTITY_KEY, stopper, watchConnection, type AgentExit } from './agent.js';
import { openAgentStore, type StateStoreOptions } from './state-store.js';
import type { PluginBackend } from './plugin.js';
import { openChannelLayer } from './a2a-layer.js';
import type { AgentMessageHook } from './message-hook.js';
import { followOwnerDevices } from './owner-devices.js';
import { openRoomLayer } from './room-layer.js';
import { nodeWebSocket } from './ws.js';

/** contract §2.6 / §5 rule 4: `svc_agent_sk_{prod|staging|dev}_` + 64 hex characters. */
export const API_KEY_PATTERN = /^svc_agent_sk_(prod|staging|dev)_[0-9a-f]{64}$/;
/** Store key of the {@link ApiKeyAgentRecord}. */
export const API_AGENT_KEY = 'api-agent';

/** What an API-key agent keeps (`api-agent.json`). The API key is a secret. */
export interface ApiKeyAgentRecord {
  v: 1;
  server: string;
  api_key: string;
  /** The device the key is bound to, once `client_key_accepted` arrived. */
  device_id?: string;
  registered_at?: string;
  conversations?: ClientKeyAccepted['conversations'];
}

/** A running agent (API key or enrolled device) as the plugin and the CLI see it. */
export interface AgentRuntime extends PluginBackend {
  client: ParleyClient;
  /** Resolves once connected (and, for an API key, registered); rejects if the connection ends for good first. */
  ready: Promise<void>;
  /** Resolves when the agent ended (never rejects). */
  done: Promise<AgentExit>;
  stop(): Promise<AgentExit>;
}

/** Options of {@link startApiKeyAgent}. */
export interface StartApiKeyAgentOptions extends StateStoreOptions {
  apiKey: string;
  /** Service base URL. */
  server: string;
  stateDir: string;
  /** contract §4.3 platform sent with the registration (default `node <version> (<os>)`). */
  platform?: string;
  log?: (line: string) => void;
  WebSocket?: WebSocketLikeConstructor;
  reconnect?: ReconnectOptions;
  fetch?: FetchLike;
  /** Give up registering after this many ms (default 30 000). */
  registerTimeoutMs?: number;
  /** Refuse classical end-to-end sessions (`SecureMessengerOptions.requirePostQuantum`). */
  requirePostQuantum?: boolean;
  /** Answer owner-conversation and room messages with this hook (`message-hook.ts`, `run-agent.ts`). */
  messageHook?: AgentMessageHook;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Read the API-key record of a state directory, if any. */
export async function loadApiKeyRecord(store: SessionStore): Promise<ApiKeyAgentRecord | undefined> {
  const text = await store.load(API_AGENT_KEY);
  if (text === undefined) return undefined;
  const r = JSON.parse(text) as ApiKeyAgentRecord;
  if (r?.v !== 1 || typeof r.server !== 'string' || typeof r.api_key !== 'string') throw new AgentStateError(`the ${API_AGENT_KEY} record of the state directory is not a Parley API-key agent record`);
  return r;
}

/**
 * Start an API-key agent (see the file comment): keys from (or into) the state directory, the
 * socket with the API key, registration on first connect, messenger and channels.
 * @throws AgentStateError (malformed key, the directory holds an enrolled device, or the key is
 *   refused); RealtimeError when the registration fails.
 */
export async function startApiKeyAgent(options: StartApiKeyAgentOptions): Promise<AgentRuntime> {
  const log = options.log ?? console.log;
  const pq = options.requirePostQuantum ? { requirePostQuantum: true } : {};
  if (!API_KEY_PATTERN.test(options.apiKey)) throw new AgentStateError('the API key must be svc_agent_sk_{prod|staging|dev}_ followed by 64 hex characters');
  const store = await openAgentStore(options.stateDir, options);
  if ((await store.load(AGENT_KEY)) !== undefined) {
    throw new AgentStateError(`${options.stateDir} holds an enrolled device; run it without --api-key, or use another --state-dir for the API-key agent`);
  }
  const server = options.server.replace(/\/+$/, '');
  const identityText = await store.load(IDENTITY_KEY);
  let identity = identityText === undefined ? DeviceIdentity.generate() : DeviceIdentity.fromJSON(identityText);
  if (identity.pqPrekey === undefined) identity = identity.withPqPrekey(); // saved without a PQ prekey: add the PQXDH prekey
  if (identityText === undefined || identity.toJSON().pq_prekey_seed !== JSON.parse(identityText).pq_prekey_seed) {
    await store.save(IDENTITY_KEY, JSON.stringify(identity)); // durable before the service knows them
  }

  let record: ApiKeyAgentRecord = (await loadApiKeyRecord(store)) ?? { v: 1, server, api_key: options.apiKey };
  if (record.api_key !== options.apiKey || record.server !== server) {
    if (record.device_id) log(`a new API key or server: registering the same device keys again (was device ${record.device_id})`);
    record = { v: 1, server, api_key: options.apiKey };
  }
  await store.save(API_AGENT_KEY, JSON.stringify(record));

  const client = new ParleyClient({ baseUrl: server, apiKey: options.apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const tap = frameTap(options.WebSocket ?? nodeWebSocket());
  // A registered device resumes its owner conversations from the saved cursor (device-wide
  // catch-up, GET /devices/{id}/messages with the API key); a first run has nothing to catch up.
  let opened: SecureMessenger | undefined;
  const catchUp = record.device_id ? deviceCatchUp(client, record.device_id) : undefined;
  if (record.device_id) {
    identity = identity.deviceId === record.device_id ? identity : identity.withDeviceId(record.device_id);
    opened = await SecureMessenger.open({ identity, store, client, mls: false, autoRead: true, prekeys: true, ...pq });
  }
  const realtime = new RealtimeClient({
    url: server,
    token: options.apiKey,
    WebSocket: tap.WebSocket,
    ...(catchUp && opened ? { catchUp, initialCursors: opened.initialCursors(catchUp) } : {}),
    ...(options.reconnect ? { reconnect: options.reconnect } : {}),
  });

  let finish!: (exit: AgentExit) => void;
  const done = new Promise<AgentExit>((resolve) => (finish = resolve));
  let exited: AgentExit | undefined;
  let messenger: SecureMessenger | undefined;
  let channels: SecureChannels | undefined;
  let a2aMessenger: SecureMessenger | undefined;
  let rooms: RoomMessenger | undefined;
  const end = async (exit: AgentExit) => {
    if (exited) return;
    exited = exit;
    await channels?.close().catch(() => undefined);
    await rooms?.close().catch(() => undefined);
    await a2aMessenger?.close().catch(() => undefined);
    await messenger?.close().catch(() => undefined);
    finish(exit);
  };
  watchConnection(realtime, log, (exit) => void end(exit));
  followOwnerDevices(realtime, {
    messenger: () => messenger,
    save: async (d) => {
      const link = { conversation_id: d.conversation_id, peer_device_id: d.owner_device_id, peer_identity_public_key: d.identity_public_key, peer_ephemeral_public_key: d.ephemeral_public_key };
      record = { ...record, conversations: [...(record.conversations ?? []).filter((c) => c.conversation_id !== d.conversation_id), link] };
      await store.save(API_AGENT_KEY, JSON.stringify(record));
    },
    log,
  });

  const setUp = async (deviceId: string) => {
    identity = identity.deviceId === deviceId ? identity : identity.withDeviceId(deviceId);
    // Read receipts once the handler settled (off with read_receipts_enabled).
    messenger = opened ?? (await SecureMessenger.open({ identity, store, client, mls: false, autoRead: true, prekeys: true, ...pq }));
    for (const c of record.conversations ?? []) {
      await messenger.addConversation(c.conversation_id, { device_id: c.peer_device_id, identity_public_key: c.peer_identity_public_key, ephemeral_public_key: c.peer_ephemeral_public_key });
    }
    messenger.attach(realtime);
    messenger.on('error', (e) => log(`warning: ${e.code}: ${e.message}`));
    const hook = options.messageHook;
    if (hook) messenger.on('message', (m) => hook(m, { deviceId, messenger: messenger!, rooms: () => rooms }));
    await messenger.start();
    rooms = await openRoomLayer({ messenger, store, client, realtime, log });
    const layer = await openChannelLayer({ identity, store, client, realtime, tap, auth: 'api_key', log, mls: true, prekeysFrom: messenger.prekeySharing(), ...pq });
    channels = layer.channels;
    a2aMessenger = layer.messenger;
  };

  const register = async (): Promise<string> => {
    const link = new FrameLink(realtime, tap);
    await link.whenOpen(options.registerTimeoutMs ?? 30_000);
    const keys = { identityPublicKey: identity.identityPublicKeyHex, ephemeralPublicKey: identity.ephemeralPublicKeyHex, sign: (m: Uint8Array) => identity.sign(m) };
    const accepted = await link.request<ClientKeyAccepted>(
      'client_key_register',
      {
        identity_public_key: identity.identityPublicKeyHex,
        ephemeral_public_key: identity.ephemeralPublicKeyHex,
        signature: identity.signHex(identity.identityPublicKey),
        platform: options.platform ?? `node ${process.version} (${osPlatform()})`,
        key_binding: await bindKeys(client, 'client_key_register', keys),
      },
      'client_key_accepted',
      { noClientRef: true, timeoutMs: options.registerTimeoutMs ?? 30_000 },
    );
    record = { ...record, device_id: accepted.device_id, registered_at: new Date().toISOString(), conversations: accepted.conversations };
    await store.save(IDENTITY_KEY, JSON.stringify(identity.withDeviceId(accepted.device_id)));
    await store.save(API_AGENT_KEY, JSON.stringify(record));
    log(`API key registered: device ${accepted.device_id} with ${accepted.conversations.length} owner conversation(s)`);
    return accepted.device_id;
  };

  let ready: Promise<void>;
  if (record.device_id) {
    await setUp(record.device_id);
    ready = realtime.connect();
  } else {
    const connected = realtime.connect();
    connected.catch(() => undefined);
    ready = (async () => {
      const deviceId = await register();
      await setUp(deviceId);
      await channels!.sync().catch((err: unknown) => log(`warning: a2a catch-up failed: ${describe(err)}`));
    })();
    try {
      await ready;
    } catch (err) {
      realtime.close('registration failed');
      await end({ reason: 'unauthorized', detail: describe(err) });
      throw new AgentStateError(`registering the API key's key material failed: ${describe(err)}`);
    }
  }
  ready.then(
    () => log(`online as ${record.device_id} (API key; owner conversations X3DH + Double Ratchet, A2A channels MLS when the peer has KeyPackages)`),
    () => undefined,
  );
  const deviceId = record.device_id!;

  return {
    auth: 'api_key',
    server,
    deviceId,
    client,
    get messenger() {
      return messenger!;
    },
    get channels() {
      return channels!;
    },
    get rooms() {
      return rooms!;
    },
    ownerConversations: () => (record.conversations ?? []).map((c) => c.conversation_id),
    store,
    realtime,
    mls: false,
    hubAddress: () => channels?.ownHubAddress() ?? null,
    ready,
    done,
    stop: stopper(realtime, () => exited !== undefined, end, done),
  };
}
