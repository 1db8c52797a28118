/**
 * The signed-in owner's runtime in the browser (design §8.1, §8.30): provisions
 * the tenant on first sign-in, registers this browser as an owner device (keys made here, sealed
 * in IndexedDB), opens its end-to-end messenger (`SecureMessenger`: MLS or X3DH + Double
 * Ratchet, decrypting in the page) and the owner WebSocket (`RealtimeClient`, catch-up per
 * conversation), and reports every owner event. Everything protocol-shaped is the SDK's.
 */
import {
  conversationCatchUp,
  DeviceIdentity,
  messageTypeFor,
  ownerPeerResolver,
  ParleyClient,
  registerOwnerDeviceBound,
  RealtimeClient,
  restTransport,
  SecureMessenger,
  type Content,
  type Conversation,
  type OwnerMe,
  type SecureMessage,
} from '@parley/sdk';
import type { AuthSession } from './auth';
import { ChatLog } from './chat-log';
import { KeyAlerts, keyTransparencyError, type KeyAlert } from './key-alerts';
import { SealedStore } from './sealed-store';

/** What the runtime reports to the app. */
export interface OwnerRuntimeHooks {
  /** An owner socket event (`device_pending`, `decision_created`, …). */
  onEvent?: (event: string, data: unknown) => void;
  /** The socket state changed (`connecting`, `open`, `revoked`, …). */
  onState?: (state: string) => void;
  /** A messenger or socket problem worth showing (not thrown). */
  onWarning?: (message: string) => void;
}

