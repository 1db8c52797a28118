/**
 * `SecureMessenger`: end-to-end encrypted conversations for one local device (contract §1.2–1.3,
 * §2.4, §4.5, §6.1). It keeps one session per conversation (pairwise: one peer device each),
 * encrypts what the application sends, decrypts what the service delivers, and persists every
 * state change before anything depends on it.
 *
 * Protocol (contract §1.3): a new session is MLS (RFC 9420) when this device has MLS enabled and the
 * peer has a KeyPackage to claim on the service; otherwise X3DH + Double Ratchet. For MLS the
 * starter claims the peer's KeyPackage (checked to be signed by the peer's registered identity
 * key), creates a two-member group and sends the Welcome as an ordinary message in the MLS wire
 * envelope (`mls/wire.ts`), then its application messages; the peer joins from the Welcome. Each
 * side reads whichever protocol a received message carries.
 *
 * Prekeys (X3DH rev. 1 §§3.2-3.4, `secure/prekeys.ts`): before an X3DH + Double Ratchet session
 * the starter claims the peer's signed prekey bundle and verifies the signed prekey against the
 * peer's identity key; a bad signature or a failed claim starts no session (`prekey_refused`). A
 * peer without one (404) gets the legacy unsigned `ephemeral_public_key` path, unless it served a
 * signed prekey before (pinned per peer device) or `requireSignedPrekeys` is set. With
 * `options.prekeys` this messenger also keeps the device's prekeys in its state, publishes them at
 * `start`, and deletes a one-time prekey in the same write that keeps the session built on it.
 *
 * Ordering and durability (contract §4.5 "decrypt in order"):
 * - received messages are processed one at a time in the order they are handed in (the realtime
 *   client hands them over in cursor order per conversation), de-duplicated by message_id;
 * - the new session state, the handled message's id and cursor, and the decrypted message are
 *   saved together in one atomic write BEFORE the application's `message` listeners run; the
 *   message leaves the saved pending list only after they settled, with the next state write (the
 *   next message received or sent), or on its own {@link DEFERRED_WRITE_MS} later, at `flush()` or
 *   at `close()`, whichever comes first. A crash before that write leaves the old state and
 *   cursor: the message is read again from the service on restart. A crash after it, before its
 *   removal was written: the message is handed over again from the saved state (`redelivered`);
 * - an outgoing message's state is saved before it is handed to the transport, so a message key
 *   is never used twice;
 * - a failed write stops the messenger (`failed`), its memory rolled back to the saved state —
 *   exactly what a crash would leave. Open a new one from the same store to continue.
 *
 * Rooms (design §8.5, `secure/rooms.ts`) reuse all of this through two entry points: `seal`
 * encrypts one plaintext in several conversations without sending it, and `receive` takes a room
 * envelope as a message of the pairwise room conversation with its sender (`room_id` set; its
 * cursor stays out of the device-wide resume window). A2A channels (`secure/a2a.ts`) relay a
 * conversation's first message themselves as their key exchange: `sealHandshake` starts the
 * session (MLS when asked and possible) and answers the MLS Welcome or the X3DH initial message,
 * `confirmOpening` notes the Welcome stored.
 *
 * Parts: the saved state, its lock and writes (`messenger-core.ts`); session set-up and encryption
 * (`messenger-sessions.ts`); reading (`messenger-receive.ts`); sending (`messenger-send.ts`); the
 * keys kept published (`messenger-upkeep.ts`); read receipts (`messenger-receipts.ts`).
 *
 * Typical agent use (see `node/agent.ts`):
 * ```ts
 * const messenger = await SecureMessenger.open({ identity, store, client });
 * await messenger.addConversation(conversationId, ownerKeys);
 * const source = deviceCatchUp(client, deviceId);
 * const rt = new RealtimeClient({ url, token, catchUp: source, initialCursors: messenger.initialCursors(source) });
 * messenger.attach(rt);
 * messenger.on('message', async (m) => { if (m.content?.type === 'text') await messenger.sendText(m.conversation_id, 'ok'); });
 * await messenger.start();
 * await rt.connect();
 * ```
 */
