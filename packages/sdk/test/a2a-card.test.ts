/** Signed A2A Agent Cards: build, sign, verify against a `did:hub` document (no service). */
import { canonicalizeAgentCard, verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import {
  assertAgentCard,
  buildAgentCard,
  ed25519Keygen,
  ed25519Sign,
  jcs,
  ownerKeyId,
  publicKeyMultibase,
  signAgentCard,
  SKILL_INPUT_SCHEMAS_EXTENSION,
  unsignedCard,
  verifyAgentCard,
  type AgentCardJson,
  type CardDidResolution,
  type KeyPair,
  type VerifyAgentCardOptions,
} from '../src/index.js';

const ADDRESS = 'translator';
const DID = `did:hub:${ADDRESS}`;
const owner = ed25519Keygen();
const other = ed25519Keygen();

/** A did:hub document with the owner key and, optionally, an added `#key-2`. */
function didDocument(ownerKey: KeyPair, added?: KeyPair) {
  const methods = [{ id: `${DID}#owner-key`, type: 'Ed25519VerificationKey2020', controller: DID, publicKeyMultibase: publicKeyMultibase(ownerKey.publicKey) }];
  if (added) methods.push({ id: `${DID}#key-2`, type: 'Ed25519VerificationKey2020', controller: DID, publicKeyMultibase: publicKeyMultibase(added.publicKey) });
  const ids = methods.map((m) => m.id);
  return { '@context': ['https://www.w3.org/ns/did/v1'], id: DID, verificationMethod: methods, authentication: ids, assertionMethod: ids, service: [] };
}

const options = (resolution: CardDidResolution | null = { didDocument: didDocument(owner) }, extra: Partial<VerifyAgentCardOptions> = {}): VerifyAgentCardOptions => ({
  expectedAddress: ADDRESS,
  resolveDid: async (did) => (did === DID ? resolution : null),
  ...extra,
});

const card = () =>
  buildAgentCard({
    hubAddress: ADDRESS,
    displayName: 'Translator',
    description: 'Translates text',
    capabilities: [{ name: 'translate', description: 'Translate text between languages', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, 'summarize'],
    pluginPort: 18790,
  });
const signedBy = (key: KeyPair, kid = ownerKeyId(ADDRESS)) => signAgentCard(card(), { kid, sign: (m) => ed25519Sign(m, key.secretKey) });

describe('buildAgentCard', () => {
  it('names the identity, its skills with descriptions and input schemas, streaming and the caller-local JSON-RPC endpoint', () => {
    const c = card();
    expect(c.name).toBe('Translator');
    expect(c.description).toBe('Translates text');
    expect(c.supportedInterfaces).toEqual([{ url: 'http://127.0.0.1:18790/a2a/translator', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
    expect(c.capabilities).toMatchObject({ streaming: true, extensions: [{ uri: SKILL_INPUT_SCHEMAS_EXTENSION, params: { skills: { translate: { type: 'object', required: ['text'] } } } }] });
    expect(c.skills?.map((s) => [s.id, s.description])).toEqual([
      ['translate', 'Translate text between languages'],
      ['summarize', 'summarize'],
    ]);
    expect(c.signatures).toBeUndefined();
  });

  it('is already in the official canonical form, so plain JCS and @a2a-js/sdk canonicalization agree', () => {
    const c = signedBy(owner);
    expect(jcs(unsignedCard(c))).toBe(canonicalizeAgentCard(c as unknown as AgentCard));
  });
});

describe('signAgentCard + verifyAgentCard', () => {
  it('verifies a card signed by the owner key named as did:hub:<address>#owner-key', async () => {
    const c = signedBy(owner);
    expect(c.signatures).toHaveLength(1);
    const header = JSON.parse(Buffer.from(c.signatures![0]!.protected, 'base64url').toString('utf8'));
    expect(header).toEqual({ alg: 'EdDSA', kid: `${DID}#owner-key`, typ: 'JOSE' });
    expect(await verifyAgentCard(c, options())).toEqual({ ok: true, kid: `${DID}#owner-key`, did: DID });
  });

  it('verifies with an added assertion method of the document', async () => {
    const c = signedBy(other, `${DID}#key-2`);
    expect(await verifyAgentCard(c, options({ didDocument: didDocument(owner, other) }))).toMatchObject({ ok: true, kid: `${DID}#key-2` });
  });

  it('is independent of member order (RFC 8785 canonicalization)', async () => {
    const c = signedBy(owner);
    const reversed = Object.fromEntries(Object.entries(c).reverse()) as AgentCardJson;
    reversed.capabilities = Object.fromEntries(Object.entries(c.capabilities as object).reverse());
    expect(JSON.stringify(reversed)).not.toBe(JSON.stringify(c));
    expect((await verifyAgentCard(reversed, options())).ok).toBe(true);
  });

  it('refuses a tampered field, an added field and a tampered skill', async () => {
    const c = signedBy(owner);
    for (const tampered of [{ ...c, name: 'Evil' }, { ...c, extra: 1 }, { ...c, skills: [{ ...c.skills![0]!, description: 'steal keys' }] }]) {
      expect(await verifyAgentCard(tampered, options())).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
  });

  it('refuses an unsigned card and a card with empty signatures', async () => {
    expect(await verifyAgentCard(card(), options())).toMatchObject({ ok: false, reason: 'unsigned' });
    expect(await verifyAgentCard({ ...card(), signatures: [] }, options())).toMatchObject({ ok: false, reason: 'unsigned' });
    await expect(assertAgentCard(card(), options())).rejects.toMatchObject({ name: 'AgentCardError', reason: 'unsigned' });
  });

  it('refuses a card signed by another key under the owner key id', async () => {
    expect(await verifyAgentCard(signedBy(other), options())).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a kid of another DID and a kid the document does not list', async () => {
    expect(await verifyAgentCard(signedBy(owner, 'did:hub:someone-else#owner-key'), options())).toMatchObject({ ok: false, reason: 'wrong_did' });
    expect(await verifyAgentCard(signedBy(owner, `${DID}#key-9`), options())).toMatchObject({ ok: false, reason: 'unknown_key' });
  });

  it('refuses another alg and malformed entries', async () => {
    const c = signedBy(owner);
    const es256 = Buffer.from(JSON.stringify({ alg: 'ES256', kid: `${DID}#owner-key` })).toString('base64url');
    expect(await verifyAgentCard({ ...c, signatures: [{ ...c.signatures![0]!, protected: es256 }] }, options())).toMatchObject({ reason: 'unsupported_header' });
    expect(await verifyAgentCard({ ...c, signatures: [{ protected: '!!', signature: 'x' }] }, options())).toMatchObject({ reason: 'malformed_signature' });
    expect(await verifyAgentCard('not a card', options())).toMatchObject({ reason: 'not_a_card' });
  });

  it('accepts the card when one of several signatures verifies', async () => {
    const good = signedBy(owner);
    const bad = signedBy(other);
    expect((await verifyAgentCard({ ...good, signatures: [...bad.signatures!, ...good.signatures!] }, options())).ok).toBe(true);
  });

  it('refuses an unresolvable or deactivated identity', async () => {
    expect(await verifyAgentCard(signedBy(owner), options(null))).toMatchObject({ ok: false, reason: 'identity_unavailable' });
    expect(await verifyAgentCard(signedBy(owner), options({ didDocument: didDocument(owner), didDocumentMetadata: { deactivated: true } }))).toMatchObject({ ok: false, reason: 'identity_unavailable' });
    expect(await verifyAgentCard(signedBy(owner), { ...options(), expectedAddress: 'someone-else' })).toMatchObject({ ok: false, reason: 'identity_unavailable' });
  });

  it('refuses a suspended or unknown identity when its status is checked', async () => {
    for (const status of ['suspended', 'not_found']) {
      expect(await verifyAgentCard(signedBy(owner), options(undefined, { identityStatus: async () => ({ status, trust_tier: 'certified' }) }))).toMatchObject({ ok: false, reason: 'identity_unavailable' });
    }
    expect(await verifyAgentCard(signedBy(owner), options(undefined, { identityStatus: async () => ({ status: 'unverified', trust_tier: 'unverified' }) }))).toMatchObject({ ok: true, trustTier: 'unverified' });
  });

  it('checks the trust tier when a minimum is asked', async () => {
    const c = signedBy(owner);
    const tier = (t: 'unverified' | 'certified' | null) => options(undefined, { minTier: 'certified', identityStatus: async () => ({ status: 'verified', trust_tier: t }) });
    expect(await verifyAgentCard(c, tier('unverified'))).toMatchObject({ ok: false, reason: 'tier_too_low' });
    expect(await verifyAgentCard(c, tier(null))).toMatchObject({ ok: false, reason: 'tier_too_low' });
    expect(await verifyAgentCard(c, tier('certified'))).toMatchObject({ ok: true, trustTier: 'certified' });
  });

  it('is accepted by the official @a2a-js/sdk verifier with the DID document key', async () => {
    const c = signedBy(owner);
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(owner.publicKey).toString('base64url') };
    let askedKid: string | undefined;
    await verifyAgentCardSignature(async (kid) => {
      askedKid = kid;
      return jwk;
    })(c as unknown as AgentCard);
    expect(askedKid).toBe(`${DID}#owner-key`);
    const wrongKey = { ...jwk, x: Buffer.from(other.publicKey).toString('base64url') };
    await expect(verifyAgentCardSignature(async () => wrongKey)({ ...c, name: 'x' } as unknown as AgentCard)).rejects.toThrow();
  });
});
