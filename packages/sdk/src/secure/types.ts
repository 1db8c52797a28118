/**
 * Public types of the secure-messaging layer (`SecureMessenger`): what it delivers, how it sends,
 * its options, events and errors. contract §1.2 (zero knowledge: only ciphertext leaves the device),
 * §1.3 (MLS first, X3DH + Double Ratchet as fallback), §2.4 (message fields, structured content),
 * §6.1 (the `message` frames it consumes and produces).
 */
import type { CiphersuiteName } from 'ts-mls';
import type { ParleyClient } from '../client/rest.js';
import type { MessageType, Priority, StoredMessage } from '@parley/protocol';
import type { Content } from '../content/types.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import type { PrekeyStore } from '../crypto/prekeys.js';
import type { PeerDevice } from '../crypto/session.js';
import type { SessionProtocol } from '../mls/protocol.js';
import type { MessageStatusTracker } from '../realtime/status.js';
import type { OutgoingMessage, ScanMeta } from '../realtime/types.js';
import type { SessionStore } from '../storage.js';
import type { KeyTransparencyOptions } from '../key-transparency/index.js';
import type { MetaField } from './metadata.js';

/** Who started an end-to-end session: this device (`local`) or the peer (`peer`). */
export type SessionInitiator = 'local' | 'peer';

/**
 * A decrypted message handed to the application (`message` event), in the order the service
 * committed it within its conversation. The service-visible fields are those of contract §6.1's
 * receive frame (plus design §7's metadata); `plaintext` / `content` never left the two devices.
 */
export interface SecureMessage {
  message_id: string;
  conversation_id: string;
  sender_device_id: string;
  /** ISO 8601 commit time given by the service. */
  timestamp: string;
  /** The service's opaque, total-ordered cursor of this message. */
  cursor: string;
  /**
   * `message_type` as the sender declared it (metadata, also visible to the service). This,
   * `priority` and `topic_id` are the values the sender sealed inside the ciphertext
   * (`secure/metadata.ts`), not the service's copies.
   */
  message_type: string;
  priority: string;
  topic_id?: string;
  /**
   * Set when the service reported other values for these fields than the sender sealed (it
   * rewrote them on the way): the fields concerned. A `metadata_mismatch` error is emitted too.
   */
  metadata_mismatch?: MetaField[];
  message_group_id?: string;
  /**
   * Set for a room message (design §8.5): the room. `message_id` is then the room_message_id,
   * `conversation_id` the room's pairwise conversation with the sender, and `cursor` the room
   * timeline cursor. See `secure/rooms.ts`.
   */
  room_id?: string;
  /**
   * Set for a rental-room message (contract §4.16): the rental. `message_id` is then the relayed
   * message's id, `conversation_id` this device's local pairwise conversation with the sender in
   * that room, and `cursor` the rental-room history cursor. Rental rooms have no read receipts.
   * See `secure/rental-rooms.ts`.
   */
  rental_id?: string;
  /** The protocol of the session that decrypted it (contract §1.3). */
  protocol: SessionProtocol;
  /** The decrypted bytes. */
  plaintext: Uint8Array;
  /** The structured content (contract §2.4) when the plaintext is a valid `{type, payload}` envelope. */
  content: Content | undefined;
  /** Why `content` is undefined (the plaintext is not a valid envelope), when it is. */
  contentError?: Error;
  /**
   * True when the message was decrypted (and its session state saved) by an earlier run that
   * stopped before the application had it: it is handed over again after a restart.
   */
  redelivered: boolean;
}

/**
 * What {@link SecureMessenger.receive} takes: a stored message (contract §6.1 receive frame), or a
 * room (rental-room) envelope presented as a message of the pairwise conversation with its sender
 * (`room_id` / `rental_id` set; see `secure/rooms.ts`).
 */
export type ReceivedMessage = Omit<StoredMessage, 'topic_id' | 'message_group_id'> & {
  topic_id?: string;
  message_group_id?: string;
  room_id?: string;
  rental_id?: string;
};

/** One output of {@link SecureMessenger.seal}: the wire fields of one conversation, not sent. */
export interface SealedWire {
  conversation_id: string;
  /** base64 (contract §2.4). */
  header_blob: string;
  /** base64. */
  ciphertext: string;
  protocol: SessionProtocol;
  session_id: string;
}

