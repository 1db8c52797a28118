/**
 * Signing an Agent Card as A2A 1.0 specifies for signed cards: a JWS with the protected header
 * `{"alg":"EdDSA","kid":<DID URL>,"typ":"JOSE"}` over the RFC 8785 canonical card without
 * `signatures` (detached payload; `@parley/protocol` `agentCardSigningInput`), Ed25519 (RFC 8032)
 * by the identity's key. The signer only needs a `sign` function, so the key stays where it is.
 */
import canonicalize from 'canonicalize';
import { agentCardProtectedHeader, agentCardSigningInput, base64UrlEncode, OWNER_KEY_FRAGMENT } from '@parley/protocol';
import type { AgentCardJson } from './build.js';

/** A key that signs cards: its DID URL (`did:hub:<address>#owner-key`) and Ed25519 signing. */
export interface AgentCardSigner {
  kid: string;
  /** Ed25519 signature (64 bytes) of `message`. */
  sign(message: Uint8Array): Uint8Array;
}

/** `did:hub:<address>#owner-key`: the DID URL of a hub identity's owner key (its registration key). */
export const ownerKeyId = (hubAddress: string): string => `did:hub:${hubAddress}#${OWNER_KEY_FRAGMENT}`;

/** JCS as the protocol's card functions take it. */
export const jcs = (value: unknown): string | undefined => canonicalize(value);

/**
 * The card with one signature by `signer` (earlier signatures are replaced).
 * @throws TypeError when the card is not representable as canonical JSON.
 */
export function signAgentCard<C extends AgentCardJson>(card: C, signer: AgentCardSigner): C {
  const { signatures: _old, ...unsigned } = card;
  const protectedHeader = agentCardProtectedHeader(signer.kid);
  const input = agentCardSigningInput(unsigned, protectedHeader, jcs);
  if (!input) throw new TypeError('the card is not representable as RFC 8785 canonical JSON');
  return { ...unsigned, signatures: [{ protected: protectedHeader, signature: base64UrlEncode(signer.sign(input)) }] } as C;
}
