/**
 * The public types of {@link SecureChannels} (`a2a.ts`): channel protocols, a channel as this device
 * knows it, decrypted channel messages, send results, events and options (contract §2.11, §4.13).
 */
import type { A2aChannelStatus, A2aSendResult } from '@parley/protocol';
import type { ParleyClient } from '../client/rest.js';
import type { SessionStore } from '../storage.js';
import type { SecureMessenger } from './messenger.js';
import type { SecureMessage } from './types.js';

/** Protocols a channel may be asked for and may end up with (see the file comment). */
export type SecureChannelProtocol = 'mls' | 'ratchet';

/** A channel as this device knows it. */
export interface SecureChannelInfo {
  channel_id: string;
  role: 'initiator' | 'responder';
  peer_hub_address: string;
  /** Our own hub address in this channel, when known. */
  own_hub_address: string | null;
  peer_device_id: string | null;
  status: A2aChannelStatus;
  /** Asked for, then the protocol of the channel's session once it has one (`mls` or `ratchet`). */
  protocol: SecureChannelProtocol;
  /** Active, with this side's established session. */
  open: boolean;
  conversation_id: string | null;
  capability: string | null;
  created_at: string;
}

/** A decrypted channel message (the messenger's {@link SecureMessage} plus channel fields). */
export interface SecureChannelMessage extends SecureMessage {
  channel_id: string;
  peer_hub_address: string;
  traceparent: string | null;
}

/** What {@link SecureChannels.send} resolves with. */
export interface SecureChannelSendResult extends A2aSendResult {
  /** The protocol the message was sealed in. */
  protocol: SecureChannelProtocol;
}

/** Events of {@link SecureChannels}. */
export interface SecureChannelsEvents {
  /** A decrypted message of a channel (handshakes are not delivered). Awaited in order. */
  message: (message: SecureChannelMessage) => void | Promise<void>;
  /** A channel was added or changed (status, open). */
  channel: (channel: SecureChannelInfo) => void;
  /** A problem not tied to a call. */
  error: (error: Error) => void;
}

/** Options of {@link SecureChannels.open}. */
export interface SecureChannelsOptions {
  /** The messenger holding the channels' sessions (dedicated; see the file comment). */
  messenger: SecureMessenger;
  /** Where the channel table is saved (`a2a-channels-<device_id>`). */
  store: SessionStore;
  /** REST client acting as the agent: an API key, or a device JWT. */
  client: ParleyClient;
  /**
   * `device`: an enrolled device; channel requests and lists are sent with its device JWT
   * (`client.currentDeviceToken()`). Default `api_key`.
   */
  auth?: 'api_key' | 'device';
}
