/** MLS (RFC 9420) for Parley: the primary end-to-end protocol for new sessions (contract §1.3). */
export { MlsClient, MLS_CIPHERSUITE } from './client.js';
export { inspectKeyPackage } from './key-packages.js';
export {
  DEFAULT_KEY_PACKAGE_LIFETIME_SECONDS,
  type Ed25519KeyPair,
  type KeyPackageInfo,
  type MlsAddMembersResult,
  type MlsClientCommonOptions,
  type MlsClientOptions,
  type MlsCommitOptions,
  type MlsCommitResult,
  type MlsJoinResult,
  type MlsMember,
  type MlsProcessResult,
  type MlsRemoveMembersResult,
  type MlsRosterMember,
} from './client-types.js';
/**
 * Ciphersuites (design §8.34): the classical `MLS_CIPHERSUITE` (suite 3) and the hybrid
 * post-quantum `MLS_HYBRID_CIPHERSUITE` (X-Wing, suite 84); `chooseCiphersuite(local, members)`
 * picks the hybrid one when everyone offers it; `ciphersuiteId` / `ciphersuiteOfId` map to the
 * service's `cipher_suite` labels.
 */
export {
  MLS_HYBRID_CIPHERSUITE,
  MLS_SUPPORTED_CIPHERSUITES,
  chooseCiphersuite,
  ciphersuiteId,
  ciphersuiteOfId,
} from './ciphersuites.js';
/** ts-mls crypto provider MlsClient uses by default: ts-mls's own, with Ed25519 on the SDK's native provider on Node. */
export { parleyMlsCryptoProvider } from './crypto-provider.js';
export { MlsClientError, type MlsErrorCode } from './errors.js';
export { selectProtocol, type SessionProtocol } from './protocol.js';
export {
  decodeMlsEnvelope,
  decodeMlsHeader,
  encodeMlsEnvelope,
  encodeMlsHeader,
  inspectMlsMessage,
  isMlsHeaderBlob,
  type MlsEnvelopeHeader,
  type MlsEnvelopeInput,
  type MlsMessageInfo,
  type MlsWireFields,
  type MlsWireKind,
} from './wire.js';
