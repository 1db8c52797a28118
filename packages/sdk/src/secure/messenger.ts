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
import { ParleyApiError } from '../client/errors.js';
import { decodeContent, encodeContent, type Content } from '../content/types.js';
import { decodeFrame, type WireMessage } from '../crypto/frame.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import { CryptoError, equalBytes, fingerprint, hexToBytes, KEY_BYTES } from '../crypto/primitives.js';
import type { SignedPqPrekey } from '../crypto/pq-prekey.js';
import { PrekeyStore } from '../crypto/prekeys.js';
import { RatchetSession, type PeerDevice } from '../crypto/session.js';
import { base64ToBytes, bytesToBase64 } from '../mls/base64.js';
import type { CiphersuiteName } from 'ts-mls';
import { ciphersuiteId, chooseCiphersuite, MLS_HYBRID_CIPHERSUITE } from '../mls/ciphersuites.js';
import { inspectKeyPackage, MlsClient, type MlsRosterMember } from '../mls/client.js';
import { MlsClientError } from '../mls/errors.js';
import { selectProtocol, type SessionProtocol } from '../mls/protocol.js';
import { decodeMlsEnvelope, encodeMlsEnvelope, isMlsHeaderBlob } from '../mls/wire.js';
import { defaultCompareCursors } from '../realtime/client.js';
import type { RealtimeClient } from '../realtime/client.js';
import { MessageStatusTracker } from '../realtime/status.js';
import type { MessageReadAck, RoomMessageReadAck } from '@parley/protocol';
import { TypedEmitter } from '../realtime/emitter.js';
import type { CatchUpSource, OutgoingMessage } from '../realtime/types.js';
import type { SessionStore } from '../storage.js';
import { KeyedQueue } from '../keyed-queue.js';
import { LiveConversation, mlsSessionId, ratchetSessionId, type LiveSession } from './conversation.js';
import { messageTypeFor } from './decisions.js';
import { deliveredMeta, metaMismatch, MetaEnvelopeError, openMeta, resolveMeta, sealMeta, type AuthenticatedMeta, type MetaField } from './metadata.js';
import { emptyState, parseState, type HandledRef, type InboxEntry, type MessengerState } from './state.js';
import { claimPeerPqPrekey, ensurePqPrekey, keyPackageStock, tenantRequiresPostQuantum } from './post-quantum.js';
import { claimPeerPrekeys, ensurePrekeys, speaksPrekeys, type PeerPrekeys, type PrekeyUpkeep } from './prekeys.js';
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
  type SessionEvent,
  type SessionInitiator,
  type SharedPrekeys,
} from './types.js';

/** Handled message refs kept for the whole device (de-duplication and resume window). */
export const DEVICE_RECENT = 256;
/**
 * How long a change that guards nothing (a delivered message leaving the saved pending list) may
 * wait for the next state write before it is written on its own (ms).
 */
export const DEFERRED_WRITE_MS = 100;
/** How often a messenger holding prekeys checks their rotation and one-time stock (ms). */
const PREKEY_UPKEEP_MS = 6 * 60 * 60 * 1000;

/** The metadata sealed in a handshake (the label the A2A layer gives key exchanges on receipt). */
const HANDSHAKE_META: AuthenticatedMeta = { message_type: 'key_exchange', priority: 'normal' };

/** What {@link SecureMessenger.sessionInfo} reports about a conversation's sending session. */
export interface SessionInfo {
  session_id: string;
  protocol: SessionProtocol;
  initiator: SessionInitiator;
  /** A message from the peer was read in it. */
  established: boolean;
  /** Sessions kept for the conversation (the sending one included). */
  sessions: number;
  /**
   * The session's keys come from a hybrid post-quantum agreement (issue 16): PQXDH for X3DH +
   * Double Ratchet, the X-Wing ciphersuite for MLS.
   */
  post_quantum: boolean;
}

/**
 * How a conversation's sending session was keyed ({@link SecureMessenger.protection}):
 * `pqxdh` (X3DH + Double Ratchet keyed with PQXDH rev. 3), `x3dh` (classical X3DH),
 * `mls-hybrid` (MLS, RFC 9420, with the X-Wing ciphersuite), `mls-classical` (another MLS suite).
 */
export type ProtectionScheme = 'pqxdh' | 'x3dh' | 'mls-hybrid' | 'mls-classical';

/** What {@link SecureMessenger.protection} reports. */
export interface ConversationProtection {
  scheme: ProtectionScheme;
  /** `pqxdh` or `mls-hybrid`: the keys resist a quantum adversary recording today's traffic. */
  post_quantum: boolean;
  /** The MLS group's ciphersuite (MLS sessions only). */
  ciphersuite?: CiphersuiteName;
}

/** The MLS group id prefix of a conversation's 1:1 groups. */
function groupPrefix(conversationId: string): string {
  return `parley:${conversationId}:`;
}

/** The conversation id in a 1:1 group id `parley:<conversation id>:<random UUID>`, or undefined. */
function groupConversationId(groupId: string): string | undefined {
  const end = groupId.lastIndexOf(':');
  return groupId.startsWith('parley:') && end > 'parley:'.length ? groupId.slice('parley:'.length, end) : undefined;
}

function randomId(): string {
  return globalThis.crypto.randomUUID();
}

