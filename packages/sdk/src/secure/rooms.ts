/**
 * `RoomMessenger`: end-to-end encrypted rooms (contract §2.5, §4.6, §6.1; design §8.5) on top of a
 * {@link SecureMessenger}, whose sessions, ordering and durability it reuses.
 *
 * - Encryption is pairwise: a room holds one conversation per member pair, and this device keeps
 *   one session per room conversation it is in, with the other member as peer (X3DH + Double
 *   Ratchet; see `SecureMessenger.seal`). Peer keys come from the room's member list
 *   (`identity_public_key`, `ephemeral_public_key` per member in `GET /rooms/{id}`, the create
 *   answer and `room_joined`), or, for members listed without keys, from `resolveMemberKeys`.
 * - Sending encrypts the plaintext once per recipient and sends ONE room message carrying one
 *   envelope each (`room_message` frame, or `POST /rooms/{id}/messages` for owners over REST).
 *   The member list is re-read before each send when a REST client is given; when that fails the
 *   last one known is used (so sends still queue while offline) and the service refuses the
 *   message if it is stale.
 * - Receiving hands each `room_message` envelope to the messenger as a message of the pairwise
 *   conversation with its sender: decrypted in order, saved before the application sees it, and
 *   delivered on the messenger's `message` event with `room_id` set (`message_id` = the
 *   room_message_id, `cursor` = its timeline cursor).
 * - Catch-up (`catchUp`, and on every reconnection when attached with a client): this device's
 *   member view of the room timeline (`GET /rooms/{id}/messages?view=member`, as this device) is
 *   read from the room's resume point: the newest of its conversations' resume cursors (each is
 *   the oldest of that conversation's recently handled messages, so nothing handled is read twice
 *   and nothing unhandled is skipped). Room cursors are release positions (the same in
 *   `room_message` events and in the member view): a held envelope approved while this device was
 *   offline sorts after everything released before its approval, so it is caught up, once.
 * - Receipts: a sent room message's status is in `messenger.statuses` (`sent`
 *   -> `delivered` -> `read` once every recipient the ack named received / read it); catch-up
 *   also reads the receipt times of this device's own messages from the member view. Read
 *   receipts: `messenger.markRead(message)` (a message with `room_id` sends `room_message_read`).
 * - The rooms this device is in (ids, names, pairwise conversations) are saved in the store
 *   under `rooms-<device_id>` so a restarted process knows what to catch up.
 *
 * MLS rooms (one `*` envelope) are not supported here: every envelope is pairwise.
 *
 * Where rooms, timelines and live messages come from is a {@link RoomSource}: the tenant's rooms
 * by default ({@link tenantRoomSource}), or the rental rooms of marketplace rentals
 * (`rental-rooms.ts`), which reuse everything else here.
 *
 * ```ts
 * const rooms = await RoomMessenger.open({ messenger, client, store });
 * rooms.attach(rt);                      // room_message, room_joined, member_joined; sendRoom transport
 * messenger.on('message', (m) => { if (m.room_id) console.log(m.room_id, m.content); });
 * await rooms.sendText(roomId, 'hello room');
 * ```
 */
import { ParleyNetworkError } from '../client/errors.js';
import type { ParleyClient } from '../client/rest.js';
import type { RoomConversation, RoomMember, RoomMessageInput, RoomMessageResult, RoomTimelineEntry } from '@parley/protocol';
import { encodeContent, type Content } from '../content/types.js';
import type { PeerDevice } from '../crypto/session.js';
import { defaultCompareCursors, type RealtimeClient } from '../realtime/client.js';
import { TypedEmitter } from '../realtime/emitter.js';
import type { OutgoingRoomMessage, RoomMessageEvent, ScanMeta } from '../realtime/types.js';
import type { SessionStore } from '../storage.js';
import { messageTypeFor } from './decisions.js';
import type { SecureMessenger } from './messenger.js';
import { SecureMessengerError, type SendOptions } from './types.js';

