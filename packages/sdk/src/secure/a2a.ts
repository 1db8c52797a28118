/**
 * `SecureChannels`: end-to-end encrypted agent-to-agent channels (contract §1.2–1.3, §2.11, §3.5,
 * §4.13, §6.1; design §8.5; docs/decisions.md "A2A channels") on top of a {@link SecureMessenger},
 * whose sessions, ordering and durability it reuses (as `rooms.ts` does). The service only relays
 * opaque blobs.
 *
 * Flow:
 * 1. `request(peer)` (`POST /a2a/channels/request`, with the API key or the device JWT) → `pending`.
 * 2. The responder's owner approves: both devices get `a2a_channel_approved` with their role and
 *    the peer device's keys. The channel becomes a messenger conversation whose id is the channel
 *    id and whose peer is that device. A channel backed by a marketplace rental is approved within
 *    the request, so its `a2a_channel_approved` may come before the REST answer: the protocol
 *    asked for is noted per peer address before the call, and the initiator's handshake is sent
 *    once `request()` has its answer.
 * 3. Key exchange (`a2a_key_exchange` socket frames while `approved`), initiator first:
 *    - `mls` (the default asked for), when this messenger has MLS and the peer's KeyPackage can be
 *      claimed (`POST /mls/key-packages/claim`; the service hands an API-key agent's KeyPackages
 *      only to the other party of an approved channel, across tenants too) and is signed with the
 *      peer identity key of `a2a_channel_approved`: the initiator's handshake is the MLS Welcome of
 *      a two-member group `parley:<channel id>:<uuid>` with the peer. The responder joins from it
 *      (that is the initiator's handshake read) and answers with its handshake plaintext as an MLS
 *      application message in that group. Messages then use MLS.
 *    - otherwise (`ratchet` asked for, MLS off here, the peer has no KeyPackage, the claim was
 *      refused or the KeyPackage is unusable): X3DH + Double Ratchet as before — the initiator
 *      seals a small handshake plaintext as the X3DH initial message; the responder answers in
 *      the session it accepted.
 *    The responder always answers only after it processed the initiator's handshake, in the
 *    session that handshake started, so both sides end up in one session and there is no
 *    simultaneous-start race. When both sent theirs the service activates the channel
 *    (`a2a_channel_activated {conversation_id}`).
 * 4. A channel is *open* when it is `active` and this side holds the established session (sent
 *    its handshake, and read the peer's). Messages are sealed in it and sent with
 *    `POST /a2a/channels/{id}/messages` (answer: the policies' outcome); received `a2a_message`
 *    events go through `messenger.receive` (conversation id = channel id) and come out as
 *    `message` events of this class, in order, saved before delivery.
 *
 * Protocol: {@link SecureChannelInfo.protocol} is what was asked for until the channel has a
 *   session, then the session's (`mls` or `ratchet`); {@link SecureChannelSendResult.protocol} the
 *   one a message was sealed in. `ratchet` always means X3DH + Double Ratchet.
 *
 * Persistence: the channel table (id, role, peer, status, conversation id, handshake progress,
 *   history cursor) is saved under `a2a-channels-<device_id>` in the store; sessions (MLS group
 *   state, the Welcome until the service stored it) in the messenger's state, saved before
 *   anything is sent. A channel message moves only the history cursor, a resume point: that move
 *   is saved with the table's next write, after {@link CURSOR_SAVE_MS}, once {@link CURSOR_BATCH}
 *   moves wait, or at `close()`. A cursor saved behind only makes catch-up read again messages the
 *   messenger already handled (skipped by message id: the lag stays well inside its
 *   de-duplication window) or sent (never decrypted). After a restart or a reconnection
 *   (`attach`), `sync()` re-reads the channel list and each approved / active channel's history
 *   (`GET /a2a/channels/{id}/messages?since=<saved cursor>`), so handshakes and messages sent
 *   while this device was offline are processed once, in order. A Welcome whose ack was lost is sent again (the joined peer ignores the copy); a
 *   responder that joined but crashed before noting it sees the joined group in the messenger.
 *
 * Parts: public types (`a2a-types.ts`), the channel table (`a2a-channel.ts`), handshakes and A2A
 *   events as messenger messages (`a2a-wire.ts`).
 *
 * Use a messenger dedicated to channels (its own `storeKey`): A2A history cursors are not in the
 * same sequence as conversation cursors, and the messenger's `message` event would otherwise also
 * carry channel messages. For MLS give it the REST client and MLS on, and let it be the only MLS
 * messenger of the device (`node/a2a-layer.ts`, API-key agents): a claimed KeyPackage can only be
 * joined by the MLS client that published it. Without MLS every channel is X3DH + Double Ratchet.
 */
