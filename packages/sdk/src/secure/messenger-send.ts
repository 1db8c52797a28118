/**
 * Sending for a {@link SecureMessenger} (`messenger.ts`; contract §1.3, §4.5): a message is
 * encrypted and the new session state saved under the messenger's lock before it is handed to the
 * transport, so a message key is never used twice; an MLS session's Welcome goes (again) before the
 * first message until the service stored it. Wires of one conversation go out in order.
 */
import type { KeyedQueue } from '../keyed-queue.js';
import type { MessageStatusTracker } from '../realtime/status.js';
import type { OutgoingMessage } from '../realtime/types.js';
import type { LiveConversation, LiveSession } from './conversation.js';
import type { MessengerCore } from './messenger-core.js';
import { describe, randomId, type MessengerHost } from './messenger-host.js';
import { conversationFor, encryptIn, startSession } from './messenger-sessions.js';
import { resolveMeta } from './metadata.js';
import { SecureMessengerError, type SecureTransport, type SendOptions, type SentMessage, type TransportReceipt } from './types.js';

/** An outgoing message built under the lock, sent after it. */
interface Prepared {
  wires: OutgoingMessage[];
  /** Set when `wires[0]` is the session-starting message (MLS Welcome) still to confirm. */
  opening: { session: LiveSession; conversation: LiveConversation } | undefined;
  session: LiveSession;
}

/**
 * Start the session if needed, encrypt, save (under the lock).
 * @throws SecureMessengerError `stopped`, `unknown_conversation`, `persist_failed`, and the session set-up's.
 */
async function prepare(core: MessengerCore, host: MessengerHost, conversationId: string, plaintext: Uint8Array, meta: SendOptions & { client_ref?: string }): Promise<Prepared> {
  core.ensureRunning();
  const conv = await conversationFor(host, conversationId);
  let session = conv.primarySession();
  if (!session) session = await startSession(host, conv, true);
  const wires: OutgoingMessage[] = [];
  let opening: Prepared['opening'];
  if (session.protocol === 'mls' && session.opening && !session.openingInFlight) {
    // The Welcome is not known to be stored yet: it goes (again) before this message.
    wires.push({ conversation_id: conversationId, ...session.opening });
    session.openingInFlight = true;
    opening = { session, conversation: conv };
  }
  const wire = await encryptIn(host, session, plaintext, resolveMeta(meta));
  wires.push({ conversation_id: conversationId, ...wire, ...meta });
  await core.persist();
  return { wires, opening, session };
}

/**
 * Send prepared wires in order, one conversation at a time (`queue`); resolves with the last receipt.
 * @throws SecureMessengerError `send_failed` (the transport's error as `cause`).
 */
function dispatch(queue: KeyedQueue, conversationId: string, transport: SecureTransport, prepared: Prepared): Promise<TransportReceipt> {
  return queue.run(conversationId, async () => {
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

/**
 * Send one plaintext in a conversation (`SecureMessenger.sendPlaintext`): the transport's scanner
 * sees it first, then it is encrypted and saved under the lock ({@link prepare}) and sent in order
 * ({@link dispatch}); the tracker `statuses()` answers follows it under a fresh client reference,
 * from `pending` to `sent` or `failed`.
 * @throws the scanner's error; SecureMessengerError `stopped`, `unknown_conversation`, `persist_failed`, `send_failed`.
 */
export async function sendMessage(
  core: MessengerCore,
  host: MessengerHost,
  queue: KeyedQueue,
  transport: SecureTransport,
  statuses: () => MessageStatusTracker,
  conversationId: string,
  plaintext: Uint8Array,
  options: SendOptions,
): Promise<SentMessage> {
  const meta = {
    ...(options.message_type !== undefined ? { message_type: options.message_type } : {}),
    ...(options.priority !== undefined ? { priority: options.priority } : {}),
    ...(options.topic_id !== undefined ? { topic_id: options.topic_id } : {}),
    ...(options.message_group_id !== undefined ? { message_group_id: options.message_group_id } : {}),
  };
  if (transport.scan) await transport.scan(plaintext, { conversation_id: conversationId, ...meta });
  // One reference for the message's status from the queue on (the realtime transport sends it as the frame's client_ref).
  const ref = randomId();
  const tracker = statuses();
  const target = { conversation_id: conversationId };
  tracker.pending(ref, target);
  let receipt;
  let prepared: Prepared;
  try {
    prepared = await core.exclusive(() => prepare(core, host, conversationId, plaintext, { ...meta, client_ref: ref }));
    receipt = await dispatch(queue, conversationId, transport, prepared);
  } catch (err) {
    tracker.failed(ref, describe(err));
    throw err;
  }
  tracker.sent(ref, target, { message_id: receipt.message_id, ...(receipt.cursor !== undefined ? { cursor: receipt.cursor } : {}), ...(receipt.timestamp !== undefined ? { timestamp: receipt.timestamp } : {}) });
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