/**
 * What a room transport answers: the service's {@link RoomMessageResult}, or a rental room's send
 * result in that shape (`cursor` absent: a rental-room send answers none).
 */
export type RoomTransportResult = Omit<RoomMessageResult, 'cursor'> & { cursor?: string };

/** How room messages leave the device: {@link realtimeRoomTransport} or {@link restRoomTransport} (rental rooms: `rental-rooms.ts`). */
export interface RoomTransport {
  /** Store one room message (wire fields only); resolves with the service's answer. */
  send(message: OutgoingRoomMessage): Promise<RoomTransportResult>;
  /** Optional outbound scanner (contract §6.1 rule 5), run on the plaintext before encryption. */
  scan?(plaintext: Uint8Array, meta: ScanMeta): Promise<void>;
}

/** Send over a {@link RealtimeClient} (`sendRoom`: queued while offline, resolves with the `room_message_ack`). */
export function realtimeRoomTransport(realtime: RealtimeClient): RoomTransport {
  return {
    send: (message) => realtime.sendRoom(message),
    scan: (plaintext, meta) => realtime.scanOutbound(plaintext, meta),
  };
}

/**
 * Send with `POST /api/v1/rooms/{id}/messages` as owner device `deviceId` (`X-Device-Id`;
 * default: the client's acting device).
 */
export function restRoomTransport(client: ParleyClient, deviceId?: string): RoomTransport {
  return {
    send({ room_id, client_ref: _ref, ...body }) {
      return client.sendRoomMessage(room_id, body, deviceId === undefined ? undefined : { deviceId });
    },
  };
}

/** One page of a device's view of a room timeline, as a {@link RoomSource} reads it. */
export interface RoomTimelineView {
  /** Envelopes released to this device (not its own messages), oldest first, as live ones arrive. */
  received: RoomMessageEvent[];
  /** This device's own messages on the page with their recipients' receipt times (tenant rooms). */
  own: Pick<RoomTimelineEntry, 'room_message_id' | 'deliveries'>[];
  /** Entries on the page (received, own and the rest): a page shorter than asked is the last. */
  size: number;
  next_cursor: string | null;
}

/** What a {@link RoomSource} subscribes to on a socket: the room layer's entry points. */
export interface RoomListener {
  receive(message: RoomMessageEvent): Promise<void>;
  /** This device joined a room (register it). */
  joined(room: RoomInfo): void;
  /** A room's members changed (re-read it). */
  changed(roomId: string): void;
}

/**
 * Where a {@link RoomMessenger} reads its rooms, timelines and live messages: the tenant's rooms
 * ({@link tenantRoomSource}) or the rental rooms of marketplace rentals (`rental-rooms.ts`).
 */
export interface RoomSource {
  /** `room`: received messages carry `room_id`; `rental`: `rental_id` (and no read receipts). */
  readonly kind: 'room' | 'rental';
  /** Whether {@link read} and {@link timeline} can answer (a REST client is at hand). */
  readonly reads: boolean;
  /** A room as this device registers it. @throws TypeError when it cannot read; the service's errors. */
  read(roomId: string): Promise<RoomInfo>;
  /** A page of this device's view of a room after `since` (exclusive; `0`: from the start). */
  timeline(roomId: string, since: string, limit: number): Promise<RoomTimelineView>;
  /** Subscribe `rooms` to this kind's live events on `realtime`; answers the unsubscribers. */
  subscribe(realtime: RealtimeClient, rooms: RoomListener): (() => void)[];
  /** The transport `attach` installs on `realtime` (undefined: none, set one with `setTransport`). */
  transport?(realtime: RealtimeClient): RoomTransport | undefined;
  /**
   * The conversation id a room's pairwise sessions are bound to, when this device's conversation
   * ids are local (not the same on both devices); default: each pairwise conversation's id.
   */
  sessionContext?(roomId: string): string;
}