import type { A2aChannel, A2aChannelApprovedEvent, A2aChannelStatus, A2aKeyExchangeAck, A2aKeyExchangeEvent, A2aMessage, MessageType, Priority, RequestedA2aChannel } from '@parley/protocol';
import type { ParleyClient, RequestOptions } from '../client/rest.js';
import { encodeContent, type Content } from '../content/types.js';
import type { PeerDevice } from '../crypto/session.js';
import type { RealtimeClient } from '../realtime/client.js';
import { TypedEmitter } from '../realtime/emitter.js';
import { frameTap, FrameLink, type FrameTap } from '../realtime/frames.js';
import { approvedRecord, channelInfo, channelNotOpenReason, channelProtocol, channelTableText, normalizeHubAddress, OPEN_STATUSES, parseChannelTable, requestedRecord, type ChannelRecord } from './a2a-channel.js';
import type { SecureChannelInfo, SecureChannelProtocol, SecureChannelSendResult, SecureChannelsEvents, SecureChannelsOptions } from './a2a-types.js';
import { channelMessageAsReceived, handshakeBytes, historyKeyExchange, keyExchangeAsReceived, readHandshake } from './a2a-wire.js';
import { messageTypeFor } from './decisions.js';
import type { SecureMessenger } from './messenger.js';
import { SecureMessengerError, type SecureMessage } from './types.js';

export { frameTap, FrameLink, type FrameTap };
export { normalizeHubAddress } from './a2a-channel.js';
export type { SecureChannelProtocol, SecureChannelInfo, SecureChannelMessage, SecureChannelSendResult, SecureChannelsEvents, SecureChannelsOptions } from './a2a-types.js';

const HISTORY_PAGE = 200;
/** How long a moved history cursor may wait for the channel table's next write (ms; see the file comment). */
export const CURSOR_SAVE_MS = 1000;
/**
 * Cursor moves the channel table may hold unsaved before it is written: far fewer than the
 * messages the messenger remembers per conversation for de-duplication (`CONVERSATION_RECENT`).
 */
export const CURSOR_BATCH = 16;

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** End-to-end encrypted A2A channels of one device (see the file comment). Create with {@link SecureChannels.open}. */
export class SecureChannels extends TypedEmitter<SecureChannelsEvents> {
  readonly deviceId: string;
  private readonly messenger: SecureMessenger;
  private readonly client: ParleyClient;
  private readonly storeKey: string;
  private channels = new Map<string, ChannelRecord>();
  private frames: FrameLink | undefined;
  /** Metadata of messages being received (by message id), for the `message` event. */
  private readonly meta = new Map<string, { traceparent: string | null }>();
  private chain: Promise<void> = Promise.resolve();
  private readonly sending = new Map<string, Promise<unknown>>();
  private readonly handshaking = new Set<string>();
  private readonly detachers: (() => void)[] = [];
  private saving: Promise<void> = Promise.resolve();
  /** History cursor moves not written yet, and the timer that writes them (see the file comment). */
  private cursorMoves = 0;
  private cursorTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Requests in flight (REST call not answered yet), by peer hub address (lower case): the
   * protocol asked for. A channel approved within its request (a marketplace rental) may have its
   * `a2a_channel_approved` arrive before the REST answer; the record it creates takes this
   * protocol, and the initiator's handshake waits for {@link request} to finish.
   */
  private readonly requesting = new Map<string, { protocol: SecureChannelProtocol; count: number }>();