import { encodeContent, type Content } from '../content/types.js';
import { fingerprint } from '../crypto/primitives.js';
import type { PeerDevice } from '../crypto/session.js';
import { defaultCompareCursors } from '../realtime/client.js';
import type { RealtimeClient } from '../realtime/client.js';
import { MessageStatusTracker } from '../realtime/status.js';
import type { MessageReadAck, RoomMessageReadAck } from '@parley/protocol';
import { TypedEmitter } from '../realtime/emitter.js';
import type { CatchUpSource } from '../realtime/types.js';
import { KeyedQueue } from '../keyed-queue.js';
import { LiveConversation } from './conversation.js';
import { messageTypeFor } from './decisions.js';
import { DEFERRED_WRITE_MS, DEVICE_RECENT, MessengerCore } from './messenger-core.js';
import { checkPeer, describe, type MessengerHost } from './messenger-host.js';
import { AutoRead, sendReadReceipt } from './messenger-receipts.js';
import { processReceived, toSecureMessage } from './messenger-receive.js';
import { sendMessage } from './messenger-send.js';
import { conversationFor, encryptIn, protectionOf, startSession, type ConversationProtection, type SessionInfo } from './messenger-sessions.js';
import { resolveMeta, type AuthenticatedMeta } from './metadata.js';
import { prekeySharing, publishKeyPackages, publishPqPrekey, publishPrekeys } from './messenger-upkeep.js';
import type { InboxEntry } from './state.js';
import { messengerKeyTransparency, monitorOwnKeys } from './key-transparency.js';
import { tenantRequiresPostQuantum } from './post-quantum.js';
import type { PrekeyUpkeep } from './prekeys.js';
import { realtimeTransport } from './transport.js';
import {
  SecureMessengerError,
  type ReceivedMessage,
  type SealedWire,
  type SecureMessage,
  type SecureMessengerEvents,
  type SecureMessengerOptions,
  type SecureTransport,
  type SendOptions,
  type SentMessage,
  type SharedPrekeys,
} from './types.js';

export { DEFERRED_WRITE_MS, DEVICE_RECENT };
export type { ConversationProtection, ProtectionScheme, SessionInfo } from './messenger-sessions.js';

/** How often a messenger holding prekeys checks their rotation and one-time stock (ms). */
const PREKEY_UPKEEP_MS = 6 * 60 * 60 * 1000;

/** The metadata sealed in a handshake (the label the A2A layer gives key exchanges on receipt). */
const HANDSHAKE_META: AuthenticatedMeta = { message_type: 'key_exchange', priority: 'normal' };

/**
 * End-to-end encrypted messaging of one local device (see the file comment). Create with
 * {@link SecureMessenger.open}; call {@link start} once listeners are registered.
 */
export class SecureMessenger extends TypedEmitter<SecureMessengerEvents> {
  /** The local device id. */
  readonly deviceId: string;
  private readonly options: SecureMessengerOptions;
  private readonly mlsEnabled: boolean;
  private readonly minKeyPackages: number;
  private readonly targetKeyPackages: number;
  private readonly compare: (a: string, b: string) => number;
  private transport: SecureTransport | undefined;
  private receiving: Promise<void> = Promise.resolve();
  private readonly dispatching = new KeyedQueue();
  private readonly detachers: (() => void)[] = [];
  private reportedStop = false;
  private topUp: Promise<unknown> | undefined;
  /** The realtime client attached last (receipts, read receipts). */
  private realtime: RealtimeClient | undefined;
  private readonly ownStatuses = new MessageStatusTracker();
  /** `autoRead`: reads delivered messages shortly. */
  private readonly autoRead = new AutoRead(
    (m) => this.markRead(m),
    (e) => this.emit('error', e),
  );
  /** Periodic prekey upkeep (rotation, one-time top-up) with `options.prekeys`. */
  private upkeepTimer: ReturnType<typeof setInterval> | undefined;
  /** The tenant's `require_post_quantum` as last read (undefined: not read yet, or the read failed). */
  private tenantRequiresPq: boolean | undefined;
  /** The saved state, its lock and writes (`messenger-core.ts`). */
  private readonly core: MessengerCore;
  /** What the session set-up and receiving functions use of this messenger (`messenger-host.ts`). */
  private readonly host: MessengerHost;

