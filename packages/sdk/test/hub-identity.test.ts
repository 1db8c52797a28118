// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types of @digitalbazaar/vc and ed25519-signature-2020 (untyped)
/// <reference path="../../server/src/modules/credentials/vendor.d.ts" />
/**
 * The SDK's hub identity methods and offline credential verification against a real server over
 * HTTP (contract §2.8, §2.10, §3.3, §4.10, §4.11; design §8.15, §8.16): register an identity, add a
 * capability, read and update the profile, search, verify the agent, certify it (7-day score
 * history seeded as the superuser), obtain a TrustTierCredential, verify it offline
 * with @digitalbazaar/vc and the SDK's document loader (which fetches nothing but `did:hub`
 * resolutions) and through `POST /verify/credential`, then revoke it.
 */
import * as vc from '@digitalbazaar/vc';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { Resolver } from 'did-resolver';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, type Agent, startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import type { HubIdentity, TrustTierCredential } from '@parley/protocol';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';
import {
  CREDENTIALS_V1_URL,
  createDocumentLoader,
  DocumentLoaderError,
  ED25519_2020_URL,
  trustContext,
  trustContextUrl,
  type DocumentLoader,
} from '../src/credentials/index.js';
import { getResolver } from '../src/did/index.js';

const stamp = Date.now().toString(36);
const address = `sdk-hub-${stamp}`;
const did = `did:hub:${address}`;
const CHECKS = ['owner_key', 'bound_device', 'capabilities', 'activity', 'trust_score'];
const VC_CHECKS = ['signature', 'issuer', 'expiration', 'revocation', 'subject'];

async function rejects(p: Promise<unknown>, status: number): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParleyApiError);
  expect((err as ParleyApiError).status).toBe(status);
}