/** What a transport answers for a stored message (the `message_ack` or the REST 201 body). */
export interface TransportReceipt {
  message_id: string;
  cursor?: string;
  timestamp?: string;
}

/**
 * How encrypted messages leave the device. See `realtimeTransport` (agents and owners over the
 * WebSocket, contract §6.1) and `restTransport` (owners, `POST /conversations/{id}/messages`, contract §4.5).
 */
export interface SecureTransport {
  /**
   * Store one encrypted message (wire fields only). Resolves once the service committed it.
   * @throws whatever the transport throws (RealtimeError, ParleyApiError, ParleyNetworkError).
   */
  send(message: OutgoingMessage): Promise<TransportReceipt>;
  /**
   * Optional outbound scanner (contract §6.1 rule 5), run on the plaintext before encryption; throws
   * to refuse the message (nothing is encrypted or sent then).
   */
  scan?(plaintext: Uint8Array, meta: ScanMeta): Promise<void>;
}

/** What {@link SecureMessenger.send} resolves with. */
export interface SentMessage {
  message_id: string;
  conversation_id: string;
  /** The local reference its status was `pending` under (`statuses.get(client_ref)`). */
  client_ref: string;
  cursor?: string;
  timestamp?: string;
  /** The protocol of the session the message was encrypted in. */
  protocol: SessionProtocol;
  /** The local id of that session (`mls:<group id>` or `dr:<X3DH ephemeral key>`). */
  session_id: string;
}

/** Per-message metadata the sender chooses (visible to the service; contract §2.4, §6.1). */
export interface SendOptions {
  /** Default: the content type when contract §2.4 lists it as a message type, else the service default (`text`). */
  message_type?: MessageType;
  priority?: Priority;
  topic_id?: string;
  message_group_id?: string;
}

/** MLS settings of a {@link SecureMessenger} (contract §1.3; RFC 9420 KeyPackages, contract §4 `/mls/key-packages`). */
export interface SecureMlsOptions {
  /** Use MLS when the peer publishes KeyPackages (default true). False: X3DH + Double Ratchet only. */
  enabled?: boolean;
  /** Publish more KeyPackages when the service holds fewer than this many of ours (default 3). */
  minKeyPackages?: number;
  /** How many the service should hold after a top-up (default 10). */
  targetKeyPackages?: number;
  /**
   * The MLS ciphersuites to run (default both: the hybrid X-Wing one, preferred, and the classical
   * one). `[MLS_CIPHERSUITE]` behaves as a client from before X-Wing.
   */
  ciphersuites?: readonly CiphersuiteName[];
}

/**
 * Options of {@link SecureMessenger.open}.
 *
 * - `identity` must carry its device id (`DeviceIdentity.withDeviceId`).
 * - `store` keeps the whole messenger state under one key (ratchet states, MLS client export,
 *   per-conversation cursors, and decrypted messages not yet handed to the application); every
 *   write replaces it atomically with a durable store such as `FileSessionStore`. It holds secret
 *   keys and, briefly, plaintexts: keep it on the device with owner-only access.
 * - `client` is needed for MLS (publishing and claiming KeyPackages) and by `resolvePeer`
 *   implementations; without it the messenger uses X3DH + Double Ratchet only.
 */