  private constructor(options: SecureMessengerOptions, deviceId: string) {
    super((err, event) => {
      if (event !== 'error') {
        this.emit('error', new SecureMessengerError('listener_failed', `a "${String(event)}" listener failed: ${describe(err)}`, { cause: err }));
      }
    });
    this.options = options;
    this.deviceId = deviceId;
    const mls = options.mls;
    const mlsOpts = typeof mls === 'object' ? mls : {};
    this.mlsEnabled = options.client !== undefined && (typeof mls === 'boolean' ? mls : (mlsOpts.enabled ?? true));
    this.minKeyPackages = Math.max(1, mlsOpts.minKeyPackages ?? 3);
    this.targetKeyPackages = Math.max(this.minKeyPackages, mlsOpts.targetKeyPackages ?? 10);
    this.compare = options.compareCursors ?? defaultCompareCursors;
    this.transport = options.transport;
    this.core = new MessengerCore(deviceId, options, mlsOpts.ciphersuites, { session: (e) => this.emit('session', e), error: (e) => this.emit('error', e) });
    const kt = messengerKeyTransparency(options, deviceId);
    this.host = {
      deviceId,
      identity: options.identity,
      options,
      mls: () => this.core.mls,
      mlsAvailable: () => this.mlsAvailable,
      prekeys: () => this.core.prekeys,
      conversations: () => this.core.conversations,
      sessionEvents: this.core.sessionEvents,
      sharedPrekeyUses: this.core.sharedPrekeyUses,
      requiresPostQuantum: () => this.requiresPostQuantum(),
      report: (e) => this.emit('error', e),
      topUpSoon: () => {
        this.topUp = this.topUpLater();
      },
      keyTransparency: () => kt,
    };
  }

  /**
   * Open the messenger of `options.identity`'s device: restore its state from `options.store`
   * (or start empty and save that), and create its MLS client when MLS is enabled and, with
   * `options.prekeys`, its X25519 prekey store (a first signed prekey, X3DH §3.2) when the state has none.
   * @throws TypeError when the identity has no device id; Error when the saved state is corrupt
   *   or belongs to another device; the store's errors.
   */
  static async open(options: SecureMessengerOptions): Promise<SecureMessenger> {
    const deviceId = options.identity.deviceId;
    if (deviceId === undefined) throw new TypeError('SecureMessenger: the identity needs its device id (DeviceIdentity.withDeviceId)');
    const m = new SecureMessenger(options, deviceId);
    await m.core.load(m.mlsEnabled);
    return m;
  }

  // ------------------------------------------------------------------ public API

  /** True once a state write failed: the messenger refuses work (see the file comment). */
  get failed(): boolean {
    return this.core.failed;
  }

  /** Whether new sessions may use MLS from this side (contract §1.3). */
  get mlsAvailable(): boolean {
    return this.mlsEnabled && this.core.mls !== undefined;
  }

  /** Number of decrypted messages saved but not yet handed to the application. */
  get pendingCount(): number {
    return this.core.inbox.length;
  }

  /**
   * Register a conversation and its peer device (keys as the service publishes them: activation's
   * `owner_public_keys`, `GET /conversations/{id}/keys`, …). Idempotent for the same peer.
   * `options.sessionContext`: the conversation id its X3DH + Double Ratchet sessions are bound to
   * when the two devices name the conversation differently (both must pass the same; default
   * `conversationId`).
   * @throws TypeError for malformed keys; Error when the conversation already has another peer.
   */
  addConversation(conversationId: string, peer: PeerDevice, options: { sessionContext?: string } = {}): Promise<void> {
    const p = checkPeer(peer);
    return this.core.exclusive(async () => {
      this.core.ensureRunning();
      const existing = this.core.conversations.get(conversationId);
      if (existing) {
        if (existing.peer.device_id === p.device_id && existing.peer.identity_public_key === p.identity_public_key) return;
        throw new Error(`conversation ${conversationId} already has peer ${existing.peer.device_id} with other keys`);
      }
      this.core.conversations.set(conversationId, new LiveConversation(conversationId, p, options.sessionContext));
      await this.core.persist();
    });
  }

  /** The conversations known to the messenger. */
  conversationIds(): string[] {
    return [...this.core.conversations.keys()];
  }

  /** The peer of a conversation, if known. */
  peer(conversationId: string): PeerDevice | undefined {
    const c = this.core.conversations.get(conversationId);
    return c ? { ...c.peer } : undefined;
  }

