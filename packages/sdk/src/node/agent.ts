/**
 * The agent side of Parley's main job (Node only), shared by the `parley-agent` command
 * (`agent-cli.ts`) and the demo: enroll with an invite, wait for the owner's approval, activate,
 * then run an echo agent over end-to-end encrypted conversations (contract §3.1, §4.3–4.5, §6.1).
 *
 * Everything the agent must keep lives in one state directory (a {@link StateStore}, files
 * mode 0600 in a 0700 directory, each sealed under the operator's key unless plain storage was
 * chosen: `state-store.ts`):
 * - `identity.json`: the device keys (Ed25519 identity, X25519 ephemeral), saved before enrolling;
 * - `agent.json`: server URL, device id, fingerprint, status, device JWT, conversations and the
 *   owner devices' public keys from activation;
 * - `secure-<device_id>.json`: the {@link SecureMessenger} state (sessions, cursors, pending messages).
 *
 * The echo agent answers `text` with `echo: <text>` and every `decision_request` with a decision
 * answer choosing the default option (else the first) in owner conversations (unless a
 * `messageHook` answers instead: `run-agent.ts`), logs everything
 * else (room messages too: two echo agents in a room would answer each other forever), and ends
 * when its socket is closed with 4001 (device revoked). Rooms it is a member of run on its
 * messenger (`room-layer.ts`); an owner device registered after its activation becomes a
 * conversation when the service announces it (`owner-devices.ts`), saved in `agent.json`.
 */
import { platform as osPlatform } from 'node:os';
import { ParleyApiError } from '../client/errors.js';
import { activate, enroll, renewDeviceToken, startTokenAutoRenew, waitForApproval, type AutoRenewHandle } from '../client/enrollment.js';
import { ParleyClient, type FetchLike } from '../client/rest.js';
import type { ConversationLink, DeviceKeys, EnrollResponse } from '@parley/protocol';
import { DeviceIdentity } from '../crypto/keys.js';
import { cryptoProvider } from '../crypto/primitives.js';
import { RealtimeClient, type ReconnectOptions } from '../realtime/client.js';
import { deviceCatchUp } from '../realtime/catch-up.js';
import type { RealtimeState, WebSocketLikeConstructor } from '../realtime/types.js';
import { frameTap } from '../realtime/frames.js';
import type { SecureChannels } from '../secure/a2a.js';
import { decisionAnswer, defaultDecisionOption, readDecisionAnswer } from '../secure/decisions.js';
import { SecureMessenger } from '../secure/messenger.js';
import type { RoomMessenger } from '../secure/rooms.js';
import type { SecureMessage } from '../secure/types.js';
import { openAgentStore, type StateStore, type StateStoreOptions } from './state-store.js';
import { openChannelLayer } from './a2a-layer.js';
import { followOwnerDevices } from './owner-devices.js';
import type { AgentMessageHook } from './message-hook.js';
import { openRoomLayer } from './room-layer.js';
import { nodeWebSocket } from './ws.js';

/** Store key of the device keys in the state directory. */
export const IDENTITY_KEY = 'identity';
/** Store key of the {@link AgentRecord} in the state directory. */
export const AGENT_KEY = 'agent';

/** The invite token format (contract §2.2): `svc_tok_` + 64 hex characters. */
export const INVITE_TOKEN = /^svc_tok_[0-9a-f]{64}$/;

/** What the agent keeps about its enrollment (`agent.json`). The device JWT is a secret. */
export interface AgentRecord {
  v: 1;
  /** Service base URL. */
  server: string;
  device_id: string;
  /** design §7 fingerprint of the identity key, as the service computed it at enrollment. */
  fingerprint: string;
  /** PENDING until activation succeeded, then ACTIVE (revocation is learnt from the service). */
  status: 'PENDING' | 'ACTIVE';
  name?: string;
  platform?: string;
  enrolled_at: string;
  activated_at?: string;
  device_jwt?: string;
  expires_at?: string;
  message_group_id?: string;
  default_topic_id?: string;
  conversations?: ConversationLink[];
  owner_public_keys?: DeviceKeys[];
}