/**
 * The tenant's rooms (contract §4.6): details from `GET /rooms/{id}` and this device's member view of
 * timelines (`GET /rooms/{id}/messages?view=member`, as `deviceId`) with `client`; live
 * `room_message`, `room_joined` and `member_joined` events; sending with `room_message` frames.
 */
export function tenantRoomSource(client: ParleyClient | undefined, deviceId: string): RoomSource {
  const need = (): ParleyClient => {
    if (!client) throw new TypeError('RoomMessenger: reading rooms needs options.client');
    return client;
  };
  return {
    kind: 'room',
    reads: client !== undefined,
    read: async (roomId) => need().getRoom(roomId),
    async timeline(roomId, since, limit) {
      // The member view, as this device (owner clients send it as X-Device-Id).
      const page = await need().roomTimeline(roomId, { since, limit, view: 'member' }, { deviceId });
      const received = page.messages.flatMap((e) =>
        e.envelope && e.sender_device_id !== deviceId
          ? [{ room_id: roomId, room_message_id: e.room_message_id, sender_device_id: e.sender_device_id, header: e.envelope.header_blob, ciphertext: e.envelope.ciphertext, message_type: e.message_type, priority: e.priority, timestamp: e.timestamp, cursor: e.cursor }]
          : [],
      );
      return { received, own: page.messages.filter((e) => e.sender_device_id === deviceId), size: page.messages.length, next_cursor: page.next_cursor };
    },
    subscribe: (realtime, rooms) => [
      realtime.on('room_message', (m) => rooms.receive(m)),
      realtime.on('room_joined', (e) => rooms.joined(e)),
      realtime.on('member_joined', (e) => (client ? rooms.changed(e.room_id) : undefined)),
    ],
    transport: (realtime) => realtimeRoomTransport(realtime),
  };
}

/** Options of {@link RoomMessenger.open}. */
export interface RoomMessengerOptions {
  /** The device's messenger: sessions, state and the `message` event room messages arrive on. */
  messenger: SecureMessenger;
  /** Where the list of rooms is saved (`rooms-<device_id>`, `rental-rooms-<device_id>`); usually the messenger's store. */
  store: SessionStore;
  /** REST client acting as this device: reads room details and timelines (device JWT, or owner JWT + `X-Device-Id`). */
  client?: ParleyClient;
  /** Where rooms come from (default: the tenant's rooms, read with `client`). */
  source?: RoomSource;
  /** Where room messages go; `attach(realtime)` sets it too. */
  transport?: RoomTransport;
  /** Keys of a member the room lists without keys (answer its server-published keys, or undefined). */
  resolveMemberKeys?: (roomId: string, deviceId: string) => PeerDevice | undefined | Promise<PeerDevice | undefined>;
  /** Cursor order of room timelines (default: numeric, as the service's). */
  compareCursors?: (a: string, b: string) => number;
}

/**
 * A member as {@link RoomInfo} takes it: the service's {@link RoomMember} carries the public keys;
 * a caller's own description may leave them out (they are then resolved, see `resolveMemberKeys`).
 */
export type RoomInfoMember = Pick<RoomMember, 'device_id' | 'kind'> & Partial<Pick<RoomMember, 'identity_public_key' | 'ephemeral_public_key' | 'fingerprint'>>;

/** The part of a room this class needs: `Room`, `room_joined`, or the caller's own description. */
export interface RoomInfo {
  room_id: string;
  /** The room timeline id. */
  conversation_id: string;
  name: string;
  members: RoomInfoMember[];
  /** The room's pairwise conversations (those without this device are ignored). */
  conversations: RoomConversation[];
}

/** What {@link RoomMessenger.send} resolves with: the service's answer plus the room and recipients. */
export interface RoomSendReceipt extends RoomTransportResult {
  room_id: string;
  /** The local reference its status was `pending` under (`messenger.statuses.get(client_ref)`). */
  client_ref: string;
  /** The devices an envelope was made for (each one's outcome is in `deliveries`). */
  recipients: string[];
}

