/**
 * Reading received messages for a {@link SecureMessenger} (`messenger.ts`; contract §1.3, §2.4,
 * §4.5): X3DH + Double Ratchet — accepting a session from an X3DH initial message (refusing
 * replays, classical ones when post-quantum is required, unsigned ones when signed prekeys are
 * required; X3DH rev. 1 §3.4) or decrypting in a known one — and MLS (RFC 9420) — joining a 1:1
 * group from its Welcome, checked to hold exactly the conversation's two devices, or processing a
 * group message. Then the saved inbox entry of a decrypted message, the message handed to the
 * application, and the errors a refused message is reported with. Called under the messenger's
 * lock; nothing here saves the state.
 */
import { decodeContent, type Content } from '../content/types.js';
import { decodeFrame, type WireMessage } from '../crypto/frame.js';
import type { PrekeyStore } from '../crypto/prekeys.js';
import type { PeerDevice } from '../crypto/session.js';
import { CryptoError } from '../crypto/primitives.js';
import { RatchetSession } from '../crypto/session.js';
import { base64ToBytes, bytesToBase64 } from '../mls/base64.js';
import { MLS_HYBRID_CIPHERSUITE } from '../mls/ciphersuites.js';
import { MlsClientError } from '../mls/errors.js';
import type { SessionProtocol } from '../mls/protocol.js';
import { decodeMlsEnvelope, isMlsHeaderBlob } from '../mls/wire.js';
import { LiveConversation, mlsSessionId, ratchetSessionId, type LiveSession } from './conversation.js';
import type { MessengerCore } from './messenger-core.js';
import { checkPeer, describe, groupPrefix, now, type MessengerHost } from './messenger-host.js';
import { verifyPeerDevice } from './key-transparency.js';
import { deliveredMeta, metaMismatch, MetaEnvelopeError, openMeta, type AuthenticatedMeta, type MetaField } from './metadata.js';
import type { InboxEntry } from './state.js';
import { SecureMessengerError, type ReceivedMessage, type SecureMessage } from './types.js';

/**
 * X3DH + Double Ratchet: find or accept the session, decrypt.
 * @throws SecureMessengerError `session_rejected`, `pq_downgrade`, `prekey_refused`; CryptoError
 *   when no session decrypts it (the sessions are unchanged then).
 */