function decodeText(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

/**
 * One signed-in owner on this browser. Create with {@link OwnerRuntime.start}; `close` on sign-out.
 */
export class OwnerRuntime {
  private constructor(
    readonly session: AuthSession,
    readonly client: ParleyClient,
    readonly store: SealedStore,
    readonly identity: DeviceIdentity,
    readonly messenger: SecureMessenger,
    readonly realtime: RealtimeClient,
    readonly chat: ChatLog,
    /** Whether this sign-in created the tenant. */
    readonly createdTenant: boolean,
    /** The owner as the service sees it (`GET /me`): subject and whether it is a platform operator. */
    readonly me: OwnerMe,
  ) {}

  /**
   * Key transparency (design §8.39): `key_directory_alert` events and this device's own-key
   * findings, and the conversations whose peer keys the messenger refused.
   */
  readonly keyAlerts = new KeyAlerts();

  /** Whether the signed-in owner is a platform operator (`PLATFORM_OPERATOR_SUBS`): the operator screens are offered. */
  get operator(): boolean {
    return this.me.operator;
  }

  /** This browser's owner device id. */
  get deviceId(): string {
    return this.identity.deviceId!;
  }

  /** design §7 fingerprint of this browser's identity key. */
  get fingerprint(): string {
    return this.identity.fingerprint;
  }

  /**
   * Sign-in's second half: tenant, owner device, messenger, socket.
   * @throws ParleyApiError from the service (401 sends the owner back to sign-in), DOMException
   *   when the browser has no IndexedDB/WebCrypto.
   */
  static async start(session: AuthSession, hooks: OwnerRuntimeHooks = {}): Promise<OwnerRuntime> {
    const client = new ParleyClient({ baseUrl: location.origin, ownerToken: () => session.token });
    // `GET /me` answers before the first tenant exists: a first sign-in creates it without a 403.
    const me = await client.getMe();
    const createdTenant = me.tenant_id === null;
    if (createdTenant) await client.createTenant({ name: `${session.email ?? session.sub}` });
    const devices = (await client.listDevices()).devices;
    const store = await SealedStore.open(`owner:${session.sub}`);
    let identity = await loadIdentity(store);
    const mine = identity?.deviceId ? devices.find((d) => d.device_id === identity!.deviceId) : undefined;
    if (!identity || !mine || mine.status !== 'ACTIVE' || mine.kind !== 'owner') {
      // First sign-in here (or this browser's device was removed): new keys, new device, fresh state.
      const fresh = DeviceIdentity.generate();
      const keys = { identityPublicKey: fresh.identityPublicKeyHex, ephemeralPublicKey: fresh.ephemeralPublicKeyHex, sign: (m: Uint8Array) => fresh.sign(m) };
      const reg = await registerOwnerDeviceBound(client, keys, { name: browserName(), platform: 'web' });
      identity = fresh.withDeviceId(reg.device_id);
      await store.delete(`secure-${reg.device_id}`);
      await store.save('identity', JSON.stringify(identity.toJSON()));
    }
    const deviceId = identity.deviceId!;
    client.setOwnerDeviceId(deviceId);
    await client.relinkDevice(deviceId);
    const conversations = await listMine(client, deviceId);

    const messenger = await SecureMessenger.open({
      identity,
      store,
      client,
      resolvePeer: ownerPeerResolver(client, deviceId),
      transport: restTransport(client, deviceId),
      // The browser's one messenger receives every initial message to this owner device, so it
      // keeps and publishes the device's signed and one-time prekeys.
      prekeys: true,
    });
    const chat = new ChatLog(store);
    const sources = conversations.map((c) => conversationCatchUp(client, c.conversation_id));
    const realtime = new RealtimeClient({
      url: location.origin,
      token: () => session.token,
      deviceId,
      catchUp: sources,
      initialCursors: messenger.initialCursors(sources),
    });
    const rt = new OwnerRuntime(session, client, store, identity, messenger, realtime, chat, createdTenant, me);
    messenger.attach(realtime, { transport: false });
    messenger.on('message', (m) => rt.record(m));
    // A key-transparency refusal or finding is shown as such (chat, alert banner), not as a warning.
    messenger.on('error', (e) => {
      if (!rt.keyAlerts.fromError(e, deviceId)) hooks.onWarning?.(`${e.code}: ${e.message}`);
    });
    // Ticks: statuses of what this browser sent, and read marks covering older messages.
    realtime.statuses.on('status', (s) => {
      if (s.conversation_id !== undefined && s.message_id !== undefined) void chat.setStatus(s.conversation_id, s.message_id, s.status);
    });
    realtime.on('message_read', (e) => void chat.markReadUpTo(e.conversation_id, e.cursor));
    realtime.on('event', (e) => {
      if (e.event === 'device_linked') rt.follow((e.data as { conversation_id?: string } | undefined)?.conversation_id);
      if (e.event === 'key_directory_alert' && isKeyAlert(e.data)) rt.keyAlerts.add(e.data);
      hooks.onEvent?.(e.event, e.data);
    });
    realtime.on('stateChange', (s) => hooks.onState?.(s.state));
    realtime.on('error', (e) => hooks.onWarning?.(e.message));
    await messenger.start();
    void realtime.connect().catch((e: Error) => hooks.onWarning?.(e.message));
    return rt;
  }

  /** Read a new conversation's messages from now on (and its backlog). */
  private follow(conversationId: string | undefined): void {
    if (conversationId) this.realtime.addCatchUp(conversationCatchUp(this.client, conversationId));
  }

  private async record(m: SecureMessage): Promise<void> {
    await this.chat.append({
      message_id: m.message_id,
      conversation_id: m.conversation_id,
      direction: m.sender_device_id === this.deviceId ? 'out' : 'in',
      sender_device_id: m.sender_device_id,
      timestamp: m.timestamp,
      message_type: m.message_type,
      content: m.content,
      ...(m.content ? {} : { text: decodeText(m.plaintext) }),
    });
  }

  /**
   * The ticks of the conversation's sent messages from the service (history's `delivered_at` /
   * `read_at`, the latest page): receipts that arrived while this browser was away.
   */
  async refreshStatuses(conversationId: string): Promise<void> {
    const page = await this.client.conversationMessages(conversationId, { limit: 200 });
    await this.chat.applyHistory(conversationId, page.messages);
  }

  private readonly lastRead = new Map<string, string>();

  /**
   * A read receipt: the owner saw the conversation up to `messageId` (a received message). Sent
   * once per message; the service ignores it when read receipts are off for this browser's device
   * or the tenant. Failures are warnings, not errors: the ticks of the agent's message stay.
   */
  markRead(conversationId: string, messageId: string): Promise<void> {
    if (this.lastRead.get(conversationId) === messageId) return Promise.resolve();
    this.lastRead.set(conversationId, messageId);
    return this.messenger.markRead({ conversation_id: conversationId, message_id: messageId }).then(
      () => undefined,
      () => {
        if (this.lastRead.get(conversationId) === messageId) this.lastRead.delete(conversationId);
      },
    );
  }

  /** This device's conversations (one per agent; design §7). */
  conversations(): Promise<Conversation[]> {
    return listMine(this.client, this.deviceId);
  }

  /**
   * Encrypt `content` in the browser and send it in the conversation; the sent plaintext goes to
   * the local log. @throws SecureMessengerError (`key_transparency`: the peer's keys were refused,
   *   recorded in `keyAlerts` and nothing was sent), ParleyApiError.
   */
  async send(conversationId: string, content: Content): Promise<void> {
    let sent;
    try {
      sent = await this.messenger.send(conversationId, content);
    } catch (err) {
      const kt = keyTransparencyError(err);
      if (kt) this.keyAlerts.refuse({ conversation_id: conversationId, detail: kt.message, at: new Date().toISOString() });
      throw err;
    }
    this.keyAlerts.clearRefusal(conversationId);
    await this.chat.append({
      message_id: sent.message_id,
      conversation_id: conversationId,
      direction: 'out',
      sender_device_id: this.deviceId,
      timestamp: sent.timestamp ?? new Date().toISOString(),
      message_type: messageTypeFor(content.type) ?? 'text',
      content,
      status: this.messenger.statuses.get(sent.message_id)?.status ?? 'sent',
      ...(sent.cursor !== undefined ? { cursor: sent.cursor } : {}),
    });
  }

  /** Close the socket (sign-out). */
  close(): void {
    this.realtime.close('signed out');
  }
}

/** Whether a socket event's data has the fields of a `key_directory_alert` (design §8.39). */
function isKeyAlert(data: unknown): data is KeyAlert {
  const d = data as Partial<KeyAlert> | null | undefined;
  return typeof d?.label === 'string' && typeof d.reason === 'string' && typeof d.reported_at === 'string';
}

async function loadIdentity(store: SealedStore): Promise<DeviceIdentity | undefined> {
  const raw = await store.load('identity');
  return raw ? DeviceIdentity.fromJSON(raw) : undefined;
}

async function listMine(client: ParleyClient, deviceId: string): Promise<Conversation[]> {
  return (await client.listConversations({ device_id: deviceId })).conversations;
}

function browserName(): string {
  const ua = navigator.userAgent;
  const name = /Firefox\//.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrom(e|ium)\//.test(ua) ? 'Chromium' : /Safari\//.test(ua) ? 'Safari' : 'Browser';
  return `${name} (web app)`;
}