/** Events of {@link RoomMessenger}: problems not tied to a call (decrypted messages arrive on the messenger). */
export interface RoomMessengerEvents {
  error: (error: SecureMessengerError) => void;
}

/** One room in memory: peers by device id -> pairwise conversation id. */
interface RoomState {
  id: string;
  timeline: string;
  name: string;
  peers: Map<string, string>;
}

interface SavedRooms {
  v: 1;
  format: 'parley-rooms';
  device_id: string;
  rooms: Record<string, { conversation_id: string; name: string; peers: Record<string, string> }>;
}

/** Page size of timeline catch-up reads (the service maximum, design §8.12). */
const TIMELINE_PAGE = 200;

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A room problem as a SecureMessengerError (kept as is when it already is one). */
const asRoomError = (message: string, err: unknown) => (err instanceof SecureMessengerError ? err : new SecureMessengerError('unknown_conversation', message, { cause: err }));

/** End-to-end encrypted rooms of one device (see the file comment). Create with {@link RoomMessenger.open}. */
export class RoomMessenger extends TypedEmitter<RoomMessengerEvents> {
  private readonly messenger: SecureMessenger;
  private readonly deviceId: string;
  private readonly source: RoomSource;
  private readonly storeKey: string;
  private readonly compare: (a: string, b: string) => number;
  private transport: RoomTransport | undefined;
  private rooms = new Map<string, RoomState>();
  private receiving: Promise<void> = Promise.resolve();
  private readonly sending = new Map<string, Promise<unknown>>();
  private readonly detachers: (() => void)[] = [];

  private constructor(private readonly options: RoomMessengerOptions) {
    super((err, event) => {
      if (event !== 'error') this.emit('error', new SecureMessengerError('listener_failed', `a "${String(event)}" listener failed: ${describe(err)}`, { cause: err }));
    });
    this.messenger = options.messenger;
    this.deviceId = options.messenger.deviceId;
    this.source = options.source ?? tenantRoomSource(options.client, this.deviceId);
    this.storeKey = `${this.source.kind === 'rental' ? 'rental-rooms' : 'rooms'}-${this.deviceId}`;
    this.compare = options.compareCursors ?? defaultCompareCursors;
    this.transport = options.transport;
  }

  /**
   * Open the room layer of `options.messenger`'s device, restoring its saved list of rooms.
   * @throws Error when the saved list is corrupt or belongs to another device; the store's errors.
   */
  static async open(options: RoomMessengerOptions): Promise<RoomMessenger> {
    const r = new RoomMessenger(options);
    const text = await options.store.load(r.storeKey);
    if (text !== undefined) {
      const saved = JSON.parse(text) as SavedRooms;
      if (saved?.format !== 'parley-rooms' || saved.v !== 1 || typeof saved.rooms !== 'object') throw new Error('not a Parley room list (v1)');
      if (saved.device_id !== r.deviceId) throw new Error(`the saved room list belongs to device ${String(saved.device_id)}`);
      for (const [id, s] of Object.entries(saved.rooms)) r.rooms.set(id, { id, timeline: s.conversation_id, name: s.name, peers: new Map(Object.entries(s.peers)) });
    }
    return r;
  }

  /** The rooms known to this device. */
  roomIds(): string[] {
    return [...this.rooms.keys()];
  }

  /** The other members of a room this device has a pairwise conversation with, and those conversations. */
  peers(roomId: string): Map<string, string> {
    return new Map(this.rooms.get(roomId)?.peers ?? []);
  }

  /** Use this transport for sending (replaces the current one). */
  setTransport(transport: RoomTransport): void {
    this.transport = transport;
  }