/** A problem with the state directory or the agent's situation that a user must resolve (message says how). */
export class AgentStateError extends Error {
  override readonly name = 'AgentStateError';
}

/** Options of {@link enrollAgentDevice}. */
export interface EnrollAgentDeviceOptions extends StateStoreOptions {
  /** Service base URL, e.g. `http://127.0.0.1:8080`. */
  server: string;
  /** The raw invite token from the owner (`svc_tok_…`). */
  invite: string;
  /** State directory (created 0700 when missing). */
  stateDir: string;
  /** Device name shown to the owner (1–100 characters). */
  name?: string;
  /** contract §4.3 `platform` (default `node <version> (<os>)`). */
  platform?: string;
  /** Where progress lines go (default `console.log`). */
  log?: (line: string) => void;
  /** Called once enrolled, with the device id and fingerprint to compare with the owner's. */
  onEnrolled?: (enrolled: EnrollResponse) => void;
  /** Status poll interval (ms, default 5000 = contract §8's limit; lower values need `unsafeFastPolling`). */
  pollIntervalMs?: number;
  /** Poll faster than contract §8 allows (only against a server configured for it, e.g. the demo). */
  unsafeFastPolling?: boolean;
  /** Give up waiting for approval after this many ms (default: wait forever). */
  timeoutMs?: number;
  /** Abort the wait. */
  signal?: AbortSignal;
  /** Custom fetch (tests). */
  fetch?: FetchLike;
}

function defaultPlatform(): string {
  return `node ${process.version} (${osPlatform()})`;
}

/** Read the identity and record of a state directory (either may be absent). */
export async function loadAgentState(store: StateStore): Promise<{ identity: DeviceIdentity | undefined; record: AgentRecord | undefined }> {
  const [identityText, recordText] = await Promise.all([store.load(IDENTITY_KEY), store.load(AGENT_KEY)]);
  let record: AgentRecord | undefined;
  if (recordText !== undefined) {
    const parsed = JSON.parse(recordText) as AgentRecord;
    if (parsed?.v !== 1 || typeof parsed.device_id !== 'string' || typeof parsed.server !== 'string') {
      throw new AgentStateError(`${store.fileFor(AGENT_KEY)} is not a Parley agent record`);
    }
    record = parsed;
  }
  let identity = identityText === undefined ? undefined : DeviceIdentity.fromJSON(identityText);
  if (identity && identity.pqPrekey === undefined) {
    // Saved without a PQ prekey: add the PQXDH prekey, durable before the messenger publishes it.
    identity = identity.withPqPrekey();
    await store.save(IDENTITY_KEY, JSON.stringify(identity));
  }
  return { identity, record };
}

/**
 * Enroll this agent (contract §3.1, §4.3, §4.4): create and save its keys, `POST /enroll` with the
 * invite and a proof of possession, wait for the owner's approval (polling `GET
 * /devices/{id}/status` at most once per 5 s unless told otherwise, backing off on 429), then
 * activate (`POST /devices/{id}/activate`, signed) and save the device JWT, conversations and owner
 * keys. A run interrupted while waiting resumes waiting (the invite is already used).
 * @returns the ACTIVE record.
 * @throws AgentStateError (the state directory already holds an activated agent, or an invite
 *   that is not `svc_tok_…`); ParleyApiError (401 invite unknown/used/expired, 429 …);
 *   EnrollmentRejectedError (the owner rejected or revoked the device); EnrollmentTimeoutError.
 */
