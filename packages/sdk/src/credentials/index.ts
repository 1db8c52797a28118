/**
 * Verifiable credentials support (contract §2.10, §4.11; design §8.16): the bundled JSON-LD contexts
 * (the standard ones and the service's trust context) and an offline document loader that
 * resolves `did:hub` DIDs through the SDK's `did-resolver` driver and fetches nothing else.
 */
export {
  CREDENTIALS_V1_URL,
  CREDENTIALS_V2_URL,
  DID_V1_URL,
  ED25519_2020_URL,
  STANDARD_CONTEXTS,
  TRUST_CONTEXT_PATH,
  trustContext,
  trustContextUrl,
  type JsonLdContextDocument,
} from './contexts.js';
export {
  createDocumentLoader,
  DocumentLoaderError,
  type DocumentLoader,
  type DocumentLoaderErrorCode,
  type DocumentLoaderOptions,
  type RemoteDocument,
} from './document-loader.js';