  /**
   * Register a room (or its new member list): each pairwise conversation of this device becomes a
   * messenger conversation with the other member as peer; removed members are forgotten.
   * `keys` supplies members the room lists without keys (before `resolveMemberKeys`).
   * @throws SecureMessengerError `unknown_conversation` when a member's keys are unknown (nothing
   *   is changed for that member); Error when a conversation already has a peer with other keys.
   */
  async addRoom(room: RoomInfo, keys: readonly PeerDevice[] = []): Promise<void> {
    const peers = new Map<string, string>();
    const missing: string[] = [];
    for (const c of room.conversations) {
      if (c.device_ids.length !== 2 || !c.device_ids.includes(this.deviceId)) continue;
      const peerId = c.device_ids[0] === this.deviceId ? c.device_ids[1]! : c.device_ids[0]!;
      const peer = await this.memberKeys(room, peerId, keys);
      if (!peer) {
        missing.push(peerId);
        continue;
      }
      const sessionContext = this.source.sessionContext?.(room.room_id);
      await this.messenger.addConversation(c.conversation_id, peer, sessionContext !== undefined ? { sessionContext } : {});
      peers.set(peerId, c.conversation_id);
    }
    this.rooms.set(room.room_id, { id: room.room_id, timeline: room.conversation_id, name: room.name, peers });
    await this.save();
    if (missing.length > 0) {
      throw new SecureMessengerError('unknown_conversation', `room ${room.room_id}: no public keys for member(s) ${missing.join(', ')}; pass them to addRoom() or resolveMemberKeys`);
    }
  }

  /** Re-read a room (tenant rooms: `GET /rooms/{id}`) and register it. @throws TypeError without a client; as {@link addRoom}; ParleyApiError. */
  async refresh(roomId: string): Promise<void> {
    await this.addRoom(await this.source.read(roomId));
  }

  /**
   * Receive from a realtime client: the source's live messages are decrypted (tenant rooms:
   * `room_message` envelopes, the client awaits each), rooms joined are registered
   * (`room_joined`), rooms whose members changed re-read (`member_joined`), and every reconnection
   * catches the known rooms up (with a client). Unless `options.transport` is false (owners that
   * send over REST), the source's socket transport (if any) becomes the transport. Returns a
   * function that detaches.
   */
  attach(realtime: RealtimeClient, options: { transport?: boolean } = {}): () => void {
    const report = (err: unknown) => this.emit('error', asRoomError(describe(err), err));
    const offs = [
      ...this.source.subscribe(realtime, {
        receive: (m) => this.receive(m),
        joined: (room) => void this.addRoom(room).catch(report),
        changed: (roomId) => void this.refresh(roomId).catch(report),
      }),
      realtime.on('stateChange', (e) => {
        if (e.state === 'open' && this.source.reads) for (const id of this.rooms.keys()) void this.catchUp(id).catch(report);
      }),
    ];
    const transport = (options.transport ?? true) ? this.source.transport?.(realtime) : undefined;
    if (transport) this.transport = transport;
    const off = () => offs.forEach((f) => f());
    this.detachers.push(off);
    return off;
  }

  /**
   * Handle one `room_message` envelope addressed to this device: decrypted in the session of the
   * pairwise conversation with its sender and delivered on the messenger's `message` event (see
   * the file comment). Processed one at a time in call order; an unknown room or sender is
   * re-read once with the client. Never rejects: problems are `error` events (here, or on the
   * messenger for decryption).
   */
  receive(message: RoomMessageEvent): Promise<void> {
    this.receiving = this.receiving.then(() => this.handle(message));
    return this.receiving;
  }