  private constructor(private readonly options: SecureChannelsOptions) {
    super((err, event) => {
      if (event !== 'error') this.emit('error', new Error(`a "${String(event)}" listener failed: ${describe(err)}`, { cause: err }));
    });
    this.messenger = options.messenger;
    this.client = options.client;
    this.deviceId = options.messenger.deviceId;
    this.storeKey = `a2a-channels-${this.deviceId}`;
    this.detachers.push(this.messenger.on('message', (m) => this.onDecrypted(m)));
    // A responder that joined the initiator's MLS Welcome has read its handshake: answer it.
    this.detachers.push(
      this.messenger.on('session', (e) => {
        const r = this.channels.get(e.conversation_id);
        if (r && e.initiator === 'peer' && e.protocol === 'mls') this.fire(() => this.maybeHandshake(r));
      }),
    );
  }

  /**
   * Open the channel layer of `options.messenger`'s device, restoring its saved channel table.
   * @throws Error when the saved table is corrupt or belongs to another device.
   */
  static async open(options: SecureChannelsOptions): Promise<SecureChannels> {
    const c = new SecureChannels(options);
    const text = await options.store.load(c.storeKey);
    if (text !== undefined) for (const [id, r] of parseChannelTable(text, c.deviceId)) c.channels.set(id, r);
    return c;
  }

  // ------------------------------------------------------------------ queries

  /** All known channels, newest first. */
  list(): SecureChannelInfo[] {
    return [...this.channels.values()].sort((a, b) => b.created_at.localeCompare(a.created_at)).map((r) => this.info(r));
  }

  /** One channel, if known. */
  get(channelId: string): SecureChannelInfo | undefined {
    const r = this.channels.get(channelId);
    return r ? this.info(r) : undefined;
  }

  /** The newest not-closed channel (pending, approved or active) with `peer` (hub address or DID). */
  findByPeer(peer: string): SecureChannelInfo | undefined {
    const address = normalizeHubAddress(peer);
    return this.list().find((c) => c.peer_hub_address.toLowerCase() === address && OPEN_STATUSES.includes(c.status));
  }

  /** Our hub address as learnt from channels, if any. */
  ownHubAddress(): string | null {
    for (const r of this.channels.values()) if (r.own_hub_address) return r.own_hub_address;
    return null;
  }