  /** design §7 fingerprint of a conversation peer's identity key (to compare out of band). */
  peerFingerprint(conversationId: string): string | undefined {
    const c = this.core.conversations.get(conversationId);
    return c ? fingerprint(c.peer.identity_public_key) : undefined;
  }

  /** The sending session of a conversation, or undefined before the first message either way. */
  sessionInfo(conversationId: string): SessionInfo | undefined {
    const c = this.core.conversations.get(conversationId);
    const s = c?.primarySession();
    if (!c || !s) return undefined;
    const postQuantum = protectionOf(this.host, s)?.post_quantum ?? false;
    return { session_id: s.id, protocol: s.protocol, initiator: s.initiator, established: s.established, sessions: c.sessions.length, post_quantum: postQuantum };
  }

  /**
   * How the conversation's sending session was keyed (for a badge: post-quantum PQXDH or hybrid MLS
   * vs classical), or undefined before its first session (or for an MLS session whose group is gone).
   */
  protection(conversationId: string): ConversationProtection | undefined {
    const s = this.core.conversations.get(conversationId)?.primarySession();
    return s ? protectionOf(this.host, s) : undefined;
  }

  /**
   * Whether this device refuses classical sessions: its `requirePostQuantum` option, else the
   * tenant's `require_post_quantum` setting (read once with the client, again after a failed read;
   * {@link refreshPostQuantumPolicy}).
   */
  async requiresPostQuantum(): Promise<boolean> {
    if (this.options.requirePostQuantum === true) return true;
    if (this.tenantRequiresPq === undefined) await this.refreshPostQuantumPolicy();
    return this.tenantRequiresPq === true;
  }

  /**
   * Read the tenant's `require_post_quantum` setting again (`start` does). Without a client: false.
   * A failed read is reported (`policy_unavailable`) and counts as false until a read succeeds.
   */
  async refreshPostQuantumPolicy(): Promise<boolean> {
    const client = this.options.client;
    if (!client) return (this.tenantRequiresPq = false);
    try {
      this.tenantRequiresPq = await tenantRequiresPostQuantum(client, this.deviceId);
    } catch (err) {
      this.tenantRequiresPq = undefined;
      this.emit('error', new SecureMessengerError('policy_unavailable', `reading the tenant's require_post_quantum setting failed: ${describe(err)}`, { cause: err }));
    }
    return this.tenantRequiresPq === true;
  }

  /** Use this transport for sending (replaces the current one). */
  setTransport(transport: SecureTransport): void {
    this.transport = transport;
  }

  /**
   * Where catch-up should resume, per catch-up source of a {@link RealtimeClient}
   * (`initialCursors`): for `conversation:<id>` sources the oldest cursor of that conversation's
   * recently handled messages, for others (e.g. `device:<id>`) the device-wide one; `0` (the
   * beginning) when nothing was handled yet. Messages after it that were already handled are
   * skipped by message_id, so resuming a little early loses nothing and repeats nothing.
   */
  initialCursors(sources: CatchUpSource | CatchUpSource[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of Array.isArray(sources) ? sources : [sources]) {
      const m = /^conversation:(.+)$/.exec(s.key);
      out[s.key] = this.resumeCursor(m ? m[1] : undefined);
    }
    return out;
  }

  /** The resume cursor of one conversation, or of the whole device when none is given (see {@link initialCursors}). */
  resumeCursor(conversationId?: string): string {
    const ring = conversationId === undefined ? this.core.recent : (this.core.conversations.get(conversationId)?.recent ?? []);
    let min: string | undefined;
    for (const r of ring) if (min === undefined || this.compare(r.cursor, min) < 0) min = r.cursor;
    return min ?? '0';
  }

  /**
   * Receive from a realtime client: every `message` it hands over is processed by {@link receive}
   * (the client awaits it before the next one). Unless `options.transport` is false (owners that
   * send over REST), it also becomes the transport. Returns a function that detaches.
   */
  attach(realtime: RealtimeClient, options: { transport?: boolean } = {}): () => void {
    this.realtime = realtime;
    const off = realtime.on('message', (m) => this.receive(m));
    if (options.transport ?? true) this.transport = realtimeTransport(realtime);
    this.detachers.push(off);
    return off;
  }