  /**
   * Read this device's member view of a room's timeline from its resume point and receive every
   * envelope released to it (in release order, queued with live messages so each is handled once).
   * @returns how many entries carried an envelope for this device.
   * @throws TypeError without a client; ParleyApiError / ParleyNetworkError from the timeline.
   */
  catchUp(roomId: string): Promise<number> {
    if (!this.source.reads) return Promise.reject(new TypeError('RoomMessenger: catch-up needs options.client'));
    const run = this.receiving.then(async () => {
      let since = this.resumeCursor(roomId);
      let count = 0;
      for (;;) {
        const page = await this.source.timeline(roomId, since, TIMELINE_PAGE);
        // Receipts of this device's own messages on the page (delivered_at / read_at per recipient).
        this.messenger.statuses.fromTimeline(page.own);
        for (const m of page.received) {
          count++;
          await this.handle(m);
        }
        if (page.size < TIMELINE_PAGE || page.next_cursor === null) return count;
        since = page.next_cursor;
      }
    });
    this.receiving = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Where a room's catch-up resumes: the newest of its conversations' resume cursors (`0`, the
   * beginning, when nothing was handled in the room yet).
   */
  resumeCursor(roomId: string): string {
    let best = '0';
    for (const conv of this.rooms.get(roomId)?.peers.values() ?? []) {
      const c = this.messenger.resumeCursor(conv);
      if (this.compare(c, best) > 0) best = c;
    }
    return best;
  }

  /**
   * Encrypt structured content (contract §2.4) for every other member and send it as one room
   * message. Errors as {@link sendPlaintext}.
   */
  send(roomId: string, content: Content, options: Pick<SendOptions, 'message_type' | 'priority'> = {}): Promise<RoomSendReceipt> {
    const plaintext = encodeContent(content.type, content.payload);
    const messageType = options.message_type ?? messageTypeFor(content.type);
    return this.sendPlaintext(roomId, plaintext, { ...options, ...(messageType ? { message_type: messageType } : {}) });
  }

  /** {@link send} of a `text` content. */
  sendText(roomId: string, text: string, options: Pick<SendOptions, 'message_type' | 'priority'> = {}): Promise<RoomSendReceipt> {
    return this.send(roomId, { type: 'text', payload: { text } }, options);
  }

  /**
   * Encrypt raw bytes once per other member (one envelope each) and send one room message.
   * The member list is re-read first when a client is given (on failure the last known one is
   * used, reported as an `error` event unless the network failed). Room messages of one room go
   * to the transport in call order.
   * @throws SecureMessengerError `no_transport`, `unknown_conversation` (unknown room, no other
   *   member, or a member without keys), `send_failed` (transport error as `cause`), `stopped`,
   *   `persist_failed`; the transport's scanner error when it refuses the plaintext.
   */
  async sendPlaintext(roomId: string, plaintext: Uint8Array, options: Pick<SendOptions, 'message_type' | 'priority'> = {}): Promise<RoomSendReceipt> {
    const transport = this.transport;
    if (!transport) throw new SecureMessengerError('no_transport', 'no room transport: call attach() or setTransport() first');
    if (this.source.reads) {
      try {
        await this.refresh(roomId);
      } catch (err) {
        // Send to the last known members: the service refuses the message if they are stale.
        if (!this.rooms.has(roomId)) throw err;
        if (!(err instanceof ParleyNetworkError)) this.emit('error', asRoomError(`re-reading room ${roomId} failed (${describe(err)}); sending to the last known members`, err));
      }
    }
    const room = this.rooms.get(roomId);
    if (!room) throw new SecureMessengerError('unknown_conversation', `unknown room ${roomId}: addRoom() first`);
    const recipients = [...room.peers.keys()];
    if (recipients.length === 0) throw new SecureMessengerError('unknown_conversation', `room ${roomId} has no other member to send to`);
    const meta: Omit<RoomMessageInput, 'envelopes'> = {
      ...(options.message_type !== undefined ? { message_type: options.message_type } : {}),
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
    };
    if (transport.scan) await transport.scan(plaintext, { conversation_id: room.timeline, room_id: roomId, ...meta });
    const sealed = await this.messenger.seal(
      recipients.map((d) => room.peers.get(d)!),
      plaintext,
      meta,
    );
    const envelopes = sealed.map((w, i) => ({ recipient_device_id: recipients[i]!, header_blob: w.header_blob, ciphertext: w.ciphertext }));
    // The message's status under one reference from here on (the realtime transport's client_ref).
    const ref = globalThis.crypto.randomUUID();
    const statuses = this.messenger.statuses;
    statuses.pending(ref, { room_id: roomId });
    const previous = this.sending.get(roomId) ?? Promise.resolve();
    const run = previous.then(() => transport.send({ room_id: roomId, ...meta, envelopes, client_ref: ref }));
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.sending.set(roomId, tail);
    void tail.then(() => this.sending.get(roomId) === tail && this.sending.delete(roomId));
    try {
      const result = await run;
      const expected = result.deliveries.filter((d) => d.outcome !== 'blocked').map((d) => d.recipient_device_id);
      statuses.sent(ref, { room_id: roomId }, { message_id: result.room_message_id, ...(result.cursor !== undefined ? { cursor: result.cursor } : {}), timestamp: result.timestamp, expected });
      return { ...result, room_id: roomId, recipients, client_ref: ref };
    } catch (err) {
      statuses.failed(ref, describe(err));
      throw new SecureMessengerError('send_failed', `sending to room ${roomId} failed: ${describe(err)}`, { cause: err });
    }
  }

  /** Stop listening to attached realtime clients and wait for pending receives and sends. */
  async close(): Promise<void> {
    for (const off of this.detachers.splice(0)) off();
    await this.receiving;
    await Promise.all([...this.sending.values()]);
  }

  // ------------------------------------------------------------------ internals

  private async handle(m: RoomMessageEvent): Promise<void> {
    if (m.sender_device_id === this.deviceId) return;
    let conv = this.rooms.get(m.room_id)?.peers.get(m.sender_device_id);
    if (conv === undefined && this.source.reads) {
      try {
        await this.refresh(m.room_id);
      } catch {
        /* reported below if still unknown */
      }
      conv = this.rooms.get(m.room_id)?.peers.get(m.sender_device_id);
    }
    if (conv === undefined) {
      this.emit('error', new SecureMessengerError('unknown_conversation', `room message ${m.room_message_id} from ${m.sender_device_id} in room ${m.room_id}: no pairwise conversation with that sender; skipped`, { messageId: m.room_message_id }));
      return;
    }
    await this.messenger.receive({
      message_id: m.room_message_id,
      conversation_id: conv,
      sender_device_id: m.sender_device_id,
      header_blob: m.header,
      ciphertext: m.ciphertext,
      timestamp: m.timestamp,
      cursor: m.cursor,
      message_type: m.message_type,
      priority: m.priority,
      ...(this.source.kind === 'rental' ? { rental_id: m.room_id } : { room_id: m.room_id }),
    });
  }

  private async memberKeys(room: RoomInfo, deviceId: string, keys: readonly PeerDevice[]): Promise<PeerDevice | undefined> {
    const m = room.members.find((x) => x.device_id === deviceId);
    if (m?.identity_public_key && m.ephemeral_public_key) return { device_id: deviceId, identity_public_key: m.identity_public_key, ephemeral_public_key: m.ephemeral_public_key };
    const given = keys.find((k) => k.device_id === deviceId);
    if (given) return given;
    const known = this.rooms.get(room.room_id)?.peers.get(deviceId);
    if (known !== undefined) return this.messenger.peer(known);
    return this.options.resolveMemberKeys ? await this.options.resolveMemberKeys(room.room_id, deviceId) : undefined;
  }

  private async save(): Promise<void> {
    const rooms: SavedRooms['rooms'] = {};
    for (const r of this.rooms.values()) rooms[r.id] = { conversation_id: r.timeline, name: r.name, peers: Object.fromEntries(r.peers) };
    const doc: SavedRooms = { v: 1, format: 'parley-rooms', device_id: this.deviceId, rooms };
    await this.options.store.save(this.storeKey, JSON.stringify(doc));
  }
}
