/**
 * Secure messaging (contract §1.2–1.3, §2.4, §4.5, §6.1): `SecureMessenger` keeps one end-to-end
 * session per conversation (MLS when both ends support it, else X3DH + Double Ratchet), decrypts
 * strictly in order and saves state before anything depends on it; `RoomMessenger` adds rooms
 * (design §8.5) with one pairwise session per room conversation, and the rental rooms of
 * marketplace rentals (contract §4.16, `rental-rooms.ts`); `SecureChannels` adds
 * end-to-end encrypted A2A channels (contract §2.11, §4.13).
 */
export { SecureMessenger, DEVICE_RECENT, type SessionInfo, type ConversationProtection, type ProtectionScheme } from './messenger.js';
export { realtimeTransport, restTransport, ownerPeerResolver } from './transport.js';
export {
  RoomMessenger,
  realtimeRoomTransport,
  restRoomTransport,
  tenantRoomSource,
  type RoomInfo,
  type RoomListener,
  type RoomMessengerEvents,
  type RoomMessengerOptions,
  type RoomSendReceipt,
  type RoomSource,
  type RoomTimelineView,
  type RoomTransport,
  type RoomTransportResult,
} from './rooms.js';
export { openRentalRooms, realtimeRentalTransport, rentalConversationId, rentalRoomInfo, rentalRoomSource, restRentalTransport, RENTAL_MESSAGE } from './rental-rooms.js';
export {
  SecureChannels,
  normalizeHubAddress,
  frameTap,
  FrameLink,
  type FrameTap,
  type SecureChannelProtocol,
  type SecureChannelInfo,
  type SecureChannelMessage,
  type SecureChannelSendResult,
  type SecureChannelsEvents,
  type SecureChannelsOptions,
} from './a2a.js';
export { messageTypeFor, defaultDecisionOption, decisionAnswer, readDecisionAnswer, type DecisionAnswer } from './decisions.js';
export { MAX_SESSIONS } from './conversation.js';
export {
  SecureMessengerError,
  type ReceivedMessage,
  type SealedWire,
  type SecureErrorCode,
  type SecureMessage,
  type SecureMessengerEvents,
  type SecureMessengerOptions,
  type SharedPrekeys,
  type SecureMlsOptions,
  type SecureTransport,
  type SendOptions,
  type SentMessage,
  type SessionEvent,
  type SessionInitiator,
  type TransportReceipt,
} from './types.js';