  /**
   * Hand over the messages a previous run decrypted but did not deliver (in order, with
   * `redelivered: true`), then make sure the service holds enough of our MLS KeyPackages. Call once,
   * after registering `message` listeners and before connecting. A KeyPackage or prekey failure is
   * reported as an `error` event (`key_packages`), not thrown.
   */
  async start(): Promise<void> {
    for (const entry of [...this.core.inbox]) this.receiving = this.receiving.then(() => this.deliver(entry, true));
    await this.receiving;
    await this.refreshPostQuantumPolicy();
    await this.ensureKeyPackages().catch(() => undefined);
    await this.checkOwnKeys();
    if (this.options.prekeys === true && this.upkeepTimer === undefined) {
      // X3DH §3.2: the signed prekey rotates on its schedule while the messenger runs; the device's own directory entries are checked after each upkeep.
      this.upkeepTimer = setInterval(() => void (this.topUp = this.topUpLater().then(() => this.checkOwnKeys())), PREKEY_UPKEEP_MS);
      (this.upkeepTimer as { unref?: () => void }).unref?.();
    }
  }

  /** Check this device's own keys in the key directory (`key-transparency.ts` monitorOwnKeys; `start` and each prekey upkeep run it). */
  checkOwnKeys(): Promise<SecureMessengerError[]> {
    return monitorOwnKeys(this.host);
  }

  /**
   * Publish this device's signed PQ prekey (PQXDH, design §8.34) unless the service already serves
   * it, so peers start X3DH sessions with PQXDH; `ensureKeyPackages` calls it.
   * @returns whether it published (false without a client or without a PQ prekey in the identity).
   * @throws SecureMessengerError `key_packages` (also emitted).
   */
  async ensurePqPrekey(): Promise<boolean> {
    return publishPqPrekey(this.host);
  }

  /**
   * Rotate this device's X25519 signed prekey on its schedule and publish it and a batch of
   * one-time prekeys as needed (`POST /prekeys`, X3DH §3.2; `secure/prekeys.ts` `ensurePrekeys`).
   * New private keys are saved before anything is published. A service without the prekey routes
   * (404 or 405: older than signed prekeys) is skipped: peers keep the legacy path towards us.
   * `ensureKeyPackages` calls it. Only with `options.prekeys`.
   * @returns what was done; undefined with `prekeys` off, without a client with the prekey routes,
   *   or on an older service.
   * @throws SecureMessengerError `key_packages` (also emitted), `stopped`, `persist_failed`.
   */
  async ensurePrekeys(): Promise<PrekeyUpkeep | undefined> {
    return publishPrekeys(this.core, this.host);
  }

  /**
   * Top the service's stock of this device's MLS KeyPackages up to the target when it fell below
   * the minimum (`POST /mls/key-packages`). The private parts are saved before publishing.
   * The PQ prekey and the X25519 prekeys are kept published first ({@link ensurePrekeys}).
   * @returns how many were published (0 when MLS is off or the stock suffices).
   * @throws SecureMessengerError `key_packages` (also emitted).
   */
  async ensureKeyPackages(): Promise<number> {
    const client = this.options.client;
    await this.ensurePqPrekey().catch(() => undefined);
    await this.ensurePrekeys().catch(() => undefined);
    if (!this.mlsAvailable || !client) return 0;
    return publishKeyPackages(this.core, this.host, client, this.minKeyPackages, this.targetKeyPackages);
  }

  /**
   * Process one message from the service (live or history): de-duplicate, decrypt in its
   * conversation's session, save, then hand it to the `message` listeners. Messages are
   * processed one at a time in call order. Never rejects: problems are `error` events.
   */
  receive(message: ReceivedMessage): Promise<void> {
    this.receiving = this.receiving.then(() => this.handle(message));
    return this.receiving;
  }

