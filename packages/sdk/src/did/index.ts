/**
 * `did:hub` support (contract §2.8, §4.10; design §8.15): the `did-resolver` method driver, DID
 * update signing, and the Ed25519 `publicKeyMultibase` encoding.
 */
export { getResolver, type DidFetch, type HubResolverOptions } from './resolver.js';
export {
  decodePublicKeyMultibase,
  ED25519_VERIFICATION_KEY_2020,
  publicKeyMultibase,
  signDidUpdate,
  type DidUpdateFields,
  type DidUpdateRequest,
} from './update.js';