  /**
   * Wait until a channel is open (or closed for good); resolves with its state then or when
   * `timeoutMs` passed (no rejection on timeout).
   */
  waitOpen(channelId: string, timeoutMs: number): Promise<SecureChannelInfo | undefined> {
    const now = this.get(channelId);
    const settled = (c: SecureChannelInfo | undefined) => c !== undefined && (c.open || c.status === 'rejected' || c.status === 'revoked');
    if (settled(now) || timeoutMs <= 0) return Promise.resolve(now);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(this.get(channelId));
      }, timeoutMs);
      const off = this.on('channel', (c) => {
        if (c.channel_id === channelId && settled(c)) {
          clearTimeout(timer);
          off();
          resolve(c);
        }
      });
    });
  }

  // ------------------------------------------------------------------ wiring

  /**
   * Receive A2A events from a realtime client whose WebSocket is `tap`'s (`frameTap(WS)`):
   * approvals, key exchanges, activations, messages, rejections and revocations; key exchange
   * frames go out through it; and every (re)connection runs {@link sync}. Returns a detacher.
   */
  attach(realtime: RealtimeClient, tap: FrameTap): () => void {
    this.frames = new FrameLink(realtime, tap);
    const offs = [
      realtime.on('event', (e) => {
        if (!isObject(e.data)) return;
        const data = e.data;
        switch (e.event) {
          case 'a2a_channel_approved':
            return this.fire(() => this.onApproved(data as unknown as A2aChannelApprovedEvent));
          case 'a2a_key_exchange':
            return this.fire(() => this.onKeyExchange(data as unknown as A2aKeyExchangeEvent));
          case 'a2a_channel_activated':
            return this.fire(() => this.onStatus(String(data.channel_id), 'active', typeof data.conversation_id === 'string' ? data.conversation_id : null));
          case 'a2a_message':
            return this.fire(() => this.onMessage(data as unknown as A2aMessage));
          case 'a2a_channel_rejected':
            return this.fire(() => this.onStatus(String(data.channel_id), 'rejected', null));
          case 'a2a_channel_revoked':
            return this.fire(() => this.onStatus(String(data.channel_id), 'revoked', null));
        }
      }),
      realtime.on('stateChange', (s) => {
        if (s.state === 'open') void this.sync().catch((err: unknown) => this.emit('error', new Error(`A2A catch-up failed: ${describe(err)}`, { cause: err })));
      }),
    ];
    const off = () => offs.forEach((f) => f());
    this.detachers.push(off);
    return off;
  }

  /**
   * Re-read the channel list (statuses changed while offline) and the history of every approved
   * or active channel from its saved cursor, and finish pending handshakes.
   */
  async sync(): Promise<void> {
    let listed: A2aChannel[] = [];
    try {
      listed = await this.client.listA2aChannels({}, await this.requestOptions());
    } catch (err) {
      this.emit('error', new Error(`listing A2A channels failed: ${describe(err)}`, { cause: err }));
    }
    // Approved while this device was offline: its a2a_channel_approved was missed; ask for the same data.
    for (const c of listed) {
      if ((c.status !== 'approved' && c.status !== 'active') || this.channels.get(c.channelId)?.peer) continue;
      try {
        const approved = await this.client.a2aChannelPeer(c.channelId, await this.requestOptions());
        await this.enqueue(() => this.onApproved(approved));
      } catch (err) {
        this.emit('error', new Error(`reading the peer keys of channel ${c.channelId} failed: ${describe(err)}`, { cause: err }));
      }
    }
    await this.enqueue(async () => {
      for (const c of listed) {
        const r = this.channels.get(c.channelId);
        if (!r) continue;
        if (r.status !== c.status || r.conversation_id !== c.conversationId) {
          r.status = c.status;
          r.conversation_id = c.conversationId;
          if (c.status === 'active') r.sent_kx = true;
          await this.save();
          this.emitChannel(r);
        }
      }
    });
    for (const r of [...this.channels.values()]) {
      if (r.status !== 'approved' && r.status !== 'active') continue;
      await this.catchUp(r.channel_id).catch((err: unknown) => this.emit('error', new Error(`catch-up of channel ${r.channel_id} failed: ${describe(err)}`, { cause: err })));
    }
    for (const r of [...this.channels.values()]) await this.enqueue(() => this.maybeHandshake(r));
  }

  /** Read one channel's history from its saved cursor and process it in order. */
  catchUp(channelId: string): Promise<number> {
    return this.enqueue(async () => {
      const r = this.channels.get(channelId);
      if (!r || !r.peer) return 0;
      let count = 0;
      for (;;) {
        const since = r.cursor;
        const page = await this.client.a2aHistory(channelId, { ...(since !== null ? { since } : {}), limit: HISTORY_PAGE });
        for (const m of page.messages) {
          count++;
          if (m.message_type === 'key_exchange') {
            await this.onKeyExchange(historyKeyExchange(m), m.cursor);
          } else {
            await this.onMessage(m);
          }
        }
        if (page.messages.length < HISTORY_PAGE || page.next_cursor === null) return count;
      }
    });
  }

  // ------------------------------------------------------------------ actions

  /**
   * Request a channel with `peer` (hub address or `did:hub:…`): `pending` until its owner approves.
   * @throws ParleyApiError from the service (403 tier / agreement, 404 unknown address, 409 an open
   *   channel already joins the two agents, …).
   */
  async request(peer: string, options: { protocol?: SecureChannelProtocol; capability?: string } = {}): Promise<SecureChannelInfo> {
    const address = normalizeHubAddress(peer);
    const protocol = options.protocol ?? 'mls';
    // Noted before the call: an approval within the request may reach the socket before the answer.
    const pending = this.requesting.get(address);
    this.requesting.set(address, { protocol, count: (pending?.count ?? 0) + 1 });
    const done = () => {
      const entry = this.requesting.get(address);
      if (entry && --entry.count <= 0) this.requesting.delete(address);
    };
    let answer: RequestedA2aChannel;
    try {
      answer = await this.client.requestA2aChannel({ responder_hub_address: address, ...(options.capability ? { capability: options.capability } : {}) }, await this.requestOptions());
    } catch (err) {
      // A channel the approval already created (the answer was lost) gets its handshake now.
      void this.enqueue(async () => {
        done();
        for (const r of [...this.channels.values()]) if (r.role === 'initiator' && r.peer_hub_address.toLowerCase() === address) await this.maybeHandshake(r);
      });
      throw err;
    }
    return this.enqueue(async () => {
      done();
      const known = this.channels.get(answer.channel_id);
      const r: ChannelRecord = known ?? requestedRecord(answer, protocol);
      if (known) {
        // Created by an approval that came first: complete it from the answer.
        r.own_hub_address ??= answer.initiatorHubAddress;
        r.capability ??= answer.capability;
        r.conversation_id ??= answer.conversationId;
      }
      this.channels.set(r.channel_id, r);
      await this.save();
      this.emitChannel(r);
      // The handshake an approval that came first left for now (a no-op otherwise).
      await this.maybeHandshake(r);
      return this.info(r);
    });
  }

  /** Encrypt and send structured content on an open channel. Errors as {@link sendPlaintext}. */
  send(channelId: string, content: Content, options: { message_type?: MessageType; priority?: Priority; traceparent?: string } = {}): Promise<SecureChannelSendResult> {
    const plaintext = encodeContent(content.type, content.payload);
    const messageType = options.message_type ?? messageTypeFor(content.type);
    return this.sendPlaintext(channelId, plaintext, { ...options, ...(messageType ? { message_type: messageType } : {}) });
  }

  /** {@link send} of a `text` content. */
  sendText(channelId: string, text: string, options: { message_type?: MessageType; priority?: Priority; traceparent?: string } = {}): Promise<SecureChannelSendResult> {
    return this.send(channelId, { type: 'text', payload: { text } }, options);
  }

  /**
   * Seal raw bytes in the channel's session and send the ciphertext (`POST
   * /a2a/channels/{id}/messages`); sends of one channel go out in call order.
   * @throws SecureMessengerError `unknown_conversation` (unknown channel) or `send_failed` (not
   *   open: message says why; or the service refused: `cause` is its ParleyApiError).
   */
  async sendPlaintext(channelId: string, plaintext: Uint8Array, options: { message_type?: MessageType; priority?: Priority; traceparent?: string } = {}): Promise<SecureChannelSendResult> {
    const r = this.channels.get(channelId);
    if (!r) throw new SecureMessengerError('unknown_conversation', `unknown channel ${channelId}`, { conversationId: channelId });
    const why = this.notOpenReason(r);
    if (why) throw new SecureMessengerError('send_failed', why, { conversationId: channelId });
    const previous = this.sending.get(channelId) ?? Promise.resolve();
    const run = previous.then(async () => {
      // The peer answered in our MLS group, so the service stored our Welcome (a no-op otherwise).
      if (r.role === 'initiator') await this.messenger.confirmOpening(channelId);
      const [wire] = await this.messenger.seal([channelId], plaintext, options);
      try {
        const sent = await this.client.sendA2aMessage(channelId, {
          header_blob: wire!.header_blob,
          ciphertext: wire!.ciphertext,
          ...(options.message_type !== undefined ? { message_type: options.message_type } : {}),
          ...(options.priority !== undefined ? { priority: options.priority } : {}),
          ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
        });
        return { ...sent, protocol: channelProtocol(wire!.protocol) };
      } catch (err) {
        throw new SecureMessengerError('send_failed', `sending on channel ${channelId} failed: ${describe(err)}`, { conversationId: channelId, cause: err });
      }
    });
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.sending.set(channelId, tail);
    void tail.then(() => this.sending.get(channelId) === tail && this.sending.delete(channelId));
    return run;
  }

  /** Why a channel cannot carry messages yet (undefined when it is open). */
  notOpenReason(channel: string | ChannelRecord): string | undefined {
    const r = typeof channel === 'string' ? this.channels.get(channel) : channel;
    if (!r) return `unknown channel ${String(channel)}`;
    return channelNotOpenReason(r);
  }

  /** Stop listening and wait for pending work. */
  async close(): Promise<void> {
    for (const off of this.detachers.splice(0)) off();
    await this.chain;
    await Promise.all([...this.sending.values()]);
    if (this.cursorTimer !== undefined) clearTimeout(this.cursorTimer);
    this.cursorTimer = undefined;
    if (this.cursorMoves > 0) await this.save().catch((err: unknown) => this.emit('error', new Error(`saving the A2A channel table failed: ${describe(err)}`, { cause: err })));
    await this.saving;
  }

  // ------------------------------------------------------------------ internals

  private async requestOptions(): Promise<RequestOptions | undefined> {
    if (this.options.auth !== 'device') return undefined;
    const token = await this.client.currentDeviceToken();
    return token ? { token } : undefined;
  }

  /** {@link enqueue} without a caller: failures are `error` events only. */
  private fire(fn: () => Promise<unknown>): void {
    this.enqueue(fn).catch(() => undefined);
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.then(
      () => undefined,
      (err: unknown) => this.emit('error', err instanceof Error ? err : new Error(String(err))),
    );
    return run;
  }

  private info(r: ChannelRecord): SecureChannelInfo {
    return channelInfo(r, this.sessionProtocol(r));
  }

  /** The protocol of the channel's sending session, once it has one. */
  private sessionProtocol(r: ChannelRecord): SecureChannelProtocol | undefined {
    const s = r.peer ? this.messenger.sessionInfo(r.channel_id) : undefined;
    return s ? channelProtocol(s.protocol) : undefined;
  }

  /**
   * A responder whose messenger joined the peer's MLS group has read the initiator's handshake
   * (the Welcome); true when that was not noted yet (noted now, to be saved by the caller).
   */
  private notedMlsJoin(r: ChannelRecord): boolean {
    if (r.got_kx || r.role !== 'responder' || !r.peer) return false;
    const s = this.messenger.sessionInfo(r.channel_id);
    if (s?.protocol !== 'mls' || s.initiator !== 'peer') return false;
    r.got_kx = true;
    return true;
  }

  private emitChannel(r: ChannelRecord): void {
    this.emit('channel', this.info(r));
  }

  private save(): Promise<void> {
    const text = channelTableText(this.deviceId, this.channels);
    this.cursorMoves = 0; // written with this one
    // After a failed write (reported to that save's caller) the next writes still run.
    this.saving = this.saving.catch(() => undefined).then(() => this.options.store.save(this.storeKey, text));
    return this.saving;
  }

  private async onApproved(e: A2aChannelApprovedEvent): Promise<void> {
    const existing = this.channels.get(e.channel_id);
    if (!e.peer_identity_public_key || !e.peer_ephemeral_public_key) {
      this.emit('error', new Error(`channel ${e.channel_id} was approved but the peer device has no registered keys`));
      return;
    }
    const peer: PeerDevice = { device_id: e.peer_device_id, identity_public_key: e.peer_identity_public_key, ephemeral_public_key: e.peer_ephemeral_public_key };
    await this.messenger.addConversation(e.channel_id, peer);
    // Approved within our own request (a rental), before its answer: the protocol asked for is
    // the request's, and our handshake waits for request() to finish.
    const asked = !existing && e.role === 'initiator' ? this.requesting.get(e.peer_hub_address.toLowerCase()) : undefined;
    const r: ChannelRecord = existing ?? approvedRecord(e, asked?.protocol ?? 'ratchet');
    r.peer = peer;
    r.role = e.role;
    if (r.status === 'pending') r.status = 'approved';
    this.channels.set(r.channel_id, r);
    await this.save();
    this.emitChannel(r);
    if (asked) return; // request() sends it once answered
    await this.maybeHandshake(r);
  }

  /** Send our handshake when it is our turn: the initiator first, the responder after reading the initiator's. */
  private async maybeHandshake(r: ChannelRecord): Promise<void> {
    if (this.notedMlsJoin(r)) {
      await this.save();
      this.emitChannel(r);
    }
    if (r.sent_kx || !r.peer || r.status !== 'approved') return;
    if (r.role === 'responder' && !r.got_kx) return;
    if (this.handshaking.has(r.channel_id) || !this.frames) return;
    this.handshaking.add(r.channel_id);
    // Not awaited in the chain: the ack needs the socket, whose events feed the chain.
    void this.sendHandshake(r).finally(() => this.handshaking.delete(r.channel_id));
  }

  private async sendHandshake(r: ChannelRecord): Promise<void> {
    try {
      // The initiator starts the session (MLS when asked for and possible); the responder answers in the one it joined.
      const wire = await this.messenger.sealHandshake(r.channel_id, handshakeBytes(r.channel_id, r.role), { mls: r.role === 'initiator' && r.requested === 'mls' });
      const ack = await this.frames!.request<A2aKeyExchangeAck>('a2a_key_exchange', { channel_id: r.channel_id, header_blob: wire.header_blob, ciphertext: wire.ciphertext }, 'a2a_key_exchange_ack');
      // The Welcome is stored: confirmed before noting our handshake sent, so a crash in between
      // re-sends a handshake in the group rather than leaving a Welcome pending forever.
      if (wire.protocol === 'mls') await this.messenger.confirmOpening(r.channel_id);
      await this.enqueue(async () => {
        r.sent_kx = true;
        if (ack.status === 'active') {
          r.status = 'active';
          r.conversation_id = ack.conversation_id;
        }
        await this.save();
        this.emitChannel(r);
      });
    } catch (err) {
      this.emit('error', new Error(`sending the key exchange of channel ${r.channel_id} failed: ${describe(err)}`, { cause: err }));
    }
  }

  private async onKeyExchange(e: A2aKeyExchangeEvent, cursor?: string): Promise<void> {
    const r = this.channels.get(e.channel_id);
    if (!r || !r.peer) {
      this.emit('error', new Error(`key exchange for unknown channel ${e.channel_id} (its approval was missed); skipped`));
      return;
    }
    if (e.sender_device_id !== this.deviceId) {
      await this.messenger.receive(keyExchangeAsReceived(e, cursor));
    }
    if (cursor !== undefined) {
      r.cursor = cursor;
      await this.save();
    }
  }

  private async onMessage(m: A2aMessage): Promise<void> {
    const r = this.channels.get(m.channel_id);
    if (!r || !r.peer) return;
    if (m.sender_device_id !== this.deviceId) {
      this.meta.set(m.message_id, { traceparent: m.traceparent });
      try {
        await this.messenger.receive(channelMessageAsReceived(m));
      } finally {
        this.meta.delete(m.message_id);
      }
    }
    r.cursor = m.cursor;
    await this.saveCursorLater();
  }

  /** A history cursor moved: written with the table's next write, or later (see the file comment). */
  private async saveCursorLater(): Promise<void> {
    if (++this.cursorMoves >= CURSOR_BATCH) return this.save();
    this.cursorTimer ??= setTimeout(() => {
      this.cursorTimer = undefined;
      if (this.cursorMoves > 0) this.save().catch((err: unknown) => this.emit('error', new Error(`saving the A2A channel table failed: ${describe(err)}`, { cause: err })));
    }, CURSOR_SAVE_MS);
    (this.cursorTimer as { unref?: () => void }).unref?.(); // a cursor not written only makes catch-up start earlier
  }

  private async onStatus(channelId: string, status: A2aChannelStatus, conversationId: string | null): Promise<void> {
    const r = this.channels.get(channelId);
    if (!r) return;
    r.status = status;
    if (status === 'active') r.sent_kx = true; // activation needs both handshakes
    if (conversationId) r.conversation_id = conversationId;
    await this.save();
    this.emitChannel(r);
  }

  /** The messenger decrypted something: a handshake (progress) or a channel message (delivered). */
  private async onDecrypted(m: SecureMessage): Promise<void> {
    const r = this.channels.get(m.conversation_id);
    if (!r) return;
    const hs = readHandshake(m.plaintext);
    if (hs) {
      if (hs.channelId !== r.channel_id) {
        this.emit('error', new Error(`a key exchange for channel ${hs.channelId} arrived on channel ${r.channel_id}; ignored`));
        return;
      }
      if (!r.got_kx) {
        r.got_kx = true;
        await this.save();
        this.emitChannel(r);
      }
      // Runs in the messenger's delivery, outside our chain: queue the answer there.
      this.fire(() => this.maybeHandshake(r));
      return;
    }
    const meta = this.meta.get(m.message_id);
    await this.emitSerial('message', { ...m, channel_id: r.channel_id, peer_hub_address: r.peer_hub_address, traceparent: meta?.traceparent ?? null });
  }
}