  /**
   * Encrypt one plaintext in each of several conversations WITHOUT sending it: the wire fields
   * come back, in the order of `conversationIds`, for the caller to send (a room message carries
   * one per recipient, design §8.5). Sessions are started as needed — always X3DH + Double
   * Ratchet, since an MLS session would need its Welcome sent first — and the new states are
   * saved in one write before this resolves, so no message key is ever used twice. An existing
   * MLS session is used when its Welcome is already stored. A sealed wire that is never sent only
   * leaves a gap the peer's ratchet skips. `meta` is the metadata the caller will send with the
   * wires; it is sealed inside each ciphertext too (`metadata.ts`) so recipients can check it.
   * @throws SecureMessengerError `unknown_conversation` (nothing is encrypted then), `send_failed`
   *   (an MLS session whose Welcome is not stored yet), `stopped`, `persist_failed`.
   */
  seal(conversationIds: readonly string[], plaintext: Uint8Array, meta: Pick<SendOptions, 'message_type' | 'priority' | 'topic_id'> = {}): Promise<SealedWire[]> {
    return this.core.exclusive(async () => {
      this.core.ensureRunning();
      const convs: LiveConversation[] = [];
      for (const id of conversationIds) convs.push(await conversationFor(this.host, id));
      const out: SealedWire[] = [];
      for (const conv of convs) {
        const session = conv.primarySession() ?? (await startSession(this.host, conv, false));
        if (session.protocol === 'mls' && session.opening) {
          throw new SecureMessengerError('send_failed', `the MLS session of conversation ${conv.id} awaits its Welcome; send() in it first`, { conversationId: conv.id });
        }
        const wire = await encryptIn(this.host, session, plaintext, resolveMeta(meta));
        out.push({ conversation_id: conv.id, ...wire, protocol: session.protocol, session_id: session.id });
      }
      await this.core.persist();
      return out;
    });
  }

  /**
   * The first message of a conversation whose start message the caller relays itself (A2A channel
   * key exchanges, `secure/a2a.ts`): starts the session if there is none — MLS when `options.mls`,
   * MLS is available here and the peer's KeyPackage can be claimed (checked against the peer's
   * identity key), else X3DH + Double Ratchet — and answers the wire to send: an MLS Welcome (kept
   * as the session's opening until {@link confirmOpening}; asked again, the same Welcome), or
   * `plaintext` sealed in the session (the X3DH initial message for a new ratchet session, or an
   * MLS application message once the Welcome was confirmed). The new state is saved before this
   * resolves.
   * @throws SecureMessengerError `unknown_conversation`, `stopped`, `persist_failed`.
   */
  sealHandshake(conversationId: string, plaintext: Uint8Array, options: { mls: boolean }): Promise<SealedWire> {
    return this.core.exclusive(async () => {
      this.core.ensureRunning();
      const conv = await conversationFor(this.host, conversationId);
      const session = conv.primarySession() ?? (await startSession(this.host, conv, options.mls));
      const wire = session.protocol === 'mls' && session.opening ? session.opening : await encryptIn(this.host, session, plaintext, HANDSHAKE_META);
      await this.core.persist();
      return { conversation_id: conv.id, ...wire, protocol: session.protocol, session_id: session.id };
    });
  }

  /**
   * The service stored the MLS Welcome {@link sealHandshake} answered: later messages of the
   * conversation need not carry it (saved). No-op when there is no pending Welcome.
   */
  confirmOpening(conversationId: string): Promise<void> {
    return this.core.exclusive(async () => {
      const session = this.core.conversations.get(conversationId)?.primarySession();
      if (this.core.failed || !session?.opening) return;
      delete session.opening;
      await this.core.persist();
    });
  }

  /**
   * Encrypt and send structured content (contract §2.4; validated first). The first message of a
   * conversation starts its session (MLS or X3DH + Double Ratchet, contract §1.3).
   * @throws ContentValidationError for invalid content; SecureMessengerError `unknown_conversation`,
   *   `no_transport`, `stopped`, `persist_failed` or `send_failed` (transport error as `cause`);
   *   the transport's scanner error when it refuses the plaintext.
   */
  send(conversationId: string, content: Content, options: SendOptions = {}): Promise<SentMessage> {
    const plaintext = encodeContent(content.type, content.payload);
    const messageType = options.message_type ?? messageTypeFor(content.type);
    return this.sendPlaintext(conversationId, plaintext, { ...options, ...(messageType ? { message_type: messageType } : {}) });
  }

  /** {@link send} of a `text` content. */
  sendText(conversationId: string, text: string, options: SendOptions = {}): Promise<SentMessage> {
    return this.send(conversationId, { type: 'text', payload: { text } }, options);
  }