export async function readRatchet(host: MessengerHost, conv: LiveConversation, wire: WireMessage): Promise<Uint8Array> {
  const x3dh = decodeFrame(wire).header.x3dh;
  if (x3dh) {
    const existing = conv.session(`dr:${x3dh.ephemeral_key}`);
    if (existing?.ratchet) return decryptIn(existing, wire);
    if (seenInitialMessage(host, conv.peer.device_id, x3dh.ephemeral_key)) {
      throw new SecureMessengerError('session_rejected', 'a replayed X3DH initial message (a session from it was already accepted with this device)');
    }
    if (x3dh.pq === undefined && (await host.requiresPostQuantum())) {
      throw new SecureMessengerError('pq_downgrade', 'a classical X3DH initial message refused: post-quantum is required (PQXDH)');
    }
    if (x3dh.signed_prekey_id === undefined && host.options.requireSignedPrekeys === true) {
      throw new SecureMessengerError('prekey_refused', 'an X3DH initial message on the unsigned ephemeral key refused: signed prekeys are required');
    }
    await verifyPeerDevice(host, conv); // design §8.39: the sender's keys are the directory's
    let accepted;
    try {
      accepted = RatchetSession.respond(host.identity, wire, conv.peer.identity_public_key, {
        peerDeviceId: conv.peer.device_id,
        conversationId: conv.sessionContext,
        ...(responderPrekeys(host) ? { prekeys: responderPrekeys(host)! } : {}),
      });
    } catch (err) {
      throw new SecureMessengerError('session_rejected', `X3DH initial message refused: ${describe(err)}`, { cause: err });
    }
    // X3DH §3.4: the one-time prekey is deleted now, saved in the same write as the session (or,
    // held by another messenger of the device, deleted there once this session is saved).
    if (accepted.oneTimePrekeyId !== undefined) {
      const prekeys = host.prekeys();
      if (prekeys) {
        prekeys.consumeOneTime(accepted.oneTimePrekeyId);
        host.topUpSoon(); // publish more one-time prekeys when few are left
      } else host.sharedPrekeyUses.push(accepted.oneTimePrekeyId);
    }
    conv.rememberX3dh(x3dh.ephemeral_key);
    await adoptPeerSession(host, conv, {
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
      return decryptIn(s, wire);
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
function seenInitialMessage(host: MessengerHost, peerDeviceId: string, ephemeralKey: string): boolean {
  for (const c of host.conversations().values()) {
    if (c.peer.device_id === peerDeviceId && c.seenX3dh.includes(ephemeralKey)) return true;
  }
  return false;
}

/** Decrypt in an X3DH + Double Ratchet session, which is then established. */
function decryptIn(session: LiveSession, wire: WireMessage): Uint8Array {
  const plaintext = session.ratchet!.decrypt(wire);
  session.established = true;
  return plaintext;
}

/**
 * MLS: join from a Welcome, or process a group message. Returns undefined for control messages.
 * @throws SecureMessengerError `session_rejected`, `pq_downgrade`; MlsClientError.
 */
export async function readMls(host: MessengerHost, conv: LiveConversation, wire: WireMessage): Promise<Uint8Array | undefined> {
  const mls = host.mls();
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
    await verifyPeerDevice(host, conv); // design §8.39: the sender's keys are the directory's
    let joined;
    try {
      joined = await mls.joinFromWelcome(message);
    } catch (err) {
      throw new SecureMessengerError('session_rejected', `MLS Welcome refused: ${describe(err)}`, { cause: err });
    }
    const members = [...joined.members].sort();
    const expected = [conv.peer.device_id, host.deviceId].sort();
    if (!joined.groupId.startsWith(groupPrefix(conv.id)) || members.length !== 2 || members[0] !== expected[0] || members[1] !== expected[1]) {
      await mls.deleteGroup(joined.groupId);
      throw new SecureMessengerError('session_rejected', `MLS Welcome to group ${joined.groupId} with members ${members.join(', ')} does not fit this 1:1 conversation`);
    }
    const suite = mls.groupCiphersuite(joined.groupId);
    if (suite !== MLS_HYBRID_CIPHERSUITE && (await host.requiresPostQuantum())) {
      await mls.deleteGroup(joined.groupId);
      throw new SecureMessengerError('pq_downgrade', `MLS Welcome to a group of ciphersuite ${suite} refused: not hybrid, and post-quantum is required`);
    }
    await adoptPeerSession(host, conv, { id: mlsSessionId(joined.groupId), protocol: 'mls', initiator: 'peer', established: true, createdAt: now(), groupId: joined.groupId });
    host.topUpSoon();
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

/** Keep a session the peer started (its older sessions may be dropped, their MLS groups deleted). */
async function adoptPeerSession(host: MessengerHost, conv: LiveConversation, session: LiveSession): Promise<void> {
  const mls = host.mls();
  const { dropped, primary } = conv.addPeer(session, host.deviceId);
  for (const d of dropped) if (d.groupId !== undefined && mls?.hasGroup(d.groupId)) await mls.deleteGroup(d.groupId);
  host.sessionEvents.push({ conversation_id: conv.id, session_id: session.id, protocol: session.protocol, initiator: 'peer', primary });
}

/** The prekeys initial messages are answered with: this messenger's, else the shared ones. */
function responderPrekeys(host: MessengerHost): PrekeyStore | undefined {
  return host.prekeys() ?? host.options.prekeysFrom?.store();
}

/**
 * Decrypt and save one message (under the lock): de-duplicated by message id, its conversation
 * found or resolved (`resolvePeer`), checked to come from the conversation's peer, read in its
 * protocol, then saved with the new session state as a pending inbox entry. Returns the entry to
 * deliver, if any; a message that cannot be read is remembered as handled and reported.
 * @throws SecureMessengerError `persist_failed` (already reported).
 */
export async function processReceived(core: MessengerCore, host: MessengerHost, m: ReceivedMessage): Promise<InboxEntry | undefined> {
  if (core.failed) return undefined;
  let conv = core.conversations.get(m.conversation_id);
  if (core.recent.some((r) => r.id === m.message_id) || conv?.handled(m.message_id)) return undefined;
  const ref = { id: m.message_id, cursor: m.cursor };
  // Room envelopes carry room timeline cursors: they stay out of the device-wide resume window.
  const deviceWide = m.room_id === undefined && m.rental_id === undefined;
  if (m.sender_device_id === host.deviceId) {
    // Our own message (history, or another socket of ours): nothing to decrypt. Saved with the next write.
    core.remember(ref, conv, deviceWide);
    return undefined;
  }
  const fail = async (error: SecureMessengerError): Promise<undefined> => {
    core.remember(ref, conv, deviceWide);
    await core.persist();
    host.report(error);
    return undefined;
  };
  const ids = { conversationId: m.conversation_id, messageId: m.message_id };
  if (!conv) {
    let peer: PeerDevice | undefined;
    try {
      peer = host.options.resolvePeer ? await host.options.resolvePeer(m.conversation_id, m.sender_device_id) : undefined;
    } catch (err) {
      return fail(new SecureMessengerError('unknown_conversation', `could not resolve the peer of conversation ${m.conversation_id}: ${describe(err)}`, { ...ids, cause: err }));
    }
    if (!peer) return fail(new SecureMessengerError('unknown_conversation', `message ${m.message_id} is for unknown conversation ${m.conversation_id}; skipped`, ids));
    conv = new LiveConversation(m.conversation_id, checkPeer(peer));
    core.conversations.set(m.conversation_id, conv);
  }
  if (m.sender_device_id !== conv.peer.device_id) {
    return fail(new SecureMessengerError('wrong_sender', `message ${m.message_id} comes from ${m.sender_device_id}, not the conversation's peer ${conv.peer.device_id}; skipped`, ids));
  }
  const wire: WireMessage = { header_blob: m.header_blob, ciphertext: m.ciphertext };
  const protocol: SessionProtocol = isMlsHeaderBlob(m.header_blob) ? 'mls' : 'x3dh-dr';
  let plaintext: Uint8Array | undefined;
  try {
    plaintext = protocol === 'mls' ? await readMls(host, conv, wire) : await readRatchet(host, conv, wire);
  } catch (err) {
    return fail(receiveError(err, ids));
  }
  if (plaintext === undefined) {
    core.remember(ref, conv, deviceWide);
    await core.persist(); // a session-control message (Welcome, commit)
    return undefined;
  }
  let opened: ReturnType<typeof openMeta>;
  try {
    opened = openMeta(plaintext);
  } catch (err) {
    // The session state advanced (the message key is spent): saved by fail().
    return fail(receiveError(err, ids));
  }
  core.remember(ref, conv, deviceWide);
  const { entry, mismatch } = inboxEntry(m, opened, protocol);
  core.inbox.push(entry);
  await core.persist();
  if (mismatch) host.report(mismatch);
  return entry;
}

/**
 * The inbox entry of a decrypted message, with its metadata as delivered (the sealed values where
 * the service's differ, `metadata.ts`), and the `metadata_mismatch` error to report when they differ.
 */
export function inboxEntry(m: ReceivedMessage, opened: ReturnType<typeof openMeta>, protocol: SessionProtocol): { entry: InboxEntry; mismatch: SecureMessengerError | undefined } {
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
  return { entry, mismatch: mismatch.length > 0 ? metadataMismatchError(m, meta, mismatch) : undefined };
}

/**
 * The error a received message that could not be read is reported with: the messenger's own,
 * `unsupported_version` for a frame or plaintext of an older SDK (it must upgrade), else
 * `decrypt_failed`.
 */
export function receiveError(err: unknown, ids: { conversationId: string; messageId: string }): SecureMessengerError {
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

/** The message handed to the application for a saved inbox entry (its content decoded when it is a content envelope). */
export function toSecureMessage(entry: InboxEntry, redelivered: boolean): SecureMessage {
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