export interface SecureMessengerOptions {
  identity: DeviceIdentity;
  store: SessionStore;
  /** REST client acting as this device (device JWT, or owner JWT + this device as `X-Device-Id`). */
  client?: ParleyClient;
  /** MLS on or off (`false`), or its settings. Default: on when `client` is given. */
  mls?: boolean | SecureMlsOptions;
  /** Key of the state in `store` (default `secure-<device_id>`). */
  storeKey?: string;
  /** Where encrypted messages go; `attach(realtime)` sets it too. */
  transport?: SecureTransport;
  /**
   * Called for a conversation the messenger does not know yet: a received message's (with its
   * sender) or a `send` target's (without). Answer the peer device (its server-published keys),
   * or undefined to drop the message / refuse the send. Owners typically answer from
   * `GET /conversations/{id}/keys` (see `ownerPeerResolver`); the answer is saved.
   */
  resolvePeer?: (conversationId: string, senderDeviceId?: string) => Promise<PeerDevice | undefined>;
  /** Cursor order (default: the realtime client's numeric-then-lexicographic order). */
  compareCursors?: (a: string, b: string) => number;
  /**
   * Where the status of sent messages is kept (`statuses`). Default: the
   * tracker of the attached realtime client (which sees the receipts), else the messenger's own.
   */
  statuses?: MessageStatusTracker;
  /**
   * Send a read receipt for each received message once every `message` listener settled (the
   * latest per conversation or room, within ~50 ms). Default false: call `markRead` when the
   * application has shown or handled the message. The service drops reads of devices or tenants
   * that turned read receipts off.
   */
  autoRead?: boolean;
  /**
   * Refuse classical end-to-end sessions (default false): no X3DH session without the peer's
   * verified PQ prekey (PQXDH rev. 3), no classical X3DH initial message accepted, no MLS group of
   * a non-hybrid ciphersuite (RFC 9420 §17.1) started or joined, and only hybrid (X-Wing)
   * KeyPackages published. The tenant's `require_post_quantum` setting (read with `client`) has the
   * same effect; either one suffices. Sessions from before the requirement keep running (see
   * `protection()`). Refusals are `pq_downgrade` errors.
   */
  requirePostQuantum?: boolean;
  /**
   * Refuse the legacy X3DH path (default false): no session is started towards a peer that has no
   * signed prekey to claim (X3DH rev. 1 §3.3; an older client, or a service answering 404), and no
   * initial message built on this device's unsigned `ephemeral_public_key` is accepted. Without it,
   * that path stays open only for peer devices that never served a signed prekey to this device.
   * Refusals are `prekey_refused` errors.
   */
  requireSignedPrekeys?: boolean;
  /**
   * Keep this device's X25519 signed and one-time prekeys (X3DH rev. 1 §3.2) in this messenger's
   * state, publish them at `start` (`POST /prekeys`: the signed prekey rotated weekly, one-time
   * prekeys topped up) and answer initial messages built on them. Default false: the device
   * publishes none and peers use the legacy path towards it. Enable it on ONE messenger per device,
   * the one that receives every X3DH initial message addressed to the device: the service keeps
   * one prekey directory per device, so a second messenger of the same device (e.g. a separate A2A
   * channel messenger with its own `storeKey`) publishing its own keys would make initial messages
   * it cannot answer (a second messenger answers on these through `prekeysFrom`). Independently of
   * it, every messenger with a client claims and verifies a peer's prekeys when it starts a session.
   */
  prekeys?: boolean;
  /**
   * Answer initial messages built on the prekeys another messenger of this device holds (its main
   * messenger's {@link SecureMessenger.prekeySharing}): for a second messenger of the device, such
   * as the A2A channel messenger, since the service keeps one prekey directory per device. A
   * one-time prekey used here is deleted in the holder once this messenger saved the session.
   */
  prekeysFrom?: SharedPrekeys;
  /**
   * Key transparency (design §8.39): verify every key of a peer in the key directory before a
   * session trusts it (`false`: off; an object: `KeyTransparencyOptions` such as `pinned` facts or
   * `report: false`). Default: on whenever `client` speaks the key directory routes. Its state
   * (the pinned facts, the last accepted checkpoint) is kept in `store` under
   * `key-transparency-<storeKey>`.
   */
  keyTransparency?: boolean | Omit<KeyTransparencyOptions, 'store' | 'storeKey' | 'deviceId'>;
}

/**
 * A device's prekeys as a second messenger of the device uses them ({@link SecureMessengerOptions.prekeysFrom}).
 */
export interface SharedPrekeys {
  /** The holder's current store (undefined when it holds none). */
  store(): PrekeyStore | undefined;
  /** Delete one-time prekey `keyId` (X3DH §3.4) and save the holder's state; no-op when not held. */
  consume(keyId: string): Promise<void>;
}

/** Payload of the `session` event: an end-to-end session was created or became the one used for sending. */
export interface SessionEvent {
  conversation_id: string;
  session_id: string;
  protocol: SessionProtocol;
  initiator: SessionInitiator;
  /** True when this session is now the one new messages are encrypted in. */
  primary: boolean;
}

