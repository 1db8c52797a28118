/**
 * One conversation of a `SecureMessenger` in memory: its peer, its end-to-end sessions and the
 * rule that picks the session new messages are encrypted in (contract §1.3).
 *
 * A conversation normally has one session. Two appear when both devices start one at the same
 * time (each sent before reading the other's first message): both sides then keep reading both,
 * and both send in the one started by the device with the smaller device id, so they converge
 * without another round trip. A session the peer starts while ours is already answered (or was
 * started by the peer) replaces it for sending: the peer lost its state or re-keyed. Older
 * sessions stay readable (for messages still in flight) up to {@link MAX_SESSIONS}.
 *
 * Its X3DH + Double Ratchet sessions are bound to {@link LiveConversation.sessionContext} (the
 * conversation id unless both devices name the conversation differently, as in rental rooms).
 * Sessions saved before conversation binding cannot be restored: they are dropped on load, and the
 * next message starts a new session.
 */
import { isUnboundRatchetState } from '../crypto/double-ratchet.js';
import type { WireMessage } from '../crypto/frame.js';
import { RatchetSession, type PeerDevice } from '../crypto/session.js';
import type { DeviceIdentity } from '../crypto/keys.js';
import type { SessionProtocol } from '../mls/protocol.js';
import type { ConversationRecord, HandledRef, SessionRecord } from './state.js';
import type { SessionInitiator } from './types.js';

/** Most sessions kept per conversation (the sending one plus readable older ones). */
export const MAX_SESSIONS = 4;
/** Handled message refs kept per conversation (de-duplication and resume window). */
export const CONVERSATION_RECENT = 64;
/**
 * X3DH initial messages remembered per conversation; a replayed one never re-creates a session
 * (the messenger looks for it in every conversation with the same peer device).
 */
export const MAX_SEEN_X3DH = 64;

/** A session in memory. */
export interface LiveSession {
  id: string;
  protocol: SessionProtocol;
  initiator: SessionInitiator;
  established: boolean;
  createdAt: string;
  /** X3DH + Double Ratchet sessions. */
  ratchet?: RatchetSession;
  /** MLS sessions. */
  groupId?: string;
  /** MLS sessions this device started: the Welcome, until the service stored it. */
  opening?: WireMessage;
  /** The Welcome is being sent (memory only). */
  openingInFlight?: boolean;
}

/** Session id of an X3DH + Double Ratchet session: `dr:` + EK_A (hex), the same on both sides. */
export function ratchetSessionId(session: RatchetSession): string {
  return `dr:${session.toJSON().x3dh_ephemeral_key}`;
}

/** Session id of an MLS session: `mls:` + the group id. */
export function mlsSessionId(groupId: string): string {
  return `mls:${groupId}`;
}

/** A conversation in memory (see the file comment). */
export class LiveConversation {
  sessions: LiveSession[] = [];
  primary: string | undefined;
  recent: HandledRef[] = [];
  seenX3dh: string[] = [];
  /** The peer device served a signed prekey once (`ConversationRecord.peer_signed_prekeys`). */
  peerSignedPrekeys = false;

  /**
   * @param id the messenger's conversation id.
   * @param peer the peer device.
   * @param sessionContext the conversation id X3DH + Double Ratchet sessions are bound to, the same
   *   on both devices (default `id`).
   */
  constructor(
    readonly id: string,
    public peer: PeerDevice,
    readonly sessionContext: string = id,
  ) {}

  /**
   * Restore from a saved record; ratchet sessions saved before conversation binding are dropped.
   * @throws CryptoError `invalid_state` for a corrupt ratchet state.
   */
  static fromRecord(id: string, record: ConversationRecord, identity: DeviceIdentity): LiveConversation {
    const c = new LiveConversation(id, record.peer, record.session_context ?? id);
    const kept = record.sessions.filter((s) => !isUnboundRatchetState(s.ratchet));
    c.primary = kept.some((s) => s.id === record.primary) ? record.primary : undefined;
    c.recent = [...record.recent];
    c.seenX3dh = [...record.seen_x3dh];
    c.peerSignedPrekeys = record.peer_signed_prekeys === true;
    c.sessions = kept.map((s) => ({
      id: s.id,
      protocol: s.protocol,
      initiator: s.initiator,
      established: s.established,
      createdAt: s.created_at,
      ...(s.ratchet ? { ratchet: RatchetSession.fromJSON(s.ratchet, identity) } : {}),
      ...(s.group_id !== undefined ? { groupId: s.group_id } : {}),
      ...(s.opening !== undefined ? { opening: s.opening } : {}),
    }));
    return c;
  }