function now(): string {
  return new Date().toISOString();
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function checkPeer(peer: PeerDevice): PeerDevice {
  if (!peer || typeof peer.device_id !== 'string' || peer.device_id.length === 0) throw new TypeError('peer.device_id is required');
  hexToBytes(peer.identity_public_key, KEY_BYTES, 'peer identity_public_key');
  hexToBytes(peer.ephemeral_public_key, KEY_BYTES, 'peer ephemeral_public_key');
  return { device_id: peer.device_id, identity_public_key: peer.identity_public_key.toLowerCase(), ephemeral_public_key: peer.ephemeral_public_key.toLowerCase() };
}

/** An outgoing message built under the lock, sent after it. */
interface Prepared {
  wires: OutgoingMessage[];
  /** Set when `wires[0]` is the session-starting message (MLS Welcome) still to confirm. */
  opening: { session: LiveSession; conversation: LiveConversation } | undefined;
  session: LiveSession;
}

/**
 * End-to-end encrypted messaging of one local device (see the file comment). Create with
 * {@link SecureMessenger.open}; call {@link start} once listeners are registered.
 */
export class SecureMessenger extends TypedEmitter<SecureMessengerEvents> {
  /** The local device id. */
  readonly deviceId: string;
  private readonly identity: DeviceIdentity;
  private readonly store: SessionStore;
  private readonly storeKey: string;
  private readonly options: SecureMessengerOptions;
  private readonly mlsEnabled: boolean;
  private readonly minKeyPackages: number;
  private readonly targetKeyPackages: number;
  private readonly mlsCiphersuites: readonly CiphersuiteName[] | undefined;
  private readonly compare: (a: string, b: string) => number;
  private transport: SecureTransport | undefined;
  private mls: MlsClient | undefined;
  /**
   * This device's X25519 signed and one-time prekeys (X3DH §3.2), saved with the rest of the state:
   * created when `options.prekeys` is on, kept once saved (initial messages in flight still need them).
   */
  private prekeys: PrekeyStore | undefined;
  private conversations = new Map<string, LiveConversation>();
  private recent: HandledRef[] = [];
  private inbox: InboxEntry[] = [];
  /** The last state written durably (rollback point). */
  private saved = '';
  /** The state holds a change not written yet that may wait for the next write ({@link DEFERRED_WRITE_MS}). */
  private unsaved = false;
  private deferredTimer: ReturnType<typeof setTimeout> | undefined;
  private lock: Promise<void> = Promise.resolve();
  private receiving: Promise<void> = Promise.resolve();
  private readonly dispatching = new KeyedQueue();
  private readonly sessionEvents: SessionEvent[] = [];
  /** One-time prekeys of `options.prekeysFrom` used by sessions not yet saved (deleted after the save). */
  private readonly sharedPrekeyUses: string[] = [];
  private readonly detachers: (() => void)[] = [];
  private _failed = false;
  private reportedStop = false;
  private topUp: Promise<unknown> | undefined;
  /** The realtime client attached last (receipts, read receipts). */
  private realtime: RealtimeClient | undefined;
  private readonly ownStatuses = new MessageStatusTracker();
  /** `autoRead`: the latest received message per conversation or room, read when the timer fires. */
  private readonly toRead = new Map<string, SecureMessage>();
  private readTimer: ReturnType<typeof setTimeout> | undefined;
  /** Periodic prekey upkeep (rotation, one-time top-up) with `options.prekeys`. */
  private upkeepTimer: ReturnType<typeof setInterval> | undefined;
  /** The tenant's `require_post_quantum` as last read (undefined: not read yet, or the read failed). */
  private tenantRequiresPq: boolean | undefined;

  private constructor(options: SecureMessengerOptions, deviceId: string) {
    super((err, event) => {
      if (event !== 'error') {
        this.emit('error', new SecureMessengerError('listener_failed', `a "${String(event)}" listener failed: ${describe(err)}`, { cause: err }));
      }
    });
    this.options = options;
    this.deviceId = deviceId;
    this.identity = options.identity;
    this.store = options.store;
    this.storeKey = options.storeKey ?? `secure-${deviceId}`;
    const mls = options.mls;
    const mlsOpts = typeof mls === 'object' ? mls : {};
    this.mlsEnabled = options.client !== undefined && (typeof mls === 'boolean' ? mls : (mlsOpts.enabled ?? true));
    this.minKeyPackages = Math.max(1, mlsOpts.minKeyPackages ?? 3);
    this.targetKeyPackages = Math.max(this.minKeyPackages, mlsOpts.targetKeyPackages ?? 10);
    this.mlsCiphersuites = mlsOpts.ciphersuites;
    this.compare = options.compareCursors ?? defaultCompareCursors;
    this.transport = options.transport;
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
    const text = await m.store.load(m.storeKey);
    const state = text === undefined ? emptyState(deviceId) : parseState(text, deviceId);
    await m.restore(state);
    let dirty = text === undefined || (state.prekeys === undefined && m.prekeys !== undefined);
    if (m.mls === undefined && m.mlsEnabled) {
      m.mls = await MlsClient.create({
        deviceId,
        signatureKeyPair: m.signatureKeyPair(),
        validateCredential: (id, key) => m.validateCredential(id, key),
        groupRoster: (groupId) => m.groupRoster(groupId),
        ...(m.mlsCiphersuites ? { ciphersuites: m.mlsCiphersuites } : {}),
      });
      dirty = true;
    }
    if (dirty || text === undefined) await m.persist();
    else m.saved = text;
    return m;
  }

  // ------------------------------------------------------------------ public API

  /** True once a state write failed: the messenger refuses work (see the file comment). */
  get failed(): boolean {
    return this._failed;
  }

  /** Whether new sessions may use MLS from this side (contract §1.3). */
  get mlsAvailable(): boolean {
    return this.mlsEnabled && this.mls !== undefined;
  }

  /** Number of decrypted messages saved but not yet handed to the application. */
  get pendingCount(): number {
    return this.inbox.length;
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
    return this.exclusive(async () => {
      this.ensureRunning();
      const existing = this.conversations.get(conversationId);
      if (existing) {
        if (existing.peer.device_id === p.device_id && existing.peer.identity_public_key === p.identity_public_key) return;
        throw new Error(`conversation ${conversationId} already has peer ${existing.peer.device_id} with other keys`);
      }
      this.conversations.set(conversationId, new LiveConversation(conversationId, p, options.sessionContext));
      await this.persist();
    });
  }

  /** The conversations known to the messenger. */
  conversationIds(): string[] {
    return [...this.conversations.keys()];
  }

  /** The peer of a conversation, if known. */
  peer(conversationId: string): PeerDevice | undefined {
    const c = this.conversations.get(conversationId);
    return c ? { ...c.peer } : undefined;
  }

  /** design §7 fingerprint of a conversation peer's identity key (to compare out of band). */
  peerFingerprint(conversationId: string): string | undefined {
    const c = this.conversations.get(conversationId);
    return c ? fingerprint(c.peer.identity_public_key) : undefined;
  }

  /** The sending session of a conversation, or undefined before the first message either way. */
  sessionInfo(conversationId: string): SessionInfo | undefined {
    const c = this.conversations.get(conversationId);
    const s = c?.primarySession();
    if (!c || !s) return undefined;
    const postQuantum = this.protectionOf(s)?.post_quantum ?? false;
    return { session_id: s.id, protocol: s.protocol, initiator: s.initiator, established: s.established, sessions: c.sessions.length, post_quantum: postQuantum };
  }

  /**
   * How the conversation's sending session was keyed (for a badge: post-quantum PQXDH or hybrid MLS
   * vs classical), or undefined before its first session (or for an MLS session whose group is gone).
   */
  protection(conversationId: string): ConversationProtection | undefined {
    const s = this.conversations.get(conversationId)?.primarySession();
    return s ? this.protectionOf(s) : undefined;
  }

  private protectionOf(s: LiveSession): ConversationProtection | undefined {
    if (s.ratchet) return { scheme: s.ratchet.postQuantum ? 'pqxdh' : 'x3dh', post_quantum: s.ratchet.postQuantum };
    if (!this.mls?.hasGroup(s.groupId!)) return undefined;
    const ciphersuite = this.mls.groupCiphersuite(s.groupId!);
    const hybrid = ciphersuite === MLS_HYBRID_CIPHERSUITE;
    return { scheme: hybrid ? 'mls-hybrid' : 'mls-classical', post_quantum: hybrid, ciphersuite };
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

  /** Report a refused post-quantum downgrade (`pq_downgrade`) and answer the error to throw. */
  private downgrade(message: string, extra: { conversationId?: string; cause?: unknown } = {}): SecureMessengerError {
    const e = new SecureMessengerError('pq_downgrade', message, extra);
    this.emit('error', e);
    return e;
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
    const ring = conversationId === undefined ? this.recent : (this.conversations.get(conversationId)?.recent ?? []);
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
    for (const entry of [...this.inbox]) this.receiving = this.receiving.then(() => this.deliver(entry, true));
    await this.receiving;
    await this.refreshPostQuantumPolicy();
    await this.ensureKeyPackages().catch(() => undefined);
    if (this.options.prekeys === true && this.upkeepTimer === undefined) {
      // X3DH §3.2: the signed prekey rotates on its schedule while the messenger runs.
      this.upkeepTimer = setInterval(() => void (this.topUp = this.topUpLater()), PREKEY_UPKEEP_MS);
      (this.upkeepTimer as { unref?: () => void }).unref?.();
    }
  }

  /**
   * Publish this device's signed PQ prekey (PQXDH, design §8.34) unless the service already serves
   * it, so peers start X3DH sessions with PQXDH; `ensureKeyPackages` calls it.
   * @returns whether it published (false without a client or without a PQ prekey in the identity).
   * @throws SecureMessengerError `key_packages` (also emitted).
   */
  async ensurePqPrekey(): Promise<boolean> {
    const client = this.options.client;
    if (!client) return false;
    try {
      return await ensurePqPrekey(client, this.identity, this.deviceId);
    } catch (err) {
      const e = new SecureMessengerError('key_packages', `publishing the PQ prekey failed: ${describe(err)}`, { cause: err });
      this.emit('error', e);
      throw e;
    }
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
    const client = this.options.client;
    const store = this.prekeys;
    if (this.options.prekeys !== true || !store || !client || !speaksPrekeys(client)) return undefined;
    try {
      return await ensurePrekeys(client, this.identity, this.deviceId, store, () => this.savePrekeys(store));
    } catch (err) {
      if (err instanceof ParleyApiError && (err.status === 404 || err.status === 405)) return undefined;
      const e = err instanceof SecureMessengerError ? err : new SecureMessengerError('key_packages', `publishing the X25519 prekeys failed: ${describe(err)}`, { cause: err });
      if (e.code === 'key_packages') this.emit('error', e);
      throw e;
    }
  }

  /** Save the state with `store`'s new keys (under the lock); refused once a failed write reloaded the state. */
  private savePrekeys(store: PrekeyStore): Promise<void> {
    return this.exclusive(async () => {
      this.ensureRunning();
      if (store !== this.prekeys) throw new SecureMessengerError('stopped', 'the prekey store was reloaded after a failed write');
      await this.persist();
    });
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
    try {
      // One stock per suite (issue 16): hybrid X-Wing KeyPackages only where the service labels suites.
      const stock = keyPackageStock(await client.keyPackageCount(this.deviceId, { deviceId: this.deviceId }), await this.offeredSuites());
      let published = 0;
      for (const [suite, available] of stock) {
        if (available >= this.minKeyPackages) continue;
        const count = this.targetKeyPackages - available;
        const packages = await this.exclusive(async () => {
          this.ensureRunning();
          const kps = await this.mls!.generateKeyPackages(count, suite);
          await this.persist();
          return kps;
        });
        await client.publishKeyPackages({ key_packages: packages.map(bytesToBase64), cipher_suite: ciphersuiteId(suite) }, { deviceId: this.deviceId });
        published += count;
      }
      return published;
    } catch (err) {
      const e = err instanceof SecureMessengerError ? err : new SecureMessengerError('key_packages', `publishing MLS KeyPackages failed: ${describe(err)}`, { cause: err });
      if (e.code === 'key_packages') this.emit('error', e);
      throw e;
    }
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
    return this.exclusive(async () => {
      this.ensureRunning();
      const convs: LiveConversation[] = [];
      for (const id of conversationIds) convs.push(await this.conversationFor(id));
      const out: SealedWire[] = [];
      for (const conv of convs) {
        const session = conv.primarySession() ?? (await this.startSession(conv, false));
        if (session.protocol === 'mls' && session.opening) {
          throw new SecureMessengerError('send_failed', `the MLS session of conversation ${conv.id} awaits its Welcome; send() in it first`, { conversationId: conv.id });
        }
        const wire = await this.encryptIn(session, plaintext, resolveMeta(meta));
        out.push({ conversation_id: conv.id, ...wire, protocol: session.protocol, session_id: session.id });
      }
      await this.persist();
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
    return this.exclusive(async () => {
      this.ensureRunning();
      const conv = await this.conversationFor(conversationId);
      const session = conv.primarySession() ?? (await this.startSession(conv, options.mls));
      const wire = session.protocol === 'mls' && session.opening ? session.opening : await this.encryptIn(session, plaintext, HANDSHAKE_META);
      await this.persist();
      return { conversation_id: conv.id, ...wire, protocol: session.protocol, session_id: session.id };
    });
  }

  /**
   * The service stored the MLS Welcome {@link sealHandshake} answered: later messages of the
   * conversation need not carry it (saved). No-op when there is no pending Welcome.
   */
  confirmOpening(conversationId: string): Promise<void> {
    return this.exclusive(async () => {
      const session = this.conversations.get(conversationId)?.primarySession();
      if (this._failed || !session?.opening) return;
      delete session.opening;
      await this.persist();
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
   * The status of the messages this device sent (issue 20 part 1: `pending` -> `sent` ->
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
    const rt = this.realtime;
    const client = this.options.client;
    if (message.rental_id !== undefined) return Promise.reject(new SecureMessengerError('no_transport', 'rental rooms have no read receipts', { conversationId: message.conversation_id, messageId: message.message_id }));
    if (message.room_id !== undefined) {
      if (rt) return rt.markRoomRead(message.room_id, message.message_id);
      if (client) return client.readRoom(message.room_id, { up_to_room_message_id: message.message_id }, { deviceId: this.deviceId });
    } else {
      if (rt) return rt.markRead(message.conversation_id, message.message_id);
      if (client) return client.readConversation(message.conversation_id, { up_to_message_id: message.message_id }, { deviceId: this.deviceId });
    }
    return Promise.reject(new SecureMessengerError('no_transport', 'no realtime or REST client to send the read receipt with', { conversationId: message.conversation_id }));
  }

  /** `autoRead`: read the latest handled message of each conversation or room shortly (reads are marks: one covers the ones before); rental rooms have no read receipts. */
  private readLater(m: SecureMessage): void {
    if (m.rental_id !== undefined) return;
    this.toRead.set(m.room_id !== undefined ? `room:${m.room_id}` : `conversation:${m.conversation_id}`, m);
    this.readTimer ??= setTimeout(() => {
      this.readTimer = undefined;
      const batch = [...this.toRead.values()];
      this.toRead.clear();
      for (const read of batch) {
        this.markRead(read).catch((err: unknown) => this.emit('error', new SecureMessengerError('send_failed', `read receipt for ${read.message_id} failed: ${describe(err)}`, { conversationId: read.conversation_id, messageId: read.message_id, cause: err })));
      }
    }, 50);
  }

  async sendPlaintext(conversationId: string, plaintext: Uint8Array, options: SendOptions = {}): Promise<SentMessage> {
    if (this._failed) throw new SecureMessengerError('stopped', 'the messenger stopped after a failed state write', { conversationId });
    const transport = this.transport;
    if (!transport) throw new SecureMessengerError('no_transport', 'no transport: call attach() or setTransport() first', { conversationId });
    const meta = {
      ...(options.message_type !== undefined ? { message_type: options.message_type } : {}),
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
      ...(options.topic_id !== undefined ? { topic_id: options.topic_id } : {}),
      ...(options.message_group_id !== undefined ? { message_group_id: options.message_group_id } : {}),
    };
    if (transport.scan) await transport.scan(plaintext, { conversation_id: conversationId, ...meta });
    // One reference for the message's status from the queue on (the realtime transport sends it as the frame's client_ref).
    const ref = randomId();
    const statuses = this.statuses;
    const target = { conversation_id: conversationId };
    statuses.pending(ref, target);
    let receipt;
    let prepared: Prepared;
    try {
      prepared = await this.exclusive(() => this.prepare(conversationId, plaintext, { ...meta, client_ref: ref }));
      receipt = await this.dispatch(conversationId, transport, prepared);
    } catch (err) {
      statuses.failed(ref, describe(err));
      throw err;
    }
    statuses.sent(ref, target, { message_id: receipt.message_id, ...(receipt.cursor !== undefined ? { cursor: receipt.cursor } : {}), ...(receipt.timestamp !== undefined ? { timestamp: receipt.timestamp } : {}) });
    return {
      message_id: receipt.message_id,
      conversation_id: conversationId,
      client_ref: ref,
      ...(receipt.cursor !== undefined ? { cursor: receipt.cursor } : {}),
      ...(receipt.timestamp !== undefined ? { timestamp: receipt.timestamp } : {}),
      protocol: prepared.session.protocol,
      session_id: prepared.session.id,
    };
  }

  /**
   * Stop listening to attached realtime clients and wait until every message received so far is
   * processed and every send handed to the transport settled. The realtime client stays open.
   */
  async close(): Promise<void> {
    for (const off of this.detachers.splice(0)) off();
    if (this.readTimer !== undefined) clearTimeout(this.readTimer);
    this.readTimer = undefined;
    if (this.upkeepTimer !== undefined) clearInterval(this.upkeepTimer);
    this.upkeepTimer = undefined;
    this.toRead.clear();
    await this.receiving;
    await this.dispatching.settled();
    await this.topUp;
    await this.lock;
    await this.flush().catch(() => undefined); // persist_failed, reported
  }

  /**
   * Write now what waits for the next state write (delivered messages leaving the saved pending
   * list; see the file comment). `close()` does it too.
   * @throws SecureMessengerError `persist_failed` (the messenger stops, as after any failed write).
   */
  flush(): Promise<void> {
    if (this.deferredTimer !== undefined) clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
    return this.exclusive(async () => {
      if (this._failed || !this.unsaved) return;
      await this.persist();
    });
  }

  /** Note a change that may wait for the next state write, at most {@link DEFERRED_WRITE_MS}. */
  private writeLater(): void {
    this.unsaved = true;
    this.deferredTimer ??= setTimeout(() => {
      this.deferredTimer = undefined;
      this.flush().catch(() => undefined); // persist_failed, reported
    }, DEFERRED_WRITE_MS);
  }

  // ------------------------------------------------------------------ receiving

  private async handle(m: ReceivedMessage): Promise<void> {
    if (this._failed) {
      if (!this.reportedStop) {
        this.reportedStop = true;
        this.emit('error', new SecureMessengerError('stopped', 'the messenger stopped after a failed state write; messages are left for the next run', { messageId: m.message_id }));
      }
      return;
    }
    let entry: InboxEntry | undefined;
    try {
      entry = await this.exclusive(() => this.process(m));
    } catch {
      return; // persist_failed, already reported; nothing was acknowledged
    }
    if (entry) await this.deliver(entry, false);
  }

  /** Decrypt and save one message (under the lock); returns the entry to deliver, if any. */
  private async process(m: ReceivedMessage): Promise<InboxEntry | undefined> {
    if (this._failed) return undefined;
    let conv = this.conversations.get(m.conversation_id);
    if (this.recent.some((r) => r.id === m.message_id) || conv?.handled(m.message_id)) return undefined;
    const ref = { id: m.message_id, cursor: m.cursor };
    // Room envelopes carry room timeline cursors: they stay out of the device-wide resume window.
    const deviceWide = m.room_id === undefined && m.rental_id === undefined;
    if (m.sender_device_id === this.deviceId) {
      // Our own message (history, or another socket of ours): nothing to decrypt. Saved with the next write.
      this.remember(ref, conv, deviceWide);
      return undefined;
    }
    const fail = async (error: SecureMessengerError): Promise<undefined> => {
      this.remember(ref, conv, deviceWide);
      await this.persist();
      this.emit('error', error);
      return undefined;
    };
    const ids = { conversationId: m.conversation_id, messageId: m.message_id };
    if (!conv) {
      let peer: PeerDevice | undefined;
      try {
        peer = this.options.resolvePeer ? await this.options.resolvePeer(m.conversation_id, m.sender_device_id) : undefined;
      } catch (err) {
        return fail(new SecureMessengerError('unknown_conversation', `could not resolve the peer of conversation ${m.conversation_id}: ${describe(err)}`, { ...ids, cause: err }));
      }
      if (!peer) return fail(new SecureMessengerError('unknown_conversation', `message ${m.message_id} is for unknown conversation ${m.conversation_id}; skipped`, ids));
      conv = new LiveConversation(m.conversation_id, checkPeer(peer));
      this.conversations.set(m.conversation_id, conv);
    }
    if (m.sender_device_id !== conv.peer.device_id) {
      return fail(new SecureMessengerError('wrong_sender', `message ${m.message_id} comes from ${m.sender_device_id}, not the conversation's peer ${conv.peer.device_id}; skipped`, ids));
    }
    const wire: WireMessage = { header_blob: m.header_blob, ciphertext: m.ciphertext };
    const protocol: SessionProtocol = isMlsHeaderBlob(m.header_blob) ? 'mls' : 'x3dh-dr';
    let plaintext: Uint8Array | undefined;
    try {
      plaintext = protocol === 'mls' ? await this.readMls(conv, wire) : await this.readRatchet(conv, wire);
    } catch (err) {
      return fail(receiveError(err, ids));
    }
    if (plaintext === undefined) {
      this.remember(ref, conv, deviceWide);
      await this.persist(); // a session-control message (Welcome, commit)
      return undefined;
    }
    let opened: ReturnType<typeof openMeta>;
    try {
      opened = openMeta(plaintext);
    } catch (err) {
      // The session state advanced (the message key is spent): saved by fail().
      return fail(receiveError(err, ids));
    }
    this.remember(ref, conv, deviceWide);
    const mismatch = metaMismatch(m, opened.meta);
    const meta = deliveredMeta(m, opened.meta);
    const entry: InboxEntry = {
      message_id: m.message_id,
      conversation_id: m.conversation_id,
      sender_device_id: m.sender_device_id,
      timestamp: m.timestamp,
      cursor: m.cursor,
      message_type: meta.message_type,
      priority: meta.priority,
      ...(meta.topic_id !== undefined ? { topic_id: meta.topic_id } : {}),
      ...(mismatch.length > 0 ? { metadata_mismatch: mismatch } : {}),
      ...(m.message_group_id ? { message_group_id: m.message_group_id } : {}),
      ...(m.room_id !== undefined ? { room_id: m.room_id } : {}),
      ...(m.rental_id !== undefined ? { rental_id: m.rental_id } : {}),
      protocol,
      plaintext: bytesToBase64(opened.plaintext),
    };
    this.inbox.push(entry);
    await this.persist();
    if (mismatch.length > 0) this.emit('error', metadataMismatchError(m, meta, mismatch));
    return entry;
  }

  /** X3DH + Double Ratchet: find or accept the session, decrypt. */
  private async readRatchet(conv: LiveConversation, wire: WireMessage): Promise<Uint8Array> {
    const x3dh = decodeFrame(wire).header.x3dh;
    if (x3dh) {
      const existing = conv.session(`dr:${x3dh.ephemeral_key}`);
      if (existing?.ratchet) return this.decryptIn(existing, wire);
      if (this.seenInitialMessage(conv.peer.device_id, x3dh.ephemeral_key)) {
        throw new SecureMessengerError('session_rejected', 'a replayed X3DH initial message (a session from it was already accepted with this device)');
      }
      if (x3dh.pq === undefined && (await this.requiresPostQuantum())) {
        throw new SecureMessengerError('pq_downgrade', 'a classical X3DH initial message refused: post-quantum is required (PQXDH)');
      }
      if (x3dh.signed_prekey_id === undefined && this.options.requireSignedPrekeys === true) {
        throw new SecureMessengerError('prekey_refused', 'an X3DH initial message on the unsigned ephemeral key refused: signed prekeys are required');
      }
      let accepted;
      try {
        accepted = RatchetSession.respond(this.identity, wire, conv.peer.identity_public_key, {
          peerDeviceId: conv.peer.device_id,
          conversationId: conv.sessionContext,
          ...(this.responderPrekeys() ? { prekeys: this.responderPrekeys()! } : {}),
        });
      } catch (err) {
        throw new SecureMessengerError('session_rejected', `X3DH initial message refused: ${describe(err)}`, { cause: err });
      }
      // X3DH §3.4: the one-time prekey is deleted now, saved in the same write as the session (or,
      // held by another messenger of the device, deleted there once this session is saved).
      if (accepted.oneTimePrekeyId !== undefined) {
        if (this.prekeys) {
          this.prekeys.consumeOneTime(accepted.oneTimePrekeyId);
          this.topUp = this.topUpLater(); // publish more one-time prekeys when few are left
        } else this.sharedPrekeyUses.push(accepted.oneTimePrekeyId);
      }
      conv.rememberX3dh(x3dh.ephemeral_key);
      await this.adoptPeerSession(conv, {
        id: ratchetSessionId(accepted.session),
        protocol: 'x3dh-dr',
        initiator: 'peer',
        established: true,
        createdAt: now(),
        ratchet: accepted.session,
      });
      return accepted.plaintext;
    }
    let last: unknown = new CryptoError('decrypt_failed', 'no X3DH + Double Ratchet session with this peer');
    for (const s of conv.ratchetCandidates()) {
      try {
        return this.decryptIn(s, wire);
      } catch (err) {
        last = err; // the session is unchanged; try the next one
      }
    }
    throw last;
  }

  /**
   * Whether an X3DH initial message (EK_A hex) from `peerDeviceId` was accepted before in any
   * conversation with that device: replay memory is per peer device, so the service cannot start
   * a session again by replaying its initial message elsewhere or after the session was dropped.
   */
  private seenInitialMessage(peerDeviceId: string, ephemeralKey: string): boolean {
    for (const c of this.conversations.values()) {
      if (c.peer.device_id === peerDeviceId && c.seenX3dh.includes(ephemeralKey)) return true;
    }
    return false;
  }

  private decryptIn(session: LiveSession, wire: WireMessage): Uint8Array {
    const plaintext = session.ratchet!.decrypt(wire);
    session.established = true;
    return plaintext;
  }

  /** MLS: join from a Welcome, or process a group message. Returns undefined for control messages. */
  private async readMls(conv: LiveConversation, wire: WireMessage): Promise<Uint8Array | undefined> {
    const mls = this.mls;
    if (!mls) throw new SecureMessengerError('session_rejected', 'an MLS message, but MLS is not enabled on this device');
    const { header, message } = decodeMlsEnvelope(wire);
    if (header.kind === 'welcome') {
      // The same Welcome again (its sender re-sent it after a crash): already joined.
      if (conv.session(mlsSessionId(header.group_id))) return undefined;
      // A Welcome the service moved from another conversation: refused before it spends our
      // KeyPackage (the group id inside the Welcome is checked again after joining).
      if (!header.group_id.startsWith(groupPrefix(conv.id))) {
        throw new SecureMessengerError('session_rejected', `MLS Welcome to group ${header.group_id} does not belong to conversation ${conv.id}`);
      }
      let joined;
      try {
        joined = await mls.joinFromWelcome(message);
      } catch (err) {
        throw new SecureMessengerError('session_rejected', `MLS Welcome refused: ${describe(err)}`, { cause: err });
      }
      const members = [...joined.members].sort();
      const expected = [conv.peer.device_id, this.deviceId].sort();
      if (!joined.groupId.startsWith(groupPrefix(conv.id)) || members.length !== 2 || members[0] !== expected[0] || members[1] !== expected[1]) {
        await mls.deleteGroup(joined.groupId);
        throw new SecureMessengerError('session_rejected', `MLS Welcome to group ${joined.groupId} with members ${members.join(', ')} does not fit this 1:1 conversation`);
      }
      const suite = mls.groupCiphersuite(joined.groupId);
      if (suite !== MLS_HYBRID_CIPHERSUITE && (await this.requiresPostQuantum())) {
        await mls.deleteGroup(joined.groupId);
        throw new SecureMessengerError('pq_downgrade', `MLS Welcome to a group of ciphersuite ${suite} refused: not hybrid, and post-quantum is required`);
      }
      await this.adoptPeerSession(conv, { id: mlsSessionId(joined.groupId), protocol: 'mls', initiator: 'peer', established: true, createdAt: now(), groupId: joined.groupId });
      this.topUp = this.topUpLater();
      return undefined;
    }
    const session = conv.session(mlsSessionId(header.group_id));
    if (!session) throw new MlsClientError('unknown_group', `no MLS group ${header.group_id} in this conversation`);
    const result = await mls.processMessage(header.group_id, message);
    if (result.kind === 'application') {
      if (result.sender !== conv.peer.device_id) throw new MlsClientError('rejected_message', `MLS sender ${result.sender} is not the conversation's peer`);
      session.established = true;
      return result.plaintext;
    }
    if (result.kind === 'commit' && result.selfRemoved) {
      conv.remove(session.id);
      await mls.deleteGroup(header.group_id);
    }
    return undefined;
  }

  private async adoptPeerSession(conv: LiveConversation, session: LiveSession): Promise<void> {
    const { dropped, primary } = conv.addPeer(session, this.deviceId);
    for (const d of dropped) if (d.groupId !== undefined && this.mls?.hasGroup(d.groupId)) await this.mls.deleteGroup(d.groupId);
    this.sessionEvents.push({ conversation_id: conv.id, session_id: session.id, protocol: session.protocol, initiator: 'peer', primary });
  }

  private async deliver(entry: InboxEntry, redelivered: boolean): Promise<void> {
    if (this._failed) return;
    const message = toSecureMessage(entry, redelivered);
    await this.emitSerial('message', message);
    if (this.options.autoRead) this.readLater(message);
    if (this._failed) return;
    // Guards nothing (a crash before it is written hands the message over again, `redelivered`):
    // written with the next state write (see the file comment). A write in flight already took its
    // snapshot, so it neither loses nor undoes this.
    const i = this.inbox.findIndex((e) => e.message_id === entry.message_id);
    if (i < 0) return;
    this.inbox.splice(i, 1);
    this.writeLater();
  }

  private remember(ref: HandledRef, conv: LiveConversation | undefined, deviceWide = true): void {
    if (deviceWide) {
      this.recent.push(ref);
      if (this.recent.length > DEVICE_RECENT) this.recent.splice(0, this.recent.length - DEVICE_RECENT);
    }
    conv?.remember(ref);
  }

  // ------------------------------------------------------------------ sending

  /** Start the session if needed, encrypt, save (under the lock). */
  private async prepare(conversationId: string, plaintext: Uint8Array, meta: SendOptions & { client_ref?: string }): Promise<Prepared> {
    this.ensureRunning();
    const conv = await this.conversationFor(conversationId);
    let session = conv.primarySession();
    if (!session) session = await this.startSession(conv, true);
    const wires: OutgoingMessage[] = [];
    let opening: Prepared['opening'];
    if (session.protocol === 'mls' && session.opening && !session.openingInFlight) {
      // The Welcome is not known to be stored yet: it goes (again) before this message.
      wires.push({ conversation_id: conversationId, ...session.opening });
      session.openingInFlight = true;
      opening = { session, conversation: conv };
    }
    const wire = await this.encryptIn(session, plaintext, resolveMeta(meta));
    wires.push({ conversation_id: conversationId, ...wire, ...meta });
    await this.persist();
    return { wires, opening, session };
  }

  /** A known conversation, or one whose peer `resolvePeer` answers (saved with the next write). */
  private async conversationFor(conversationId: string): Promise<LiveConversation> {
    const known = this.conversations.get(conversationId);
    if (known) return known;
    let peer: PeerDevice | undefined;
    try {
      peer = this.options.resolvePeer ? await this.options.resolvePeer(conversationId) : undefined;
    } catch (err) {
      throw new SecureMessengerError('unknown_conversation', `could not resolve the peer of conversation ${conversationId}: ${describe(err)}`, { conversationId, cause: err });
    }
    if (!peer) throw new SecureMessengerError('unknown_conversation', `unknown conversation ${conversationId}: addConversation() first`, { conversationId });
    const conv = new LiveConversation(conversationId, checkPeer(peer));
    this.conversations.set(conversationId, conv);
    return conv;
  }

  /**
   * Encrypt one plaintext, with its metadata sealed in front (`metadata.ts`), in a session
   * (advances its ratchet or MLS epoch state; not saved here).
   */
  private async encryptIn(session: LiveSession, plaintext: Uint8Array, meta: AuthenticatedMeta): Promise<WireMessage> {
    const sealed = sealMeta(meta, plaintext);
    if (session.protocol !== 'mls') return session.ratchet!.encrypt(sealed);
    const groupId = session.groupId!;
    const epoch = this.mls!.epoch(groupId);
    const bytes = await this.mls!.encrypt(groupId, sealed);
    return encodeMlsEnvelope({ groupId, kind: 'application', epoch, message: bytes });
  }

  /** Choose the protocol (contract §1.3; MLS only when `allowMls`) and start a session this device initiates. */
  private async startSession(conv: LiveConversation, allowMls: boolean): Promise<LiveSession> {
    const keyPackage = allowMls ? await this.claimPeerKeyPackage(conv) : undefined;
    const protocol = selectProtocol(this.mlsAvailable, keyPackage !== undefined);
    let session: LiveSession | undefined;
    if (protocol === 'mls') {
      const groupId = `${groupPrefix(conv.id)}${randomId()}`;
      try {
        // X-Wing when the claimed KeyPackage is one (the claim prefers it when both ends run it).
        const ciphersuite = chooseCiphersuite(this.mls!.ciphersuites, [[(await inspectKeyPackage(keyPackage!)).cipherSuite]]);
        await this.mls!.createGroup(groupId, { ciphersuite });
        const added = await this.mls!.addMembers(groupId, [keyPackage!]);
        const welcome = encodeMlsEnvelope({ groupId, kind: 'welcome', epoch: added.epoch, message: added.welcome });
        session = { id: mlsSessionId(groupId), protocol: 'mls', initiator: 'local', established: false, createdAt: now(), groupId, opening: welcome };
      } catch (err) {
        if (this.mls!.hasGroup(groupId)) await this.mls!.deleteGroup(groupId);
        this.emit('error', new SecureMessengerError('session_rejected', `could not start an MLS group with ${conv.peer.device_id} (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
      }
    }
    if (!session) {
      const pq = await this.peerPqPrekey(conv);
      const prekeys = await this.peerPrekeys(conv);
      const ratchet = RatchetSession.initiate(this.identity, conv.peer, { ...pq, ...(prekeys ? { prekeys } : {}), conversationId: conv.sessionContext });
      session = { id: ratchetSessionId(ratchet), protocol: 'x3dh-dr', initiator: 'local', established: false, createdAt: now(), ratchet };
    }
    conv.addLocal(session);
    this.sessionEvents.push({ conversation_id: conv.id, session_id: session.id, protocol: session.protocol, initiator: 'local', primary: true });
    return session;
  }

  /**
   * PQXDH (rev. 3 §3.3): the peer's claimed and verified PQ prekey as `initiate` options; none
   * (classical X3DH) without a client or when the peer published none, unless post-quantum is
   * required.
   * @throws SecureMessengerError `pq_downgrade` (also emitted): the served prekey fails its check or
   *   the claim failed (PQXDH aborts), or no prekey while post-quantum is required.
   */
  private async peerPqPrekey(conv: LiveConversation): Promise<{ pqPrekey: SignedPqPrekey } | undefined> {
    const client = this.options.client;
    const claim = client ? await claimPeerPqPrekey(client, this.deviceId, conv.peer) : {};
    if (claim.prekey) return { pqPrekey: claim.prekey };
    const ids = { conversationId: conv.id, cause: claim.problem };
    if (claim.forged) throw this.downgrade(`refused the PQ prekey the service served for ${conv.peer.device_id} (${describe(claim.problem)}): a downgrade attempt; no session started`, ids);
    if (claim.problem) throw this.downgrade(`claiming the PQ prekey of ${conv.peer.device_id} failed (${describe(claim.problem)}); no session started rather than a classical one`, ids);
    if (await this.requiresPostQuantum()) throw this.downgrade(`${conv.peer.device_id} has no PQ prekey and post-quantum is required: no classical X3DH session`, { conversationId: conv.id });
    return undefined;
  }

  /**
   * X3DH §3.3: the peer's claimed prekey bundle, its signed prekey verified against the peer's
   * identity key (the peer device is then remembered as serving signed prekeys, saved with the
   * next write). Undefined for the legacy path: the peer published none (404) or the client lacks
   * the prekey routes, while the peer never served one to this device and `requireSignedPrekeys`
   * is off.
   * @throws SecureMessengerError `prekey_refused` (also emitted): a signed prekey the peer did not
   *   sign, a failed claim, or the legacy path where it is not allowed. No session is started.
   */
  private async peerPrekeys(conv: LiveConversation): Promise<PeerPrekeys | undefined> {
    const client = this.options.client;
    const peerId = conv.peer.device_id;
    let bundle: PeerPrekeys | undefined;
    try {
      bundle = client && speaksPrekeys(client) ? await claimPeerPrekeys(client, this.deviceId, conv.peer) : undefined;
    } catch (err) {
      const why = err instanceof CryptoError && err.code === 'bad_signature' ? 'refused the signed prekey the service served' : 'claiming the prekeys failed';
      throw this.prekeyRefused(`${why} for ${peerId} (${describe(err)}); no session started`, { conversationId: conv.id, cause: err });
    }
    if (bundle) {
      conv.peerSignedPrekeys = true;
      return bundle;
    }
    if (this.servedSignedPrekeys(peerId)) {
      throw this.prekeyRefused(`${peerId} served a signed prekey before and none now: a downgrade to its unsigned ephemeral key; no session started`, { conversationId: conv.id });
    }
    if (this.options.requireSignedPrekeys === true) {
      throw this.prekeyRefused(`${peerId} has no signed prekey and signed prekeys are required: no session on its unsigned ephemeral key`, { conversationId: conv.id });
    }
    return undefined;
  }

  /** Whether `peerDeviceId` served a signed prekey to this device before, in any conversation. */
  private servedSignedPrekeys(peerDeviceId: string): boolean {
    for (const c of this.conversations.values()) if (c.peer.device_id === peerDeviceId && c.peerSignedPrekeys) return true;
    return false;
  }

  /** Report a refused prekey bundle or legacy path (`prekey_refused`) and answer the error to throw. */
  private prekeyRefused(message: string, extra: { conversationId?: string; cause?: unknown }): SecureMessengerError {
    const e = new SecureMessengerError('prekey_refused', message, extra);
    this.emit('error', e);
    return e;
  }

  /** The MLS suites this device offers and claims: the hybrid one only when post-quantum is required. */
  private async offeredSuites(): Promise<readonly CiphersuiteName[]> {
    const suites = this.mls?.ciphersuites ?? [];
    return (await this.requiresPostQuantum()) ? suites.filter((s) => s === MLS_HYBRID_CIPHERSUITE) : suites;
  }

  /** Claim one KeyPackage of the peer when MLS is on; undefined when it has none (or it is unusable). */
  private async claimPeerKeyPackage(conv: LiveConversation): Promise<Uint8Array | undefined> {
    const client = this.options.client;
    if (!this.mlsAvailable || !client) return undefined;
    let bytes: Uint8Array;
    try {
      const cipher_suites = (await this.offeredSuites()).map(ciphersuiteId); // hybrid first when this device runs it
      if (cipher_suites.length === 0) return undefined;
      const claimed = await client.claimKeyPackage({ device_id: conv.peer.device_id, cipher_suites }, { deviceId: this.deviceId });
      bytes = base64ToBytes(claimed.key_package);
    } catch (err) {
      if (!(err instanceof ParleyApiError && err.status === 404)) {
        this.emit('error', new SecureMessengerError('session_rejected', `claiming an MLS KeyPackage of ${conv.peer.device_id} failed (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
      }
      return undefined;
    }
    try {
      const info = await inspectKeyPackage(bytes);
      if (info.deviceId !== conv.peer.device_id) throw new Error(`it names device ${info.deviceId}`);
      if (!equalBytes(info.signaturePublicKey, hexToBytes(conv.peer.identity_public_key, KEY_BYTES))) throw new Error('it is not signed with the peer identity key');
      if (info.cipherSuite !== MLS_HYBRID_CIPHERSUITE && (await this.requiresPostQuantum())) {
        this.downgrade(`refused the claimed MLS KeyPackage of ${conv.peer.device_id}: ciphersuite ${info.cipherSuite} is not hybrid and post-quantum is required`, { conversationId: conv.id });
        return undefined;
      }
      return bytes;
    } catch (err) {
      this.emit('error', new SecureMessengerError('session_rejected', `the claimed MLS KeyPackage of ${conv.peer.device_id} is unusable (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
      return undefined;
    }
  }

  /** Send prepared wires in order, one conversation at a time; resolves with the last receipt. */
  private dispatch(conversationId: string, transport: SecureTransport, prepared: Prepared) {
    return this.dispatching.run(conversationId, async () => {
      let receipt;
      for (const [i, wire] of prepared.wires.entries()) {
        try {
          receipt = await transport.send(wire);
        } catch (err) {
          if (i === 0 && prepared.opening) prepared.opening.session.openingInFlight = false;
          throw new SecureMessengerError('send_failed', `sending to conversation ${conversationId} failed: ${describe(err)}`, { conversationId, cause: err });
        }
        // The Welcome is stored: later messages need not carry it again (saved with the next write).
        if (i === 0 && prepared.opening) {
          delete prepared.opening.session.opening;
          prepared.opening.session.openingInFlight = false;
        }
      }
      return receipt!;
    });
  }

  private topUpLater(): Promise<unknown> {
    return Promise.resolve().then(() => this.ensureKeyPackages().catch(() => undefined));
  }

  // ------------------------------------------------------------------ state

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private ensureRunning(): void {
    if (this._failed) throw new SecureMessengerError('stopped', 'the messenger stopped after a failed state write');
  }

  private snapshot(): MessengerState {
    const conversations: MessengerState['conversations'] = {};
    for (const [id, c] of this.conversations) conversations[id] = c.toRecord();
    const mls = this.mls?.exportState();
    return {
      v: 1,
      format: 'parley-secure-messenger',
      device_id: this.deviceId,
      ...(mls !== undefined ? { mls } : {}),
      ...(this.prekeys ? { prekeys: this.prekeys.toJSON() } : {}),
      recent: [...this.recent],
      conversations,
      inbox: [...this.inbox],
    };
  }

  /** Write the whole state (with the changes that waited for it); on failure roll back to the last written one and stop. */
  private async persist(): Promise<void> {
    const text = JSON.stringify(this.snapshot());
    this.unsaved = false;
    try {
      await this.store.save(this.storeKey, text);
    } catch (err) {
      this.sessionEvents.length = 0;
      this.sharedPrekeyUses.length = 0;
      await this.restore(parseState(this.saved, this.deviceId)).catch(() => undefined);
      this._failed = true;
      const e = new SecureMessengerError('persist_failed', `saving the messenger state failed: ${describe(err)}; stopped`, { cause: err });
      this.emit('error', e);
      throw e;
    }
    this.saved = text;
    for (const e of this.sessionEvents.splice(0)) this.emit('session', e);
    for (const id of this.sharedPrekeyUses.splice(0)) {
      await this.options.prekeysFrom?.consume(id).catch((err: unknown) => {
        this.emit('error', new SecureMessengerError('persist_failed', `deleting the used one-time prekey ${id} in the device's prekey holder failed: ${describe(err)}`, { cause: err }));
      });
    }
  }

  /** The prekeys initial messages are answered with: this messenger's, else the shared ones. */
  private responderPrekeys(): PrekeyStore | undefined {
    return this.prekeys ?? this.options.prekeysFrom?.store();
  }

  /**
   * This device's prekeys for a second messenger of the device ({@link SecureMessengerOptions.prekeysFrom}).
   * Only a messenger opened with `prekeys: true` holds any.
   */
  prekeySharing(): SharedPrekeys {
    return {
      store: () => this.prekeys,
      consume: (keyId) =>
        this.exclusive(async () => {
          if (!this.prekeys?.hasOneTime(keyId)) return;
          this.prekeys.consumeOneTime(keyId);
          await this.persist();
          this.topUp = this.topUpLater();
        }),
    };
  }

  private async restore(state: MessengerState): Promise<void> {
    const conversations = new Map<string, LiveConversation>();
    for (const [id, record] of Object.entries(state.conversations)) conversations.set(id, LiveConversation.fromRecord(id, record, this.identity));
    this.conversations = conversations;
    this.prekeys =
      state.prekeys !== undefined ? PrekeyStore.fromJSON(state.prekeys, this.identity) : this.options.prekeys === true ? PrekeyStore.create(this.identity) : undefined;
    this.recent = [...state.recent];
    this.inbox = [...state.inbox];
    this.mls =
      state.mls !== undefined ? await MlsClient.importState(state.mls, {
            validateCredential: (id, key) => this.validateCredential(id, key),
            groupRoster: (groupId) => this.groupRoster(groupId),
            ...(this.mlsCiphersuites ? { ciphersuites: this.mlsCiphersuites } : {}),
          }) : undefined;
    if (this.mls && this.mls.deviceId !== this.deviceId) throw new Error('the saved MLS state belongs to another device');
  }

  private signatureKeyPair() {
    const secret = hexToBytes(this.identity.toJSON().identity_secret_key, KEY_BYTES);
    return { publicKey: this.identity.identityPublicKey, signKey: secret };
  }

  /**
   * The roster of a 1:1 MLS group (`MlsClientCommonOptions.groupRoster`): this device and its
   * conversation's peer, each with its registered identity key; nobody for a group of no known
   * conversation, so its Welcome and commits are refused.
   */
  private groupRoster(groupId: string): MlsRosterMember[] {
    const id = groupConversationId(groupId);
    const conv = id === undefined ? undefined : this.conversations.get(id);
    if (!conv) return [];
    return [
      { deviceId: this.deviceId, signaturePublicKey: this.identity.identityPublicKey },
      { deviceId: conv.peer.device_id, signaturePublicKey: hexToBytes(conv.peer.identity_public_key, KEY_BYTES) },
    ];
  }

  /** MLS credentials must carry the registered identity key of the device they name. */
  private validateCredential(deviceId: string, key: Uint8Array): boolean {
    if (deviceId === this.deviceId) return equalBytes(key, this.identity.identityPublicKey);
    for (const c of this.conversations.values()) {
      if (c.peer.device_id === deviceId) return equalBytes(key, hexToBytes(c.peer.identity_public_key, KEY_BYTES));
    }
    return false;
  }
}

/**
 * The error a received message that could not be read is reported with: the messenger's own,
 * `unsupported_version` for a frame or plaintext of an older SDK (it must upgrade), else
 * `decrypt_failed`.
 */
function receiveError(err: unknown, ids: { conversationId: string; messageId: string }): SecureMessengerError {
  if (err instanceof SecureMessengerError) return new SecureMessengerError(err.code, err.message, { ...ids, cause: err.cause });
  const legacy = (err instanceof CryptoError && err.code === 'unsupported_version') || (err instanceof MetaEnvelopeError && err.legacy);
  if (legacy) return new SecureMessengerError('unsupported_version', `message ${ids.messageId} refused: ${describe(err)}`, { ...ids, cause: err });
  return new SecureMessengerError('decrypt_failed', `message ${ids.messageId} could not be decrypted (${describe(err)}); skipped`, { ...ids, cause: err });
}

/** The `metadata_mismatch` report of a message whose service-claimed metadata differs from the sealed one. */
function metadataMismatchError(m: ReceivedMessage, sealed: AuthenticatedMeta, fields: MetaField[]): SecureMessengerError {
  const claims = fields.map((f) => `${f} ${JSON.stringify(m[f] ?? null)} (sender: ${JSON.stringify(sealed[f] ?? null)})`).join(', ');
  return new SecureMessengerError('metadata_mismatch', `message ${m.message_id}: the service reported ${claims}; delivered with the sender's values`, {
    conversationId: m.conversation_id,
    messageId: m.message_id,
  });
}

function toSecureMessage(entry: InboxEntry, redelivered: boolean): SecureMessage {
  const plaintext = base64ToBytes(entry.plaintext);
  let content: Content | undefined;
  let contentError: Error | undefined;
  try {
    content = decodeContent(plaintext);
  } catch (err) {
    contentError = err as Error;
  }
  return {
    message_id: entry.message_id,
    conversation_id: entry.conversation_id,
    sender_device_id: entry.sender_device_id,
    timestamp: entry.timestamp,
    cursor: entry.cursor,
    message_type: entry.message_type,
    priority: entry.priority,
    ...(entry.topic_id !== undefined ? { topic_id: entry.topic_id } : {}),
    ...(entry.message_group_id !== undefined ? { message_group_id: entry.message_group_id } : {}),
    ...(entry.room_id !== undefined ? { room_id: entry.room_id } : {}),
    ...(entry.rental_id !== undefined ? { rental_id: entry.rental_id } : {}),
    ...(entry.metadata_mismatch !== undefined ? { metadata_mismatch: [...entry.metadata_mismatch] } : {}),
    protocol: entry.protocol,
    plaintext,
    content,
    ...(contentError ? { contentError } : {}),
    redelivered,
  };
}
