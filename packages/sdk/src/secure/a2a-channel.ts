/**
 * The channel table of {@link SecureChannels} (`a2a.ts`; contract §2.11, §4.13): one record per
 * channel — role, peer, status, protocol asked for, handshake progress, history cursor — its saved
 * form (`parley-a2a-channels` v1 under `a2a-channels-<device_id>`), the records an approval or a
 * request answer create, and what a record tells: whether the channel is open and its public view.
 */
import type { A2aChannelApprovedEvent, A2aChannelStatus, RequestedA2aChannel } from '@parley/protocol';
import type { PeerDevice } from '../crypto/session.js';
import type { SessionProtocol } from '../mls/protocol.js';
import type { SecureChannelInfo, SecureChannelProtocol } from './a2a-types.js';

/** A channel as saved in the table. */
export interface ChannelRecord {
  channel_id: string;
  role: 'initiator' | 'responder';
  peer_hub_address: string;
  own_hub_address: string | null;
  peer: PeerDevice | null;
  status: A2aChannelStatus;
  requested: SecureChannelProtocol;
  conversation_id: string | null;
  capability: string | null;
  created_at: string;
  /** Our handshake was accepted by the service. */
  sent_kx: boolean;
  /** The peer's handshake was decrypted. */
  got_kx: boolean;
  /** Last history cursor handled. */
  cursor: string | null;
}

/** The saved channel table. */
interface SavedChannels {
  v: 1;
  format: 'parley-a2a-channels';
  device_id: string;
  channels: Record<string, ChannelRecord>;
}

/** Statuses of a channel not closed for good. */
export const OPEN_STATUSES: readonly A2aChannelStatus[] = ['pending', 'approved', 'active'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A messenger session protocol as a channel protocol. */
export function channelProtocol(protocol: SessionProtocol): SecureChannelProtocol {
  return protocol === 'mls' ? 'mls' : 'ratchet';
}

/** `did:hub:<address>` or `<address>` → the address, lower case. */
export function normalizeHubAddress(peer: string): string {
  const p = peer.trim();
  return (p.toLowerCase().startsWith('did:hub:') ? p.slice('did:hub:'.length) : p).toLowerCase();
}

/**
 * The records of a saved channel table (`text` as {@link channelTableText} wrote it).
 * @throws Error when it is not a v1 table, or belongs to another device than `deviceId`.
 */
export function parseChannelTable(text: string, deviceId: string): Map<string, ChannelRecord> {
  const saved = JSON.parse(text) as SavedChannels;
  if (saved?.format !== 'parley-a2a-channels' || saved.v !== 1 || !isObject(saved.channels)) throw new Error('not a Parley A2A channel table (v1)');
  if (saved.device_id !== deviceId) throw new Error(`the saved A2A channel table belongs to device ${String(saved.device_id)}`);
  return new Map(Object.entries(saved.channels));
}

/** The saved form of a device's channel table. */
export function channelTableText(deviceId: string, channels: ReadonlyMap<string, ChannelRecord>): string {
  const doc: SavedChannels = { v: 1, format: 'parley-a2a-channels', device_id: deviceId, channels: Object.fromEntries(channels) };
  return JSON.stringify(doc);
}

/** The record of a channel this device requested, from the service's answer (`POST /a2a/channels/request`). */
export function requestedRecord(answer: RequestedA2aChannel, protocol: SecureChannelProtocol): ChannelRecord {
  return {
    channel_id: answer.channel_id,
    role: 'initiator',
    peer_hub_address: answer.responderHubAddress,
    own_hub_address: answer.initiatorHubAddress,
    peer: null,
    status: answer.status,
    requested: protocol,
    conversation_id: answer.conversationId,
    capability: answer.capability,
    created_at: answer.createdAt,
    sent_kx: false,
    got_kx: false,
    cursor: null,
  };
}

/** The record of a channel first known from its `a2a_channel_approved` event (its peer set by the caller). */
export function approvedRecord(e: A2aChannelApprovedEvent, requested: SecureChannelProtocol): ChannelRecord {
  return {
    channel_id: e.channel_id,
    role: e.role,
    peer_hub_address: e.peer_hub_address,
    own_hub_address: null,
    peer: null,
    status: 'approved',
    requested,
    conversation_id: null,
    capability: null,
    created_at: new Date().toISOString(),
    sent_kx: false,
    got_kx: false,
    cursor: null,
  };
}

/** Why a channel cannot carry messages yet (undefined when it is open). */
export function channelNotOpenReason(r: ChannelRecord): string | undefined {
  const id = r.channel_id;
  switch (r.status) {
    case 'pending':
      return `channel ${id} is pending: the responder's owner must approve it`;
    case 'approved':
      return `channel ${id} is approved; the end-to-end key exchange is not complete yet (both agents must be online)`;
    case 'rejected':
      return `channel ${id} was rejected by the responder's owner`;
    case 'revoked':
      return `channel ${id} was revoked`;
    case 'active':
      if (!r.peer) return `channel ${id} is active but this device has no peer keys yet (its approval was missed; they are read again at the next connection)`;
      // Active means both handshakes reached the service; ours is established once we read the peer's.
      if (!r.got_kx) return `channel ${id} is active but the end-to-end key exchange is not complete on this device yet`;
      return undefined;
  }
}

/** The public view of a channel; `sessionProtocol`: the protocol of its sending session, once it has one. */
export function channelInfo(r: ChannelRecord, sessionProtocol: SecureChannelProtocol | undefined): SecureChannelInfo {
  const open = channelNotOpenReason(r) === undefined;
  return {
    channel_id: r.channel_id,
    role: r.role,
    peer_hub_address: r.peer_hub_address,
    own_hub_address: r.own_hub_address,
    peer_device_id: r.peer?.device_id ?? null,
    status: r.status,
    protocol: sessionProtocol ?? r.requested,
    open,
    conversation_id: r.conversation_id,
    capability: r.capability,
    created_at: r.created_at,
  };
}