  /**
   * Encrypt and send raw bytes (the receiver gets `content` undefined unless they are a content
   * envelope). Errors as {@link send}.
   */
  /**
   * The status of the messages this device sent (`pending` -> `sent` ->
   * `delivered` -> `read`, or `failed`; realtime/status.ts): `statuses.get(message_id or
   * client_ref)` and its `status` event. It is `options.statuses`, else the attached realtime
   * client's tracker (subscribe after `attach`), else the messenger's own (sends only, no receipts).
   */
  get statuses(): MessageStatusTracker {
    return this.options.statuses ?? this.realtime?.statuses ?? this.ownStatuses;
  }

  /**
   * Send a read receipt for a received message: everything this device received in its
   * conversation (or room, when `room_id` is set) up to it was read. Over the attached realtime
   * client, else `POST /conversations/{id}/read` (`/rooms/{id}/read`) with the REST client.
   * @throws RealtimeError / ParleyApiError (404 not a message to this device, 409 not received);
   *   SecureMessengerError `no_transport` with neither a realtime nor a REST client, or for a
   *   rental-room message (rental rooms have no read receipts).
   */
  markRead(message: Pick<SecureMessage, 'message_id' | 'conversation_id' | 'room_id' | 'rental_id'>): Promise<MessageReadAck | RoomMessageReadAck> {
    return sendReadReceipt(this.realtime, this.options.client, this.deviceId, message);
  }

  async sendPlaintext(conversationId: string, plaintext: Uint8Array, options: SendOptions = {}): Promise<SentMessage> {
    if (this.core.failed) throw new SecureMessengerError('stopped', 'the messenger stopped after a failed state write', { conversationId });
    const transport = this.transport;
    if (!transport) throw new SecureMessengerError('no_transport', 'no transport: call attach() or setTransport() first', { conversationId });
    return sendMessage(this.core, this.host, this.dispatching, transport, () => this.statuses, conversationId, plaintext, options);
  }

  /**
   * Stop listening to attached realtime clients and wait until every message received so far is
   * processed and every send handed to the transport settled. The realtime client stays open.
   */
  async close(): Promise<void> {
    for (const off of this.detachers.splice(0)) off();
    this.autoRead.stop();
    if (this.upkeepTimer !== undefined) clearInterval(this.upkeepTimer);
    this.upkeepTimer = undefined;
    await this.receiving;
    await this.dispatching.settled();
    await this.topUp;
    await this.core.idle;
    await this.flush().catch(() => undefined); // persist_failed, reported
  }

  /**
   * Write now what waits for the next state write (delivered messages leaving the saved pending
   * list; see the file comment). `close()` does it too.
   * @throws SecureMessengerError `persist_failed` (the messenger stops, as after any failed write).
   */
  flush(): Promise<void> {
    return this.core.flush();
  }

  // ------------------------------------------------------------------ receiving

  private async handle(m: ReceivedMessage): Promise<void> {
    if (this.core.failed) {
      if (!this.reportedStop) {
        this.reportedStop = true;
        this.emit('error', new SecureMessengerError('stopped', 'the messenger stopped after a failed state write; messages are left for the next run', { messageId: m.message_id }));
      }
      return;
    }
    let entry: InboxEntry | undefined;
    try {
      entry = await this.core.exclusive(() => processReceived(this.core, this.host, m));
    } catch {
      return; // persist_failed, already reported; nothing was acknowledged
    }
    if (entry) await this.deliver(entry, false);
  }

  private async deliver(entry: InboxEntry, redelivered: boolean): Promise<void> {
    if (this.core.failed) return;
    const message = toSecureMessage(entry, redelivered);
    await this.emitSerial('message', message);
    if (this.options.autoRead) this.autoRead.schedule(message);
    if (this.core.failed) return;
    // Guards nothing (a crash before it is written hands the message over again, `redelivered`):
    // written with the next state write (see the file comment). A write in flight already took its
    // snapshot, so it neither loses nor undoes this.
    const i = this.core.inbox.findIndex((e) => e.message_id === entry.message_id);
    if (i < 0) return;
    this.core.inbox.splice(i, 1);
    this.core.writeLater();
  }

  private topUpLater(): Promise<unknown> {
    return Promise.resolve().then(() => this.ensureKeyPackages().catch(() => undefined));
  }

  /**
   * This device's prekeys for a second messenger of the device ({@link SecureMessengerOptions.prekeysFrom}).
   * Only a messenger opened with `prekeys: true` holds any.
   */
  prekeySharing(): SharedPrekeys {
    return prekeySharing(this.core, this.host);
  }
}