  /** The saved form. */
  toRecord(): ConversationRecord {
    const sessions: SessionRecord[] = this.sessions.map((s) => ({
      id: s.id,
      protocol: s.protocol,
      initiator: s.initiator,
      established: s.established,
      created_at: s.createdAt,
      ...(s.ratchet ? { ratchet: s.ratchet.toJSON() } : {}),
      ...(s.groupId !== undefined ? { group_id: s.groupId } : {}),
      ...(s.opening !== undefined ? { opening: s.opening } : {}),
    }));
    return {
      peer: { ...this.peer },
      ...(this.sessionContext !== this.id ? { session_context: this.sessionContext } : {}),
      ...(this.primary !== undefined ? { primary: this.primary } : {}),
      sessions,
      recent: [...this.recent],
      seen_x3dh: [...this.seenX3dh],
      ...(this.peerSignedPrekeys ? { peer_signed_prekeys: true as const } : {}),
    };
  }

  /** The session new messages are encrypted in, if any. */
  primarySession(): LiveSession | undefined {
    return this.sessions.find((s) => s.id === this.primary);
  }

  /** A session by id. */
  session(id: string): LiveSession | undefined {
    return this.sessions.find((s) => s.id === id);
  }

  /** The X3DH + Double Ratchet sessions, the sending one first, then newest first. */
  ratchetCandidates(): LiveSession[] {
    const dr = this.sessions.filter((s) => s.ratchet !== undefined);
    return dr.sort((a, b) => (a.id === this.primary ? -1 : b.id === this.primary ? 1 : b.createdAt.localeCompare(a.createdAt)));
  }

  /** Whether `messageId` was handled in this conversation recently. */
  handled(messageId: string): boolean {
    return this.recent.some((r) => r.id === messageId);
  }

  /** Record a handled message (bounded window). */
  remember(ref: HandledRef): void {
    this.recent.push(ref);
    if (this.recent.length > CONVERSATION_RECENT) this.recent.splice(0, this.recent.length - CONVERSATION_RECENT);
  }

  /** Remember an accepted X3DH initial message (EK_A hex). */
  rememberX3dh(ephemeralKey: string): void {
    this.seenX3dh.push(ephemeralKey);
    if (this.seenX3dh.length > MAX_SEEN_X3DH) this.seenX3dh.splice(0, this.seenX3dh.length - MAX_SEEN_X3DH);
  }

  /** Add a session this device started; it becomes the sending session. */
  addLocal(session: LiveSession): void {
    this.sessions.push(session);
    this.primary = session.id;
  }

  /**
   * Add a session the peer started and decide which one sends (see the file comment).
   * @returns the sessions dropped (MLS groups to forget), and whether the new one sends.
   */
  addPeer(session: LiveSession, localDeviceId: string): { dropped: LiveSession[]; primary: boolean } {
    this.sessions.push(session);
    const current = this.primarySession();
    const dropped: LiveSession[] = [];
    let primary = true;
    if (current && current.initiator === 'local' && !current.established) {
      // Both started at once: the session of the smaller device id wins on both sides.
      if (this.peer.device_id < localDeviceId) {
        this.sessions = this.sessions.filter((s) => s !== current);
        dropped.push(current);
      } else {
        primary = false;
      }
    }
    if (primary) this.primary = session.id;
    dropped.push(...this.prune());
    return { dropped, primary };
  }

  /** Remove a session (e.g. one whose start message could not be sent). */
  remove(id: string): LiveSession | undefined {
    const s = this.session(id);
    if (!s) return undefined;
    this.sessions = this.sessions.filter((x) => x !== s);
    if (this.primary === id) this.primary = undefined;
    return s;
  }

  /** Keep at most MAX_SESSIONS: drop the oldest that do not send. */
  private prune(): LiveSession[] {
    const dropped: LiveSession[] = [];
    while (this.sessions.length > MAX_SESSIONS) {
      const oldest = this.sessions.filter((s) => s.id !== this.primary).sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
      if (!oldest) break;
      this.sessions = this.sessions.filter((s) => s !== oldest);
      dropped.push(oldest);
    }
    return dropped;
  }
}
