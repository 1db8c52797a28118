/**
 * Session set-up and encryption of a {@link SecureMessenger} (`messenger.ts`; contract §1.3): the
 * conversation a message goes to, the protocol of a new session — MLS (RFC 9420) when this device
 * has it and the peer's KeyPackage can be claimed (checked to be signed by the peer's registered
 * identity key), else X3DH + Double Ratchet on the peer's verified signed prekey (X3DH rev. 1
 * §3.3) and PQ prekey (PQXDH rev. 3 §3.3) — and encryption in a session with the metadata sealed
 * in front (`metadata.ts`). Refused downgrades are reported (`pq_downgrade`, `prekey_refused`).
 * Called under the messenger's lock; nothing here saves the state.
 */
import type { CiphersuiteName } from 'ts-mls';
import { ParleyApiError } from '../client/errors.js';
import type { WireMessage } from '../crypto/frame.js';
import type { SignedPqPrekey } from '../crypto/pq-prekey.js';
import { CryptoError, equalBytes, hexToBytes, KEY_BYTES } from '../crypto/primitives.js';
import { RatchetSession, type PeerDevice } from '../crypto/session.js';
import { base64ToBytes } from '../mls/base64.js';
import { chooseCiphersuite, ciphersuiteId, MLS_HYBRID_CIPHERSUITE } from '../mls/ciphersuites.js';
import { inspectKeyPackage } from '../mls/key-packages.js';
import { selectProtocol, type SessionProtocol } from '../mls/protocol.js';
import { encodeMlsEnvelope } from '../mls/wire.js';
import { LiveConversation, mlsSessionId, ratchetSessionId, type LiveSession } from './conversation.js';
import { checkPeer, describe, groupPrefix, now, randomId, type MessengerHost } from './messenger-host.js';
import { sealMeta, type AuthenticatedMeta } from './metadata.js';
import { verifyPeerDevice, verifyPeerSession } from './key-transparency.js';
import { claimPeerPqPrekey } from './post-quantum.js';
import { claimPeerPrekeys, speaksPrekeys, type PeerPrekeys } from './prekeys.js';
import { SecureMessengerError, type SessionInitiator } from './types.js';

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
   * The session's keys come from a hybrid post-quantum agreement: PQXDH for X3DH +
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

/** A known conversation, or one whose peer `resolvePeer` answers (saved with the next write). */
export async function conversationFor(host: MessengerHost, conversationId: string): Promise<LiveConversation> {
  const known = host.conversations().get(conversationId);
  if (known) return known;
  let peer: PeerDevice | undefined;
  try {
    peer = host.options.resolvePeer ? await host.options.resolvePeer(conversationId) : undefined;
  } catch (err) {
    throw new SecureMessengerError('unknown_conversation', `could not resolve the peer of conversation ${conversationId}: ${describe(err)}`, { conversationId, cause: err });
  }
  if (!peer) throw new SecureMessengerError('unknown_conversation', `unknown conversation ${conversationId}: addConversation() first`, { conversationId });
  const conv = new LiveConversation(conversationId, checkPeer(peer));
  host.conversations().set(conversationId, conv);
  return conv;
}

/**
 * Encrypt one plaintext, with its metadata sealed in front (`metadata.ts`), in a session
 * (advances its ratchet or MLS epoch state; not saved here).
 */
export async function encryptIn(host: MessengerHost, session: LiveSession, plaintext: Uint8Array, meta: AuthenticatedMeta): Promise<WireMessage> {
  const sealed = sealMeta(meta, plaintext);
  if (session.protocol !== 'mls') return session.ratchet!.encrypt(sealed);
  const groupId = session.groupId!;
  const epoch = host.mls()!.epoch(groupId);
  const bytes = await host.mls()!.encrypt(groupId, sealed);
  return encodeMlsEnvelope({ groupId, kind: 'application', epoch, message: bytes });
}