describe('hub identities, verification and credentials through the SDK', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let anonymous: ParleyClient;
  let agent: Agent;
  let identity: HubIdentity;
  let credential: TrustTierCredential;
  /** Every URL the loaders' resolver fetched. */
  const fetched: string[] = [];
  let loader: () => DocumentLoader;

  const superuser = (q: ReturnType<typeof sql>) => t.app.parley.database.db.execute(q);
  const offline = (c: object) => vc.verifyCredential({ credential: c as Record<string, unknown>, suite: new Ed25519Signature2020(), documentLoader: loader() });

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    const sub = `sdk-hub-owner-${stamp}@example.com`;
    const token = await t.ownerToken(sub);
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: token });
    const tenant = await owner.createTenant({ name: 'Hub SDK Co' });
    owner.setTenantId(tenant.tenant_id);
    agent = await activeAgent(t, { sub, token, tenantId: tenant.tenant_id, auth: { authorization: `Bearer ${token}` } });
    anonymous = new ParleyClient({ baseUrl: t.baseUrl });
    const resolver = new Resolver(
      getResolver({
        baseUrl: t.baseUrl,
        fetch: (input, init) => {
          fetched.push(input);
          return fetch(input, init);
        },
      }),
    );
    // The service names its trust context at PUBLIC_URL (here the default http://127.0.0.1:0), not where the test reaches it.
    loader = () => createDocumentLoader({ trustContextUrl: trustContextUrl(t.config.publicUrl), resolver });
  });
  afterAll(() => t?.close());

  it('registers an identity and reads it back', async () => {
    const ownerKey = ed25519Keygen();
    identity = await owner.registerHub({
      hub_address: address.toUpperCase(),
      display_name: 'SDK Translator',
      description: 'Translates quarterly reports',
      capabilities: ['translate'],
      public_key: bytesToBase64(ownerKey.publicKey),
      device_id: agent.deviceId,
    });
    expect(identity).toEqual({
      id: expect.any(String),
      hub_address: address,
      did,
      display_name: 'SDK Translator',
      description: 'Translates quarterly reports',
      capabilities: ['translate'],
      public_key: bytesToBase64(ownerKey.publicKey),
      device_id: agent.deviceId,
      trust_tier: 'unverified',
      tier_source: 'computed',
      created_at: expect.any(String),
    });
    expect(await owner.getHubIdentity(identity.id)).toEqual(identity);
    const secondKey = bytesToBase64(ed25519Keygen().publicKey);
    const second = await owner.createHubIdentity({ hub_address: `${address}-b`, display_name: 'Second', public_key: secondKey });
    expect(second).toMatchObject({ hub_address: `${address}-b`, public_key: secondKey, device_id: null, capabilities: [] });
    expect((await owner.listHubIdentities()).identities.map((i) => i.id).sort()).toEqual([identity.id, second.id].sort());
    await rejects(owner.registerHub({ hub_address: address, display_name: 'Taken', public_key: secondKey }), 409);
    await rejects(owner.registerHub({ hub_address: '-bad-', display_name: 'Bad', public_key: secondKey }), 400);
  });

  it('registers a capability and lists it', async () => {
    const cap = await owner.registerHubCapability(address, {
      name: 'translate',
      version: '1.2.0',
      description: 'EN <-> FR',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      sla: { latency_p95_ms: 800, uptime_sla: 0.99 },
    });
    expect(cap).toEqual({
      name: 'translate',
      version: '1.2.0',
      description: 'EN <-> FR',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      sla: { latency_p95_ms: 800, uptime_sla: 0.99 },
      certification_tier: 'unverified',
      registered_at: expect.any(String),
    });
    expect(await owner.listHubCapabilities(address)).toEqual({ capabilities: [cap] });
    await rejects(owner.registerHubCapability(address, { name: 'broken', version: '1', input_schema: { type: 'no-such-type' } }), 400);
    await rejects(owner.registerHubCapability(address, { name: 'translate', version: '1.2.0', input_schema: {} }), 409);
  });

  it('reads the public profile anonymously, updates it as the owner, and finds it by search', async () => {
    const profile = await anonymous.getHubProfile(address);
    expect(profile).toEqual({
      hub_address: address,
      display_name: 'SDK Translator',
      description: 'Translates quarterly reports',
      trust_tier: 'unverified',
      tier_source: 'computed',
      trust_score: 0.5,
      capabilities: ['translate'],
      enrolled_at: expect.any(String),
      // The bound agent was seen when it activated.
      last_active: expect.any(String),
    });
    const updated = await owner.updateHubProfile(address, { description: `Polyglot ${stamp}` });
    expect(updated).toEqual({ ...profile, description: `Polyglot ${stamp}` });
    await rejects(anonymous.updateHubProfile(address, { description: null }, { token: 'not-a-jwt' }), 401);
    await rejects(anonymous.getHubProfile(`nobody-${stamp}`), 404);

    expect((await anonymous.searchHub({ query: `polyglot ${stamp}` })).results.map((p) => p.hub_address)).toEqual([address]);
    expect((await owner.searchHub({ capability: 'translate', tier: 'unverified' })).results.map((p) => p.hub_address)).toContain(address);
    expect(await anonymous.searchHub({ query: `polyglot ${stamp}`, tier: 'certified' })).toEqual({ results: [] });
  });

  it('verifies the (not yet certified) agent', async () => {
    const v = await anonymous.verifyAgent(address);
    expect(v).toMatchObject({ did, status: 'unverified', trust_tier: 'unverified', window: '7d', active_grants: 0, last_attestation: null });
    expect(v.trust_scores?.composite).toBe(0.5);
    expect(Object.keys(v.trust_scores!)).toHaveLength(13);
    expect((await anonymous.verifyAgent(address, { window: '30d' })).window).toBe('30d');
    expect(await anonymous.verifyAgent(`nobody-${stamp}`)).toMatchObject({ status: 'not_found', trust_tier: null, trust_scores: null });
    await rejects(anonymous.verifyAgent('x'), 400);
  });

  it('certifies the identity once it has a trust score, and verifies it as certified', async () => {
    // Every check but the score passes: owner key, bound ACTIVE agent (seen when it activated), a capability with an SLA.
    const first = await owner.certifyHubIdentity(identity.id);
    expect(first.checks.map((c) => c.check)).toEqual(CHECKS);
    expect(first).toMatchObject({ identity_id: identity.id, tier: 'unverified', upgraded: false });
    expect(first.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(['trust_score']);
    await rejects(owner.issueCredential(identity.id), 403);

    // A 7d score of 0.7 held for 8 days (daily snapshots of the bound device: certify reads the held score, contract §3.3).
    await superuser(sql`update hub_identities set trust_score = 0.7 where id = ${identity.id}`);
    await superuser(sql`
      insert into trust_snapshots (id, tenant_id, device_id, "window", composite, dimensions, percentile, tier, computed_at)
      select gen_random_uuid(), tenant_id, device_id, '7d', 0.7, '{}'::jsonb, 50, 'unverified', now() - g * interval '1 day' - interval '1 second'
      from hub_identities, generate_series(0, 8) g where id = ${identity.id}`);
    const second = await owner.certifyHubIdentity(identity.id);
    expect(second).toMatchObject({ identity_id: identity.id, tier: 'certified', upgraded: true });
    expect(second.checks.every((c) => c.passed && typeof c.detail === 'string')).toBe(true);
    expect((await owner.listHubCapabilities(address)).capabilities[0]!.certification_tier).toBe('certified');

    const v = await anonymous.verifyAgent(address);
    expect(v).toMatchObject({ status: 'verified', trust_tier: 'certified', last_attestation: expect.any(String) });
    expect(v.trust_scores?.composite).toBe(0.7);
  });

  it('obtains a TrustTierCredential and verifies it offline with @digitalbazaar/vc and the SDK loader', async () => {
    credential = await owner.issueCredential(identity.id);
    const contextUrl = trustContextUrl(t.config.publicUrl);
    expect(credential).toMatchObject({
      '@context': [CREDENTIALS_V1_URL, contextUrl, ED25519_2020_URL],
      id: expect.stringMatching(/^urn:uuid:/),
      type: ['VerifiableCredential', 'TrustTierCredential'],
      issuer: 'did:hub:parley',
      credentialSubject: { id: did, trustTier: 'certified' },
      proof: { type: 'Ed25519Signature2020', verificationMethod: 'did:hub:parley#key-1', proofPurpose: 'assertionMethod' },
    });

    fetched.length = 0;
    const result = await offline(credential);
    expect(result.verified, JSON.stringify(result.error ?? result.results)).toBe(true);
    // Nothing but did:hub resolutions went out: every context came from the bundle.
    expect(fetched.length).toBeGreaterThan(0);
    for (const url of fetched) expect(url).toBe(`${t.baseUrl}/1.0/identifiers/did:hub:parley`);

    // A changed claim breaks the signature.
    const forged = { ...credential, credentialSubject: { ...credential.credentialSubject, trustTier: 'enterprise' } };
    expect((await offline(forged)).verified).toBe(false);
  });

  it('the bundled trust context is the one the service serves', async () => {
    const served = await anonymous.trustContext();
    const contextUrl = trustContextUrl(t.config.publicUrl);
    expect(served).toEqual(trustContext(contextUrl));
    expect(served['@context']).toMatchObject({ '@protected': true, trustTier: { '@id': `${contextUrl}#trustTier` } });
    expect((await loader()(contextUrl)).document).toEqual(served);
  });

  it('the loader resolves did:hub DIDs and key URLs, and refuses everything else', async () => {
    const load = loader();
    expect(((await load(did)).document as { id: string }).id).toBe(did);
    expect((await load(`${did}#owner-key`)).document).toMatchObject({ '@context': expect.any(Array), id: `${did}#owner-key`, type: 'Ed25519VerificationKey2020', controller: did });
    const code = (p: Promise<unknown>) => p.then(() => 'loaded', (e: unknown) => (e instanceof DocumentLoaderError ? e.code : String(e)));
    expect(await code(load(`${did}#key-9`))).toBe('not_found');
    expect(await code(load(`did:hub:nobody-${stamp}`))).toBe('not_found');
    expect(await code(load(`did:hub:${address.toUpperCase()}`))).toBe('refused');
    expect(await code(load('did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX'))).toBe('refused');
    expect(await code(load('https://www.w3.org/2018/credentials/examples/v1'))).toBe('refused');

    // Without a resolver, DIDs resolve at the service that serves the trust context.
    const byDefault = createDocumentLoader({ trustContextUrl: trustContextUrl(`${t.baseUrl}/`) });
    expect(((await byDefault(did)).document as { id: string }).id).toBe(did);
    expect(() => createDocumentLoader({ trustContextUrl: 'https://example.com/my-context' })).toThrow(TypeError);
  });

  it('verifies through POST /verify/credential, and revocation fails it there', async () => {
    const ok = await anonymous.verifyCredential({ credential });
    expect(ok).toEqual({ valid: true, checks: VC_CHECKS.map((check) => ({ check, passed: true })), subject: did, credential_type: 'TrustTierCredential' });
    const forged = await anonymous.verifyCredential({ credential: { ...credential, credentialSubject: { ...credential.credentialSubject, trustTier: 'enterprise' } } });
    expect(forged.valid).toBe(false);
    expect(forged.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(['signature']);

    const revoked = await owner.revokeCredential(credential.id);
    expect(revoked).toEqual({
      credential_id: credential.id,
      identity_id: identity.id,
      type: 'TrustTierCredential',
      subject: did,
      issued_at: expect.any(String),
      expires_at: expect.any(String),
      revoked_at: expect.any(String),
    });
    await rejects(owner.revokeCredential(credential.id), 409);
    const after = await anonymous.verifyCredential({ credential });
    expect(after.valid).toBe(false);
    expect(after.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(['revocation']);
    // The signature itself stays intact: revocation is a registry fact, checked by the service.
    expect((await offline(credential)).verified).toBe(true);
  });

  it('owner routes need the owner token, and another tenant sees nothing', async () => {
    await expect(anonymous.certifyHubIdentity(identity.id)).rejects.toThrow(TypeError);
    const other = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-hub-other-${stamp}@example.com`) });
    other.setTenantId((await other.createTenant({ name: 'Other' })).tenant_id);
    await rejects(other.getHubIdentity(identity.id), 404);
    await rejects(other.listHubCapabilities(address), 404);
    await rejects(other.updateHubProfile(address, { display_name: 'Hijacked' }), 404);
    await rejects(other.certifyHubIdentity(identity.id), 404);
    await rejects(other.issueCredential(identity.id), 404);
    await rejects(other.revokeCredential(credential.id), 404);
    expect(await other.listHubIdentities()).toEqual({ identities: [] });
  });
});
