/**
 * The persisted state of a `SecureMessenger`: one JSON document per local device, written whole
 * and atomically (by the `SessionStore`) after every change (a delivered message's removal from
 * `inbox` waits for the next write: messenger.ts), so that the session states, the cursors of what
 * was processed and the decrypted-but-undelivered messages always agree.
 *
 * ```
 * { v: 1, format: "parley-secure-messenger", device_id,
 *   mls?: <MlsClient.exportState()>,
 *   prekeys?: <PrekeyStore.toJSON()>,             // X25519 signed + one-time prekeys (X3DH §3.2)
 *   recent: [{id, cursor}],                       // last messages handled, all conversations
 *   conversations: { <conversation_id>: {
 *       peer: {device_id, identity_public_key, ephemeral_public_key},
 *       session_context?: <id sessions are bound to>,   // when not the conversation id
 *       primary?: <session id>,
 *       sessions: [{id, protocol, initiator, established, created_at, ratchet? | group_id?}],
 *       recent: [{id, cursor}],                   // last messages handled in this conversation
 *       seen_x3dh: [<EK_A hex>],                  // X3DH initial messages already accepted
 *       peer_signed_prekeys?: true } },           // the peer device once served a signed prekey
 *   inbox: [<decrypted message not yet handed to the application>] }
 * ```
 * It holds secret keys (and, until delivery, plaintexts): keep it confidential.
 */
import type { PeerDevice } from '../crypto/session.js';
import type { RatchetStateJSON } from '../crypto/double-ratchet.js';
import type { PrekeyStateJSON } from '../crypto/prekeys.js';
import type { SessionProtocol } from '../mls/protocol.js';
import type { SecureMessage, SessionInitiator } from './types.js';

/** `format` of the document. */
export const STATE_FORMAT = 'parley-secure-messenger';

/** A handled message: id and cursor (de-duplication and resume point). */
export interface HandledRef {
  id: string;
  cursor: string;
}

/** One end-to-end session of a conversation, as saved. */
export interface SessionRecord {
  /** `dr:<EK_A hex>` (X3DH + Double Ratchet) or `mls:<group id>`. */
  id: string;
  protocol: SessionProtocol;
  initiator: SessionInitiator;
  /** A message from the peer was read in this session (always true for peer-initiated ones). */
  established: boolean;
  created_at: string;
  /** X3DH + Double Ratchet state. */
  ratchet?: RatchetStateJSON;
  /** MLS group id (the group state lives in the MLS client export). */
  group_id?: string;
  /** MLS sessions this device started: the Welcome's wire fields until the service stored it. */
  opening?: { header_blob: string; ciphertext: string };
}

/** One conversation, as saved. */
export interface ConversationRecord {
  peer: PeerDevice;
  /** The conversation id its ratchet sessions are bound to, when not the conversation id itself. */
  session_context?: string;
  primary?: string;
  sessions: SessionRecord[];
  recent: HandledRef[];
  seen_x3dh: string[];
  /**
   * The peer device served a signed prekey to this device once (X3DH §3.3): a later claim answering
   * "none published" (404) is a downgrade and refused.
   */
  peer_signed_prekeys?: true;
}

/** A decrypted message saved with the state that decrypted it, until the application has it. */
export type InboxEntry = Omit<SecureMessage, 'plaintext' | 'content' | 'contentError' | 'redelivered'> & {
  /** base64 of the plaintext. */
  plaintext: string;
};

/** The whole document. */
export interface MessengerState {
  v: 1;
  format: typeof STATE_FORMAT;
  device_id: string;
  mls?: string;
  /** This device's X25519 signed and one-time prekeys with their private keys (`PrekeyStore`). */
  prekeys?: PrekeyStateJSON;
  recent: HandledRef[];
  conversations: Record<string, ConversationRecord>;
  inbox: InboxEntry[];
}

/** A fresh, empty state for `deviceId`. */
export function emptyState(deviceId: string): MessengerState {
  return { v: 1, format: STATE_FORMAT, device_id: deviceId, recent: [], conversations: {}, inbox: [] };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parse a saved document and check its outline (the ratchet and MLS parts are checked when they
 * are restored).
 * @throws Error when the text is not a v1 messenger state of `deviceId`.
 */
export function parseState(text: string, deviceId: string): MessengerState {
  const o: unknown = JSON.parse(text);
  if (!isObject(o) || o.v !== 1 || o.format !== STATE_FORMAT) throw new Error('not a Parley secure-messenger state (v1)');
  if (o.device_id !== deviceId) throw new Error(`the saved state belongs to device ${String(o.device_id)}, not ${deviceId}`);
  if (!Array.isArray(o.recent) || !isObject(o.conversations) || !Array.isArray(o.inbox)) throw new Error('malformed secure-messenger state');
  if (o.mls !== undefined && typeof o.mls !== 'string') throw new Error('malformed MLS state');
  if (o.prekeys !== undefined && !isObject(o.prekeys)) throw new Error('malformed prekey state');
  for (const [id, c] of Object.entries(o.conversations)) {
    if (!isObject(c) || !isObject(c.peer) || !Array.isArray(c.sessions) || !Array.isArray(c.recent) || !Array.isArray(c.seen_x3dh)) {
      throw new Error(`malformed conversation ${id}`);
    }
  }
  return o as unknown as MessengerState;
}