export async function enrollAgentDevice(options: EnrollAgentDeviceOptions): Promise<AgentRecord> {
  const log = options.log ?? console.log;
  const store = await openAgentStore(options.stateDir, options);
  const client = new ParleyClient({ baseUrl: options.server, ...(options.fetch ? { fetch: options.fetch } : {}) });
  let { identity, record } = await loadAgentState(store);
  if (record?.status === 'ACTIVE') {
    throw new AgentStateError(`${options.stateDir} already holds activated agent ${record.device_id}; use \`run --state-dir ${options.stateDir}\` (or another state directory)`);
  }
  if (record && identity) {
    if (record.server !== client.baseUrl) throw new AgentStateError(`${options.stateDir} holds an enrollment with ${record.server}, not ${client.baseUrl}`);
    log(`resuming: device ${record.device_id} is enrolled and waiting for approval`);
  } else {
    if (!INVITE_TOKEN.test(options.invite)) throw new AgentStateError('the invite token must be svc_tok_ followed by 64 hex characters');
    identity = DeviceIdentity.generate();
    await store.save(IDENTITY_KEY, JSON.stringify(identity)); // keys are durable before the service knows them
    const keys = identity;
    const platform = options.platform ?? defaultPlatform();
    const enrolled = await enroll(client, options.invite, {
      identityPublicKey: keys.identityPublicKeyHex,
      ephemeralPublicKey: keys.ephemeralPublicKeyHex,
      sign: (m) => keys.sign(m),
      platform,
      ...(options.name !== undefined ? { name: options.name } : {}),
    });
    identity = identity.withDeviceId(enrolled.device_id);
    await store.save(IDENTITY_KEY, JSON.stringify(identity));
    record = {
      v: 1,
      server: client.baseUrl,
      device_id: enrolled.device_id,
      fingerprint: enrolled.fingerprint,
      status: 'PENDING',
      ...(options.name !== undefined ? { name: options.name } : {}),
      platform,
      enrolled_at: new Date().toISOString(),
    };
    await store.save(AGENT_KEY, JSON.stringify(record));
    options.onEnrolled?.(enrolled);
    log(`enrolled as device ${enrolled.device_id}`);
    log(`fingerprint ${enrolled.fingerprint} (the owner should see the same before approving)`);
  }
  const keys = identity;
  log('waiting for the owner to approve…');
  await waitForApproval(client, record.device_id, {
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.unsafeFastPolling ? { unsafeFastPolling: true } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const activated = await activate(client, record.device_id, { identityPublicKey: keys.identityPublicKeyHex, ephemeralPublicKey: keys.ephemeralPublicKeyHex, sign: (m) => keys.sign(m) });
  const active: AgentRecord = {
    ...record,
    status: 'ACTIVE',
    activated_at: new Date().toISOString(),
    device_jwt: activated.device_jwt,
    expires_at: activated.expires_at,
    message_group_id: activated.message_group_id,
    default_topic_id: activated.default_topic_id,
    conversations: activated.conversations,
    owner_public_keys: activated.owner_public_keys,
  };
  await store.save(AGENT_KEY, JSON.stringify(active));
  log(`approved and activated: ${activated.conversations.length} conversation(s) with ${activated.owner_public_keys.length} owner device(s)`);
  return active;
}

/** Why a running agent ended: `revoked` (close 4001), `unauthorized` (4003/4401), `stopped` ({@link EchoAgent.stop}). */
export interface AgentExit {
  reason: 'revoked' | 'unauthorized' | 'stopped';
  /** WebSocket close code, when the socket was closed by the service. */
  code?: number;
  detail?: string;
}

/**
 * Follow an agent's socket: end with `revoked` (close 4001) or `unauthorized` (4003/4401), log
 * reconnections. Shared by the enrolled echo agent and the API-key runtime (`runtime.ts`).
 */
export function watchConnection(realtime: RealtimeClient, log: (line: string) => void, end: (exit: AgentExit) => void): void {
  let wasOpen = false;
  realtime.on('stateChange', (s) => {
    const terminal: Partial<Record<RealtimeState, AgentExit['reason']>> = { revoked: 'revoked', unauthorized: 'unauthorized' };
    const reason = terminal[s.state];
    if (reason) end({ reason, ...(s.code !== undefined ? { code: s.code } : {}), ...(s.reason ? { detail: s.reason } : {}) });
    else if (s.state === 'reconnecting') log(`connection lost (${s.code ?? 'no code'}); reconnecting in ${s.delayMs} ms`);
    else if (s.state === 'open' && wasOpen) log('reconnected');
    if (s.state === 'open') wasOpen = true;
  });
}

/**
 * The `stop()` of an agent runtime: close the socket and end as `stopped` unless it already ended;
 * resolves with the exit.
 */
export function stopper(realtime: RealtimeClient, ended: () => boolean, end: (exit: AgentExit) => Promise<void>, done: Promise<AgentExit>): () => Promise<AgentExit> {
  return async () => {
    if (!ended()) {
      realtime.close('agent stopped');
      await end({ reason: 'stopped' });
    }
    return done;
  };
}

/** Options of {@link startEchoAgent}. */
export interface StartEchoAgentOptions extends StateStoreOptions {
  /** State directory of an ACTIVE agent (from {@link enrollAgentDevice}). */
  stateDir: string;
  /** Use MLS when the owner device supports it (default true); false: X3DH + Double Ratchet only. */
  mls?: boolean;
  /**
   * Refuse classical end-to-end sessions (`SecureMessengerOptions.requirePostQuantum`; the CLI's
   * `--require-pq` / `PARLEY_REQUIRE_PQ=1`). The tenant's `require_post_quantum` applies regardless.
   */
  requirePostQuantum?: boolean;
  /** Where transcript and status lines go (default `console.log`). */
  log?: (line: string) => void;
  /** WebSocket implementation (default: the `ws` package). */
  WebSocket?: WebSocketLikeConstructor;
  /** Reconnection policy of the socket. */
  reconnect?: ReconnectOptions;
  /** Custom fetch (tests). */
  fetch?: FetchLike;
  /** Answer messages with this hook instead of the echo (`message-hook.ts`; the transcript is still logged). */
  messageHook?: AgentMessageHook;
}

/** A running echo agent. */
export interface EchoAgent {
  /** The agent's device id. */
  deviceId: string;
  /** The current `agent.json` record (the device JWT changes on renewal). */
  record: AgentRecord;
  /** REST client acting as the agent (device JWT kept fresh). */
  client: ParleyClient;
  /** The agent's secure messenger (e.g. to send its own messages: `messenger.send(conversationId, content)`). */
  messenger: SecureMessenger;
  /** The agent's WebSocket client. */
  realtime: RealtimeClient;
  /** End-to-end encrypted A2A channels (requests with the device JWT; `secure/a2a.ts`). */
  channels: SecureChannels;
  /** Rooms the agent is a member of (`secure/rooms.ts`, on {@link messenger}). */
  rooms: RoomMessenger;
  /** The agent's owner conversations (one per owner device). */
  ownerConversations(): string[];
  /** The state directory's store (shared with the plugin's inbox). */
  store: StateStore;
  /** For the plugin (`plugin.ts`): an enrolled device. */
  auth: 'device';
  /** Service base URL. */
  server: string;
  /** MLS enabled for owner conversations. */
  mls: boolean;
  /** The agent's hub address, when known (learnt from its channels). */
  hubAddress(): string | null;
  /** Resolves once connected and caught up (rejects if the connection ends for good first). */
  ready: Promise<void>;
  /** Resolves when the agent ended (never rejects). */
  done: Promise<AgentExit>;
  /** Close the socket and the messenger; resolves with the exit (`stopped` unless it had ended). */
  stop(): Promise<AgentExit>;
}

const short = (id: string) => id.slice(0, 8);

/** One line describing received content, for the transcript. */
export function describeMessage(m: SecureMessage): string {
  const c = m.content;
  if (!c) return `undecodable content (${m.plaintext.length} bytes)`;
  switch (c.type) {
    case 'text':
      return `text "${c.payload.text}"`;
    case 'decision_request':
      return `decision_request "${c.payload.title}" [${c.payload.options.map((o) => `${o.option_id}${o.is_default ? '*' : ''}`).join(', ')}]`;
    case 'action_confirmation': {
      const answer = readDecisionAnswer(c);
      return answer ? `decision answer: ${answer.option_id} (${answer.detail ?? ''})` : `action_confirmation ${c.payload.action}: ${c.payload.status}`;
    }
    case 'status_alert':
      return `status_alert [${c.payload.severity}] ${c.payload.title}`;
    case 'artifact':
      return `artifact "${c.payload.title}" (${c.payload.type})`;
    case 'heartbeat':
      return `heartbeat ${c.payload.agent_status}`;
  }
}

/**
 * Start the echo agent of an activated state directory: renew the device JWT when it is close to
 * expiry (and keep renewing it), open the {@link SecureMessenger}, register the conversations from
 * activation, connect the socket with device-wide catch-up from the saved cursor, and answer
 * messages (see the file comment). `done` resolves when the socket is closed with 4001 (revoked),
 * 4003/4401 (unauthorized) or by `stop()`.
 * @throws AgentStateError when the directory holds no activated agent; store and crypto errors.
 */
export async function startEchoAgent(options: StartEchoAgentOptions): Promise<EchoAgent> {
  const log = options.log ?? console.log;
  const provider = cryptoProvider(); // chosen once for the process; say which
  log(`crypto provider: ${provider.name} (${provider.implementation}; ${provider.reason})`);
  const store = await openAgentStore(options.stateDir, options);
  const { identity: keys, record: saved } = await loadAgentState(store);
  if (!keys || !saved) throw new AgentStateError(`${options.stateDir} holds no enrolled agent; run \`enroll\` first`);
  if (saved.status !== 'ACTIVE' || !saved.device_jwt) {
    throw new AgentStateError(`agent ${saved.device_id} is not activated yet; run \`enroll\` again with the same --state-dir to keep waiting for approval`);
  }
  let record: AgentRecord = saved;
  const deviceId = record.device_id;
  const identity = keys.deviceId === deviceId ? keys : keys.withDeviceId(deviceId);
  const sign = (m: Uint8Array) => identity.sign(m);
  const client = new ParleyClient({ baseUrl: record.server, deviceToken: record.device_jwt, ...(options.fetch ? { fetch: options.fetch } : {}) });

  let finish!: (exit: AgentExit) => void;
  const done = new Promise<AgentExit>((resolve) => (finish = resolve));
  let exited: AgentExit | undefined;
  const saveRecord = (next: AgentRecord) => {
    record = next;
    return store.save(AGENT_KEY, JSON.stringify(next)).catch((err: unknown) => log(`warning: could not save ${AGENT_KEY}: ${(err as Error).message}`));
  };

  // A device JWT close to expiry is renewed first (proof of possession, design §5).
  if (record.expires_at === undefined || Date.parse(record.expires_at) - Date.now() < 5 * 60_000) {
    try {
      const token = await renewDeviceToken(client, deviceId, sign);
      await saveRecord({ ...record, device_jwt: token.device_jwt, expires_at: token.expires_at });
    } catch (err) {
      if (err instanceof ParleyApiError && err.status === 403) log('the device JWT could not be renewed: the device is revoked');
      else log(`warning: renewing the device JWT failed: ${(err as Error).message}`);
    }
  }
  const renewal: AutoRenewHandle = startTokenAutoRenew(client, {
    deviceId,
    sign,
    ...(record.expires_at ? { expiresAt: record.expires_at } : {}),
    onRenewed: (token) => void saveRecord({ ...record, device_jwt: token.device_jwt, expires_at: token.expires_at }),
    onError: (err, fatal) => log(`${fatal ? 'token renewal stopped' : 'token renewal failed, retrying'}: ${(err as Error).message}`),
  });

  // Read receipts: a message counts as read once the handler below settled; the
  // device or tenant setting `read_receipts_enabled` turns them off service-side.
  const pq = options.requirePostQuantum ? { requirePostQuantum: true } : {};
  const messenger = await SecureMessenger.open({ identity, store, client, mls: options.mls ?? true, autoRead: true, prekeys: true, ...pq });
  for (const link of record.conversations ?? []) {
    if (link.agent_device_id !== deviceId) continue;
    const owner = record.owner_public_keys?.find((k) => k.device_id === link.owner_device_id);
    if (!owner) {
      log(`warning: no public keys for owner device ${link.owner_device_id}; conversation ${link.conversation_id} skipped`);
      continue;
    }
    await messenger.addConversation(link.conversation_id, owner);
  }

  const source = deviceCatchUp(client, deviceId);
  const tap = frameTap(options.WebSocket ?? nodeWebSocket());
  const realtime = new RealtimeClient({
    url: record.server,
    token: () => client.currentDeviceToken(),
    WebSocket: tap.WebSocket,
    catchUp: source,
    initialCursors: messenger.initialCursors(source),
    ...(options.reconnect ? { reconnect: options.reconnect } : {}),
  });
  messenger.attach(realtime);
  const rooms = await openRoomLayer({ messenger, store, client, realtime, log });
  followOwnerDevices(realtime, {
    messenger: () => messenger,
    save: (d) =>
      saveRecord({
        ...record,
        conversations: [
          ...(record.conversations ?? []).filter((c) => c.conversation_id !== d.conversation_id),
          { conversation_id: d.conversation_id, message_group_id: d.message_group_id, agent_device_id: deviceId, owner_device_id: d.owner_device_id },
        ],
        owner_public_keys: [
          ...(record.owner_public_keys ?? []).filter((k) => k.device_id !== d.owner_device_id),
          { device_id: d.owner_device_id, identity_public_key: d.identity_public_key, ephemeral_public_key: d.ephemeral_public_key, fingerprint: d.fingerprint },
        ],
      }),
    log,
  });
  // A2A channels on a messenger of their own (channel messages are not echoed).
  const a2a = await openChannelLayer({ identity, store, client, realtime, tap, auth: 'device', log, prekeysFrom: messenger.prekeySharing(), ...pq });

  const end = async (exit: AgentExit) => {
    if (exited) return;
    exited = exit;
    renewal.stop();
    await a2a.channels.close().catch(() => undefined);
    await rooms.close().catch(() => undefined);
    await a2a.messenger.close().catch(() => undefined);
    await messenger.close().catch(() => undefined);
    finish(exit);
  };

  messenger.on('message', async (m) => {
    const from = m.room_id !== undefined ? `room ${short(m.room_id)}` : `${short(m.conversation_id)}`;
    // With a messageHook the application has the plaintext: the transcript names the content type only.
    const what = options.messageHook ? `${m.content?.type ?? 'undecodable'} message` : describeMessage(m);
    log(`← [${from}] ${what}${m.redelivered ? ' (redelivered after a restart)' : ''} via ${m.protocol}`);
    if (m.room_id !== undefined || options.messageHook) return;
    const c = m.content;
    try {
      if (c?.type === 'text') {
        const reply = `echo: ${c.payload.text}`;
        const sent = await messenger.sendText(m.conversation_id, reply);
        log(`→ [${from}] text "${reply}" via ${sent.protocol}`);
      } else if (c?.type === 'decision_request') {
        const option = defaultDecisionOption(c.payload);
        const sent = await messenger.send(m.conversation_id, decisionAnswer(c.payload, m.message_id, option.option_id));
        log(`→ [${from}] decision answer: ${option.option_id} ("${option.label}") via ${sent.protocol}`);
      }
    } catch (err) {
      log(`warning: could not answer message ${m.message_id}: ${(err as Error).message}`);
    }
  });
  const hook = options.messageHook;
  if (hook) messenger.on('message', (m) => hook(m, { deviceId, messenger, rooms: () => rooms }));
  messenger.on('error', (e) => log(`warning: ${e.code}: ${e.message}`));
  messenger.on('session', (e) => {
    if (e.primary) log(`session ${e.protocol} ${e.initiator === 'local' ? 'started' : 'accepted'} in conversation ${short(e.conversation_id)}`);
  });
  realtime.on('event', (e) => log(`event ${e.event}`));
  watchConnection(realtime, log, (exit) => void end(exit));

  await messenger.start();
  const ready = realtime.connect();
  ready.then(
    () => log(`online as ${deviceId} (${messenger.mlsAvailable ? 'MLS enabled' : 'X3DH + Double Ratchet only'})`),
    () => undefined,
  );

  return {
    deviceId,
    get record() {
      return record;
    },
    client,
    messenger,
    realtime,
    channels: a2a.channels,
    rooms,
    ownerConversations: () => (record.conversations ?? []).filter((c) => c.agent_device_id === deviceId).map((c) => c.conversation_id),
    store,
    auth: 'device',
    server: record.server,
    mls: messenger.mlsAvailable,
    hubAddress: () => a2a.channels.ownHubAddress(),
    ready,
    done,
    stop: stopper(realtime, () => exited !== undefined, end, done),
  };
}