/** Choose the protocol (contract §1.3; MLS only when `allowMls`) and start a session this device initiates. */
export async function startSession(host: MessengerHost, conv: LiveConversation, allowMls: boolean): Promise<LiveSession> {
  const keyPackage = allowMls ? await claimPeerKeyPackage(host, conv) : undefined;
  const protocol = selectProtocol(host.mlsAvailable(), keyPackage !== undefined);
  let session: LiveSession | undefined;
  if (protocol === 'mls') {
    // design §8.39: the peer's keys (the KeyPackage's credential key among them) are the directory's before any session.
    await verifyPeerDevice(host, conv);
    const groupId = `${groupPrefix(conv.id)}${randomId()}`;
    try {
      // X-Wing when the claimed KeyPackage is one (the claim prefers it when both ends run it).
      const ciphersuite = chooseCiphersuite(host.mls()!.ciphersuites, [[(await inspectKeyPackage(keyPackage!)).cipherSuite]]);
      await host.mls()!.createGroup(groupId, { ciphersuite });
      const added = await host.mls()!.addMembers(groupId, [keyPackage!]);
      const welcome = encodeMlsEnvelope({ groupId, kind: 'welcome', epoch: added.epoch, message: added.welcome });
      session = { id: mlsSessionId(groupId), protocol: 'mls', initiator: 'local', established: false, createdAt: now(), groupId, opening: welcome };
    } catch (err) {
      if (host.mls()!.hasGroup(groupId)) await host.mls()!.deleteGroup(groupId);
      host.report(new SecureMessengerError('session_rejected', `could not start an MLS group with ${conv.peer.device_id} (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
    }
  }
  if (!session) {
    let pq: Awaited<ReturnType<typeof peerPqPrekey>>;
    let prekeys: PeerPrekeys | undefined;
    // The claims' refusals are reported once the peer's keys are known good: a prekey refused for
    // its signature may be the sign of a forged identity key, which is then the one error reported.
    const deferred: SecureMessengerError[] = [];
    const claiming: MessengerHost = { ...host, report: (e) => void deferred.push(e) };
    try {
      pq = await peerPqPrekey(claiming, conv);
      prekeys = await peerPrekeys(claiming, conv);
    } catch (err) {
      await verifyPeerDevice(host, conv);
      for (const e of deferred) host.report(e);
      throw err;
    }
    for (const e of deferred) host.report(e);
    // design §8.39: the peer's keys and every prekey the session is built on are the directory's, in one lookup.
    await verifyPeerSession(host, conv, [...(pq?.served ?? []), ...(prekeys?.served ?? [])]);
    const ratchet = RatchetSession.initiate(host.identity, conv.peer, { ...(pq ? { pqPrekey: pq.pqPrekey } : {}), ...(prekeys ? { prekeys } : {}), conversationId: conv.sessionContext });
    session = { id: ratchetSessionId(ratchet), protocol: 'x3dh-dr', initiator: 'local', established: false, createdAt: now(), ratchet };
  }
  conv.addLocal(session);
  host.sessionEvents.push({ conversation_id: conv.id, session_id: session.id, protocol: session.protocol, initiator: 'local', primary: true });
  return session;
}

/**
 * PQXDH (rev. 3 §3.3): the peer's claimed and verified PQ prekey (with its key directory label and
 * value as served, `served`, for the session's key-transparency check); none
 * (classical X3DH) without a client or when the peer published none, unless post-quantum is
 * required.
 * @throws SecureMessengerError `pq_downgrade` (also emitted): the served prekey fails its check or
 *   the claim failed (PQXDH aborts), or no prekey while post-quantum is required.
 */
async function peerPqPrekey(host: MessengerHost, conv: LiveConversation): Promise<{ pqPrekey: SignedPqPrekey; served: [string, Uint8Array][] } | undefined> {
  const client = host.options.client;
  const claim = client ? await claimPeerPqPrekey(client, host.deviceId, conv.peer) : {};
  if (claim.prekey) return { pqPrekey: claim.prekey, served: [[claim.label!, claim.value!]] };
  const ids = { conversationId: conv.id, cause: claim.problem };
  if (claim.forged) throw downgrade(host, `refused the PQ prekey the service served for ${conv.peer.device_id} (${describe(claim.problem)}): a downgrade attempt; no session started`, ids);
  if (claim.problem) throw downgrade(host, `claiming the PQ prekey of ${conv.peer.device_id} failed (${describe(claim.problem)}); no session started rather than a classical one`, ids);
  if (await host.requiresPostQuantum()) throw downgrade(host, `${conv.peer.device_id} has no PQ prekey and post-quantum is required: no classical X3DH session`, { conversationId: conv.id });
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
async function peerPrekeys(host: MessengerHost, conv: LiveConversation): Promise<PeerPrekeys | undefined> {
  const client = host.options.client;
  const peerId = conv.peer.device_id;
  let bundle: PeerPrekeys | undefined;
  try {
    bundle = client && speaksPrekeys(client) ? await claimPeerPrekeys(client, host.deviceId, conv.peer) : undefined;
  } catch (err) {
    const why = err instanceof CryptoError && err.code === 'bad_signature' ? 'refused the signed prekey the service served' : 'claiming the prekeys failed';
    throw prekeyRefused(host, `${why} for ${peerId} (${describe(err)}); no session started`, { conversationId: conv.id, cause: err });
  }
  if (bundle) {
    conv.peerSignedPrekeys = true;
    return bundle;
  }
  if (servedSignedPrekeys(host, peerId)) {
    throw prekeyRefused(host, `${peerId} served a signed prekey before and none now: a downgrade to its unsigned ephemeral key; no session started`, { conversationId: conv.id });
  }
  if (host.options.requireSignedPrekeys === true) {
    throw prekeyRefused(host, `${peerId} has no signed prekey and signed prekeys are required: no session on its unsigned ephemeral key`, { conversationId: conv.id });
  }
  return undefined;
}

/** Whether `peerDeviceId` served a signed prekey to this device before, in any conversation. */
function servedSignedPrekeys(host: MessengerHost, peerDeviceId: string): boolean {
  for (const c of host.conversations().values()) if (c.peer.device_id === peerDeviceId && c.peerSignedPrekeys) return true;
  return false;
}

/** Report a refused prekey bundle or legacy path (`prekey_refused`) and answer the error to throw. */
function prekeyRefused(host: MessengerHost, message: string, extra: { conversationId?: string; cause?: unknown }): SecureMessengerError {
  const e = new SecureMessengerError('prekey_refused', message, extra);
  host.report(e);
  return e;
}

/** The MLS suites this device offers and claims: the hybrid one only when post-quantum is required. */
export async function offeredSuites(host: MessengerHost): Promise<readonly CiphersuiteName[]> {
  const suites = host.mls()?.ciphersuites ?? [];
  return (await host.requiresPostQuantum()) ? suites.filter((s) => s === MLS_HYBRID_CIPHERSUITE) : suites;
}

/** Claim one KeyPackage of the peer when MLS is on; undefined when it has none (or it is unusable). */
async function claimPeerKeyPackage(host: MessengerHost, conv: LiveConversation): Promise<Uint8Array | undefined> {
  const client = host.options.client;
  if (!host.mlsAvailable() || !client) return undefined;
  let bytes: Uint8Array;
  try {
    const cipher_suites = (await offeredSuites(host)).map(ciphersuiteId); // hybrid first when this device runs it
    if (cipher_suites.length === 0) return undefined;
    const claimed = await client.claimKeyPackage({ device_id: conv.peer.device_id, cipher_suites }, { deviceId: host.deviceId });
    bytes = base64ToBytes(claimed.key_package);
  } catch (err) {
    if (!(err instanceof ParleyApiError && err.status === 404)) {
      host.report(new SecureMessengerError('session_rejected', `claiming an MLS KeyPackage of ${conv.peer.device_id} failed (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
    }
    return undefined;
  }
  try {
    const info = await inspectKeyPackage(bytes);
    if (info.deviceId !== conv.peer.device_id) throw new Error(`it names device ${info.deviceId}`);
    if (!equalBytes(info.signaturePublicKey, hexToBytes(conv.peer.identity_public_key, KEY_BYTES))) throw new Error('it is not signed with the peer identity key');
    if (info.cipherSuite !== MLS_HYBRID_CIPHERSUITE && (await host.requiresPostQuantum())) {
      downgrade(host, `refused the claimed MLS KeyPackage of ${conv.peer.device_id}: ciphersuite ${info.cipherSuite} is not hybrid and post-quantum is required`, { conversationId: conv.id });
      return undefined;
    }
    return bytes;
  } catch (err) {
    host.report(new SecureMessengerError('session_rejected', `the claimed MLS KeyPackage of ${conv.peer.device_id} is unusable (${describe(err)}); using X3DH + Double Ratchet`, { conversationId: conv.id, cause: err }));
    return undefined;
  }
}

/** Report a refused post-quantum downgrade (`pq_downgrade`) and answer the error to throw. */
function downgrade(host: MessengerHost, message: string, extra: { conversationId?: string; cause?: unknown } = {}): SecureMessengerError {
  const e = new SecureMessengerError('pq_downgrade', message, extra);
  host.report(e);
  return e;
}

/** How session `s` was keyed (see `SecureMessenger.protection`); undefined for an MLS session whose group is gone. */
export function protectionOf(host: MessengerHost, s: LiveSession): ConversationProtection | undefined {
  const mls = host.mls();
  if (s.ratchet) return { scheme: s.ratchet.postQuantum ? 'pqxdh' : 'x3dh', post_quantum: s.ratchet.postQuantum };
  if (!mls?.hasGroup(s.groupId!)) return undefined;
  const ciphersuite = mls.groupCiphersuite(s.groupId!);
  const hybrid = ciphersuite === MLS_HYBRID_CIPHERSUITE;
  return { scheme: hybrid ? 'mls-hybrid' : 'mls-classical', post_quantum: hybrid, ciphersuite };
}
