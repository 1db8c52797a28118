/**
 * Signed A2A Agent Cards of hub identities (A2A 1.0 signed cards; docs/decisions.md "Signed Agent
 * Cards anchored in did:hub"). The agent signs its card with a key of its `did:hub` document; the
 * service stores a card only after that JWS verifies against the document (`@parley/protocol`
 * `checkAgentCardSignatures`, the same check the SDK's `verifyAgentCard` runs) and serves it as
 * stored. The service holds no agent key, so it cannot forge or alter a card unnoticed.
 */
import canonicalize from 'canonicalize';
import { AGENT_CARD_MAX_BYTES, checkAgentCardSignatures, type CardCrypto, type SignedAgentCard } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { verifyEd25519 } from '../../lib/crypto.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { didOf } from './did.js';
import { decodePublicKeyMultibase } from '../../keys/index.js';
import type { HubDidService } from './did-service.js';
import { getByAddress, updateHubIdentity } from './repo.js';
import { normalizeHubAddress, ownIdentityAt } from './service.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The server's JCS (RFC 8785), Ed25519 (RFC 8032, strict) and multibase decoder for the card check. */
export const serverCardCrypto: CardCrypto = {
  canonicalize: (value) => canonicalize(value),
  verifyEd25519: (signature, message, publicKey) => verifyEd25519(hex(publicKey), message, hex(signature)),
  decodePublicKeyMultibase,
};

/**
 * Who publishes a card: an owner of the identity's tenant (`deviceId` null), or the agent device
 * (device token, or an API key with its registered device) the identity must be bound to.
 * `actor` as the audit chain names it.
 */
export interface CardPublisher {
  tenantId: string;
  actor: string;
  deviceId: string | null;
}

/** What a stored publication answers: the address, DID, verifying key and storage time. */
export interface CardPublication {
  hub_address: string;
  did: string;
  kid: string;
  updated_at: string;
}

export class AgentCardService {
  constructor(
    private readonly db: Db,
    private readonly hubDid: HubDidService,
  ) {}

  /**
   * Store `card` as the identity's Agent Card after its signature verifies against the identity's
   * DID document; records `hub.agent_card_published` (address, kid, card name and skill count) in
   * the same transaction.
   * @throws 404 no identity at `address` in the publisher's tenant; 403 a device or API key the
   *   identity is not bound to; 409 the identity is suspended; 400 a card over 64 KiB, or one
   *   whose signature check fails (the detail names the reason code).
   */
  async publish(publisher: CardPublisher, address: string, card: SignedAgentCard, now = new Date()): Promise<CardPublication> {
    if (Buffer.byteLength(JSON.stringify(card), 'utf8') > AGENT_CARD_MAX_BYTES) throw badRequest(`an Agent Card may have at most ${AGENT_CARD_MAX_BYTES} bytes of JSON`);
    return withTenant(this.db, publisher.tenantId, async (tx) => {
      const identity = await ownIdentityAt(tx, address, true);
      if (publisher.deviceId !== null && identity.deviceId !== publisher.deviceId) throw forbidden('only the agent this hub identity is bound to, or an owner of its tenant, may publish its Agent Card');
      if (identity.status !== 'active') throw conflict('this hub identity is suspended');
      const check = checkAgentCardSignatures(card, await this.hubDid.documentFor(tx, identity), serverCardCrypto);
      if (!check.ok) throw badRequest(`Agent Card signature refused (${check.reason}): ${check.detail}`);
      await updateHubIdentity(tx, identity.id, { agentCard: card, agentCardUpdatedAt: now, updatedAt: now });
      const skills = (card as { skills?: unknown }).skills;
      await appendAudit(tx, publisher.tenantId, {
        type: 'hub.agent_card_published',
        actor: publisher.actor,
        subject: identity.id,
        data: { hub_address: identity.hubAddress, kid: check.kid, name: card.name, skills: Array.isArray(skills) ? skills.length : 0 },
      });
      return { hub_address: identity.hubAddress, did: didOf(identity.hubAddress), kid: check.kid, updated_at: now.toISOString() };
    });
  }

  /** The stored card of `address` (any tenant: cards are public). @throws 404 unknown address or no card. */
  async get(address: string): Promise<SignedAgentCard> {
    const hubAddress = normalizeHubAddress(address);
    const card = hubAddress
      ? await crossTenant(this.db, 'Agent Cards are public and hub addresses unique platform-wide', async (tx) => (await getByAddress(tx, hubAddress))?.agentCard)
      : undefined;
    if (!card) throw notFound('Agent Card');
    return card as SignedAgentCard;
  }
}
