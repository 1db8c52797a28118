/**
 * Shared wire schemas, from the contract (`@parley/protocol` common.ts), under the names the
 * route files not yet moved into the contract use. New code imports `@parley/protocol` directly.
 */
export {
  Base64,
  DeviceStatus,
  IdParams,
  KeyHex,
  MessageFields,
  MessageType,
  Nullable,
  PageQueryFields as PageQuery,
  Priority,
  refuseUnknownKeys,
  SignatureHex,
  StoredMessage as MessageOut,
  MessagePage as MessageList,
  Timestamp,
  Uuid,
} from '@parley/protocol';