/**
 * Why the messenger reports an error:
 * - `persist_failed`: saving the state failed; the messenger stops (`failed` is true) with its
 *   in-memory state rolled back to the last saved one. Open a new messenger from the same store
 *   to resume: nothing acknowledged is lost (this is the same situation as a crash).
 * - `stopped`: the messenger stopped after a `persist_failed` and refuses work.
 * - `decrypt_failed`: a message could not be authenticated or decrypted; it is skipped.
 * - `unknown_conversation`: a message for a conversation with no known peer; it is skipped.
 * - `wrong_sender`: a message of a conversation from another device than its peer; skipped.
 * - `session_rejected`: a session-starting message (X3DH initial message, MLS Welcome) was refused.
 * - `no_transport`: `send` without a transport.
 * - `send_failed`: the transport refused or lost a message (`cause` holds its error).
 * - `key_packages`: publishing MLS KeyPackages failed (MLS sessions cannot start towards us).
 * - `listener_failed`: a `message` listener threw (the message still counts as delivered).
 * - `unsupported_version`: a message from an older Parley SDK (an `x3dh-dr` v1 frame, without
 *   conversation binding, or a plaintext without sealed metadata); it is skipped and the sender
 *   must upgrade.
 * - `metadata_mismatch`: the service reported a received message's `message_type`, `priority` or
 *   `topic_id` differently from what the sender sealed; the message is delivered with the sealed
 *   values and `metadata_mismatch` set.
 * - `pq_downgrade`: a session was refused as a post-quantum downgrade: the service served a PQ
 *   prekey that fails its signature or identifier check, or its claim failed (PQXDH rev. 3 §3.3:
 *   abort); or post-quantum is required and the peer's PQ prekey is missing, a classical X3DH
 *   initial message arrived, or an MLS KeyPackage or Welcome is of a non-hybrid ciphersuite. No
 *   session is started or accepted; a refused `send` rejects with it.
 * - `prekey_refused`: no session was started or accepted on the peer's X25519 prekeys (X3DH
 *   rev. 1 §3.3: abort): the service served a signed prekey the peer did not sign, or its claim
 *   failed; or it answered "none published" for a peer device that served one before, or while
 *   `requireSignedPrekeys` is set; or an initial message on the legacy path arrived while
 *   `requireSignedPrekeys` is set. A refused `send` rejects with it.
 * - `policy_unavailable`: the tenant's `require_post_quantum` setting could not be read; it counts
 *   as off until a later read succeeds (the service serves it, so it could as well say "off").
 * - `key_transparency`: a key the service served for the peer (its identity or X25519 key, a
 *   signed, PQ or one-time prekey) failed its key-transparency check (design §8.39; `cause` is the
 *   `KeyTransparencyError`): no session was started or accepted, and the owners were told. A
 *   refused `send` rejects with it.
 */
export type SecureErrorCode =
  | 'persist_failed'
  | 'stopped'
  | 'decrypt_failed'
  | 'unknown_conversation'
  | 'wrong_sender'
  | 'session_rejected'
  | 'no_transport'
  | 'send_failed'
  | 'key_packages'
  | 'listener_failed'
  | 'unsupported_version'
  | 'metadata_mismatch'
  | 'pq_downgrade'
  | 'prekey_refused'
  | 'policy_unavailable'
  | 'key_transparency';

/** Error of the secure-messaging layer (rejections of `send`, and `error` events). */
export class SecureMessengerError extends Error {
  override readonly name = 'SecureMessengerError';
  /** The conversation concerned, when any. */
  readonly conversationId?: string;
  /** The message concerned (received message id), when any. */
  readonly messageId?: string;

  constructor(
    readonly code: SecureErrorCode,
    message: string,
    extra: { conversationId?: string; messageId?: string; cause?: unknown } = {},
  ) {
    super(message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    if (extra.conversationId !== undefined) this.conversationId = extra.conversationId;
    if (extra.messageId !== undefined) this.messageId = extra.messageId;
  }
}

/** Events of {@link SecureMessenger} and their listener signatures. */
export interface SecureMessengerEvents {
  /**
   * A decrypted message. Listeners run one after another and a returned promise is awaited
   * before the next message is handed over, so handlers see each conversation strictly in order.
   * The session state was saved before this call; the message is removed from the pending list
   * once every listener settled.
   */
  message: (message: SecureMessage) => void | Promise<void>;
  /** A problem not tied to a `send` call (see {@link SecureErrorCode}). */
  error: (error: SecureMessengerError) => void;
  /** A session was started or accepted. */
  session: (event: SessionEvent) => void;
}
