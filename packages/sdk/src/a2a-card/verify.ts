/**
 * Verifying an A2A Agent Card against `did:hub` (A2A 1.0 signed cards; W3C DID Core): resolve the
 * signer's DID, check the card's JWS against the document's assertion methods
 * (`@parley/protocol` `checkAgentCardSignatures`, the same check the service runs before it stores
 * a card), then the identity's status (suspended or deactivated is refused) and, when asked,
 * its trust tier. Any client can use it; {@link hubCardVerifierOptions} wires it to a Parley service.
 */
import {
  checkAgentCardSignatures,
  TRUST_TIERS,
  type AgentCardRefusal,
  type CardCrypto,
  type CardDidDocument,
  type TrustTier,
} from '@parley/protocol';
import { ParleyApiError } from '../client/errors.js';
import type { ParleyClient } from '../client/rest.js';
import { ed25519Verify } from '../crypto/primitives.js';
import { decodePublicKeyMultibase } from '../did/update.js';
import { jcs } from './sign.js';

/** The SDK's JCS, Ed25519 and multibase decoder, for the protocol's card check. */
export const sdkCardCrypto: CardCrypto = { canonicalize: jcs, verifyEd25519: ed25519Verify, decodePublicKeyMultibase };

/** What a DID resolver answers for {@link verifyAgentCard} (a W3C DID resolution result, or its document part). */
export interface CardDidResolution {
  didDocument: CardDidDocument | null;
  didDocumentMetadata?: { deactivated?: boolean };
}

/** Options of {@link verifyAgentCard}. */
export interface VerifyAgentCardOptions {
  /** The hub address the card must belong to (`did:hub:<expectedAddress>` signs it). */
  expectedAddress: string;
  /** Resolve a DID; null (or a null document) when it does not resolve. */
  resolveDid(did: string): Promise<CardDidResolution | null>;
  /**
   * The identity's status and trust tier (as `GET /api/v1/verify/agent/{hub_address}` answers
   * them), or null when unknown. When given, `suspended` and `not_found` are refused
   * (`identity_unavailable`); it is required for `minTier`.
   */
  identityStatus?(hubAddress: string): Promise<AgentStatus | null>;
  /** Refuse identities below this tier (`tier_too_low`). */
  minTier?: TrustTier;
}

/** An identity's status and tier: `status` is `verified`, `unverified`, `suspended` or `not_found`. */
export interface AgentStatus {
  status: string;
  trust_tier: TrustTier | null;
}

/** A card that verified: the signing key's DID URL, the DID, and the tier when it was checked. */
export interface VerifiedAgentCard {
  ok: true;
  kid: string;
  did: string;
  trustTier?: TrustTier;
}

/** A refused card: the reason code and a sentence naming the cause. */
export interface RefusedAgentCard {
  ok: false;
  reason: AgentCardRefusal;
  detail: string;
}

/** A refused card as an error (`reason` is the refusal code). */
export class AgentCardError extends Error {
  constructor(
    readonly reason: AgentCardRefusal,
    detail: string,
  ) {
    super(`Agent Card refused (${reason}): ${detail}`);
    this.name = 'AgentCardError';
  }
}

/**
 * Verify a card (see the file comment). Never throws for a bad card: a refusal is answered with
 * its reason (`unsigned`, `bad_signature`, `wrong_did`, `unknown_key`, `identity_unavailable`,
 * `tier_too_low`, …); errors of `resolveDid`/`trustTier` propagate.
 */
export async function verifyAgentCard(card: unknown, options: VerifyAgentCardOptions): Promise<VerifiedAgentCard | RefusedAgentCard> {
  const address = options.expectedAddress.toLowerCase();
  const did = `did:hub:${address}`;
  const resolution = await options.resolveDid(did);
  const doc = resolution?.didDocument;
  if (!doc || doc.id !== did) return { ok: false, reason: 'identity_unavailable', detail: `${did} does not resolve` };
  if (resolution.didDocumentMetadata?.deactivated) return { ok: false, reason: 'identity_unavailable', detail: `${did} is deactivated` };
  const check = checkAgentCardSignatures(card, doc, sdkCardCrypto);
  if (!check.ok) return check;
  if (!options.identityStatus && !options.minTier) return { ok: true, kid: check.kid, did };
  const status = (await options.identityStatus?.(address)) ?? null;
  if (status && (status.status === 'suspended' || status.status === 'not_found')) return { ok: false, reason: 'identity_unavailable', detail: `${did} is ${status.status}` };
  const tier = status?.trust_tier ?? null;
  if (!options.minTier) return { ok: true, kid: check.kid, did, ...(tier ? { trustTier: tier } : {}) };
  if (!tier || TRUST_TIERS.indexOf(tier) < TRUST_TIERS.indexOf(options.minTier)) {
    return { ok: false, reason: 'tier_too_low', detail: `${did} is ${tier ?? 'of unknown tier'}, below ${options.minTier}` };
  }
  return { ok: true, kid: check.kid, did, trustTier: tier };
}

/** {@link verifyAgentCard}, throwing {@link AgentCardError} on a refusal. */
export async function assertAgentCard(card: unknown, options: VerifyAgentCardOptions): Promise<VerifiedAgentCard> {
  const result = await verifyAgentCard(card, options);
  if (!result.ok) throw new AgentCardError(result.reason, result.detail);
  return result;
}

/**
 * `resolveDid` and `identityStatus` backed by a Parley service: `GET /api/v1/hub/resolve/{address}`
 * and `GET /api/v1/verify/agent/{address}`; a 404 (or 400) resolves to null.
 */
export function hubCardVerifierOptions(client: ParleyClient): Pick<VerifyAgentCardOptions, 'resolveDid' | 'identityStatus'> {
  const orNull = async <T>(call: () => Promise<T>): Promise<T | null> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ParleyApiError && (err.status === 404 || err.status === 400)) return null;
      throw err;
    }
  };
  return {
    resolveDid: (did) => orNull(async () => (await client.resolveHub(did.replace(/^did:hub:/, ''))) as unknown as CardDidResolution),
    identityStatus: (address) => orNull(() => client.verifyAgent(address)),
  };
}
