/**
 * Verifiable credentials (contract §2.10, §4.11; design §8.16): the platform issuer and its DID,
 * TrustTierCredential issuance and revocation, `POST /verify/credential` with its five checks,
 * the offline document loader (no remote fetch), the trust context, and the published
 * Ed25519Signature2020 test vector.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { hubIdentities } from '../../src/db/schema/index.js';
import { APP_ROLE } from '../../src/db/tenant.js';
import { CREDENTIALS_V1_URL, CREDENTIALS_V2_URL, ED25519_2020_URL, trustContextUrl } from '../../src/modules/credentials/contexts.js';
import { createDocumentLoader } from '../../src/modules/credentials/document-loader.js';
import { PlatformIssuer } from '../../src/modules/credentials/issuer.js';
import { HubDidService } from '../../src/modules/hub/did-service.js';
import { signCredential, verifyAssertionProof, verifyCredentialProof, type DocumentLoader, type JsonObject } from '../../src/modules/credentials/ld.js';
import { generateEd25519 } from '../../src/keys/index.js';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys } from '../../testing/keys.js';

let seq = 0;
const addr = (prefix = 'vc') => `${prefix}-${Date.now().toString(36)}-${++seq}`;
/** Whole-second UTC timestamp (xsd:dateTime) `offsetMs` from now. */
const at = (offsetMs: number) => new Date(Math.floor((Date.now() + offsetMs) / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
const DAY = 86_400_000;
const ALL_CHECKS = ['signature', 'issuer', 'expiration', 'revocation', 'subject'];

/**
 * Published Ed25519Signature2020 test vector, from the vc-di-eddsa specification test vectors as
 * published by the suite's implementation (the signed fixture, its did:key verification method and
 * controller document), source:
 * https://github.com/digitalbazaar/ed25519-signature-2020/blob/main/test/test-vectors.js
 */
const VECTOR_KEY = 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2';
const VECTOR_METHOD = {
  '@context': 'https://w3id.org/security/multikey/v1',
  id: `${VECTOR_KEY}#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2`,
  type: 'Multikey',
  controller: VECTOR_KEY,
  publicKeyMultibase: 'z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2',
};
const VECTOR_CONTROLLER = { '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'], id: VECTOR_KEY, assertionMethod: [VECTOR_METHOD] };
const VECTOR_SIGNED = {
  '@context': ['https://www.w3.org/ns/credentials/v2', 'https://www.w3.org/ns/credentials/examples/v2', 'https://w3id.org/security/suites/ed25519-2020/v1'],
  id: 'urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33',
  type: ['VerifiableCredential', 'AlumniCredential'],
  name: 'Alumni Credential',
  description: 'A minimum viable example of an Alumni Credential.',
  issuer: 'https://vc.example/issuers/5678',
  validFrom: '2023-01-01T00:00:00Z',
  credentialSubject: { id: 'did:example:abcdefgh', alumniOf: 'The School of Examples' },
  proof: {
    type: 'Ed25519Signature2020',
    created: '2023-02-24T23:36:38Z',
    verificationMethod: `${VECTOR_KEY}#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2`,
    proofPurpose: 'assertionMethod',
    proofValue: 'z57Mm1vboMtZiCyJ4aReZsv8co4Re64Y8GEjL1ZARzMbXZgkARFLqFs1P345NpPGG2hgCrS4nNdvJhpwnrNyG3kEF',
  },
};
/** The VC 2.0 examples context the vector uses (https://www.w3.org/ns/credentials/examples/v2): a single @vocab. */
const EXAMPLES_V2 = { '@context': { '@vocab': 'https://www.w3.org/ns/credentials/examples#' } };

describe('verifiable credentials', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let loader: () => DocumentLoader;
  let trustUrl: string;

  const db = () => t.app.parley.database.db;
  const setTier = (address: string, trustTier: string, status = 'active') => db().update(hubIdentities).set({ trustTier, status }).where(eq(hubIdentities.hubAddress, address));
  const register = async (owner: Owner, body: Record<string, unknown> = {}) => {
    const hub_address = addr();
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address, display_name: 'Agent', public_key: hubOwnerKey(), ...body } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, address: hub_address, did: `did:hub:${hub_address}` };
  };
  const certified = async (owner: Owner, tier = 'certified') => {
    const identity = await register(owner);
    await setTier(identity.address, tier);
    return identity;
  };
  const issue = (owner: Pick<Owner, 'auth'> | { auth: Record<string, string> }, identityId: string) =>
    t.request({ method: 'POST', url: `/api/v1/hub/identities/${identityId}/credentials`, headers: owner.auth });
  const verify = (payload: unknown, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/v1/verify/credential', headers, payload: payload as object });
  const checksOf = (body: { checks: { check: string; passed: boolean }[] }) => Object.fromEntries(body.checks.map((c) => [c.check, c.passed]));
  const revoke = (owner: Pick<Owner, 'auth'> | { auth: Record<string, string> }, id: string) =>
    t.request({ method: 'POST', url: `/api/v1/hub/credentials/${encodeURIComponent(id)}/revoke`, headers: owner.auth });

  /** A hub identity whose owner key we hold (registration public_key), and a signer for it. */
  const identityWithKey = async (owner: Owner) => {
    const keys = newDeviceKeys();
    const seed = Buffer.from(keys.privateKey.export({ format: 'jwk' }).d!, 'base64url');
    const identity = await register(owner, { public_key: Buffer.from(keys.identityPublicKey, 'hex').toString('base64') });
    const key = { id: `${identity.did}#owner-key`, controller: identity.did, ...(await generateEd25519(seed)) };
    return { ...identity, sign: (credential: JsonObject) => signCredential(credential, key, loader()) };
  };
  const credentialFrom = (issuer: string, subject: string, extra: JsonObject = {}): JsonObject => ({
    '@context': [CREDENTIALS_V1_URL, trustUrl],
    id: `urn:uuid:${randomUUID()}`,
    type: ['VerifiableCredential', 'TrustTierCredential'],
    issuer,
    issuanceDate: at(-DAY),
    expirationDate: at(DAY),
    credentialSubject: { id: subject, trustTier: 'certified' },
    ...extra,
  });

  beforeAll(async () => {
    t = await startApp();
    a = await newOwner(t, 'Issuer tenant A');
    b = await newOwner(t, 'Tenant B');
    trustUrl = trustContextUrl(t.config.publicUrl);
    loader = () => createDocumentLoader({ trustContextUrl: trustUrl, dids: t.app.parley.hubDid });
  });
  afterAll(() => t.close());

  describe('platform issuer', () => {
    it('resolves did:hub:parley to a DID document holding the issuing key, and reserves the address', async () => {
      const res = await t.request({ method: 'GET', url: '/api/v1/hub/resolve/parley' });
      expect(res.status).toBe(200);
      const doc = res.body.didDocument;
      expect(doc.id).toBe('did:hub:parley');
      expect(doc.verificationMethod).toEqual([expect.objectContaining({ id: 'did:hub:parley#key-1', type: 'Ed25519VerificationKey2020', controller: 'did:hub:parley' })]);
      expect(doc.assertionMethod).toEqual(['did:hub:parley#key-1']);
      for (const hub_address of ['parley', 'PARLEY']) {
        const taken = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: a.auth, payload: { hub_address, display_name: 'Impostor', public_key: hubOwnerKey() } });
        expect(taken.status).toBe(409);
      }
    });

    it('keeps one key in the platform_keys table, shared by every instance and unreadable by the application role', async () => {
      const first = await t.request({ method: 'GET', url: '/api/v1/hub/parley/did' });
      expect(first.status).toBe(200);
      // A second instance on the same database loads the stored key instead of creating one.
      const other = new PlatformIssuer(db(), t.app.parley.secrets, 'parley', t.config.publicUrl);
      await other.init();
      expect(other.platformDocument('parley')!.verificationMethod[0]!.publicKeyMultibase).toBe(first.body.verificationMethod[0].publicKeyMultibase);
      expect(other.platformDocument('someone-else')).toBeNull();
      const rows = (await db().execute(sql`select purpose from platform_keys`)) as unknown as { rows: { purpose: string }[] };
      expect(rows.rows.map((r) => r.purpose).filter((p) => p === 'vc-issuer')).toEqual(['vc-issuer']);
      await expect(
        db().transaction(async (tx) => {
          await tx.execute(sql`select set_config('role', ${APP_ROLE}, true)`);
          await tx.execute(sql`select purpose from platform_keys`);
        }),
      ).rejects.toThrow();
    });

    it('honours PLATFORM_HUB_ADDRESS (checked against the hub address rule)', async () => {
      const config = loadConfig({ PLATFORM_HUB_ADDRESS: 'Trust-Hub' });
      expect(config.credentials).toEqual({ platformHubAddress: 'trust-hub', ttlDays: 30 });
      expect(() => loadConfig({ PLATFORM_HUB_ADDRESS: '-bad-' })).toThrow(ConfigError);
      expect(loadConfig({ CREDENTIAL_TTL_DAYS: '7' }).credentials.ttlDays).toBe(7);
      const issuer = new PlatformIssuer(db(), t.app.parley.secrets, config.credentials.platformHubAddress, t.config.publicUrl);
      await issuer.init();
      const dids = new HubDidService({ db: db(), publicUrl: t.config.publicUrl, platformDocument: (address) => issuer.platformDocument(address) });
      expect(await dids.resolve('trust-hub')).toMatchObject({ id: 'did:hub:trust-hub', assertionMethod: ['did:hub:trust-hub#key-1'] });
      expect(await dids.resolve('parley')).toBeNull();
    });
  });

  describe('POST /hub/identities/{id}/credentials', () => {
    it('issues a signed TrustTierCredential to a certified identity, recorded in the registry', async () => {
      const identity = await certified(a, 'enterprise');
      const res = await issue(a, identity.id);
      expect(res.status).toBe(201);
      const vc = res.body;
      expect(vc).toMatchObject({
        '@context': [CREDENTIALS_V1_URL, trustUrl, ED25519_2020_URL],
        type: ['VerifiableCredential', 'TrustTierCredential'],
        issuer: 'did:hub:parley',
        credentialSubject: { id: identity.did, trustTier: 'enterprise' },
        proof: { type: 'Ed25519Signature2020', verificationMethod: 'did:hub:parley#key-1', proofPurpose: 'assertionMethod' },
      });
      expect(vc.id).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
      expect(Date.parse(vc.expirationDate) - Date.parse(vc.issuanceDate)).toBe(30 * DAY);
      expect(vc.proof.proofValue).toMatch(/^z[1-9A-HJ-NP-Za-km-z]+$/);
      const registry = (await db().execute(sql`select tenant_id, identity_id, type, subject, revoked_at from issued_credentials where id = ${vc.id}`)) as unknown as { rows: Record<string, unknown>[] };
      expect(registry.rows[0]).toMatchObject({ tenant_id: a.tenantId, identity_id: identity.id, type: 'TrustTierCredential', subject: identity.did, revoked_at: null });
      // The same libraries verify it outside the service.
      expect(await verifyCredentialProof(vc, loader())).toEqual({ verified: true });
    });

    it('refuses identities below certified (403 naming the tier), suspended ones, other tenants, and bad input', async () => {
      const unverified = await register(a);
      const refused = await issue(a, unverified.id);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/unverified/);
      const suspended = await certified(a);
      await setTier(suspended.address, 'certified', 'suspended');
      expect((await issue(a, suspended.id)).status).toBe(403);
      const mine = await certified(a);
      expect((await issue(b, mine.id)).status).toBe(404);
      expect((await issue(a, randomUUID())).status).toBe(404);
      expect((await issue(a, 'not-a-uuid')).status).toBe(400);
      expect((await issue({ auth: {} }, mine.id)).status).toBe(401);
      const agent = await activeAgent(t, a);
      expect((await issue(agent, mine.id)).status).toBe(403);
    });
  });

  describe('POST /verify/credential', () => {
    it('an issued credential is valid: every check passes', async () => {
      const identity = await certified(a);
      const vc = (await issue(a, identity.id)).body;
      const res = await verify({ credential: vc });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ valid: true, checks: ALL_CHECKS.map((check) => ({ check, passed: true })), subject: identity.did, credential_type: 'TrustTierCredential' });
    });

    it('tampered (trustTier changed) → signature false', async () => {
      const identity = await certified(a);
      const vc = (await issue(a, identity.id)).body;
      const res = await verify({ credential: { ...vc, credentialSubject: { ...vc.credentialSubject, trustTier: 'enterprise' } } });
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      expect(checksOf(res.body)).toEqual({ signature: false, issuer: true, expiration: true, revocation: true, subject: true });
    });

    it('expired (signed by a registered identity with a past expirationDate) → expiration false only', async () => {
      const signer = await identityWithKey(a);
      const subject = await register(b);
      const fresh = await signer.sign(credentialFrom(signer.did, subject.did));
      expect(checksOf((await verify({ credential: fresh })).body)).toEqual(Object.fromEntries(ALL_CHECKS.map((c) => [c, true])));
      const expired = await signer.sign(credentialFrom(signer.did, subject.did, { issuanceDate: at(-10 * DAY), expirationDate: at(-DAY) }));
      const res = await verify({ credential: expired });
      expect(res.body.valid).toBe(false);
      expect(checksOf(res.body)).toEqual({ signature: true, issuer: true, expiration: false, revocation: true, subject: true });
      const notYet = await signer.sign(credentialFrom(signer.did, subject.did, { issuanceDate: at(DAY), expirationDate: at(2 * DAY) }));
      expect(checksOf((await verify({ credential: notYet })).body)).toMatchObject({ signature: true, expiration: false });
    });

    it('a VC 2.0 credential (validFrom / validUntil) is accepted', async () => {
      const signer = await identityWithKey(a);
      const subject = await register(a);
      const v2 = { '@context': [CREDENTIALS_V2_URL, trustUrl], type: ['VerifiableCredential', 'TrustTierCredential'], issuer: signer.did, validFrom: at(-DAY), credentialSubject: { id: subject.did, trustTier: 'certified' } };
      const signed = await signer.sign({ ...v2, validUntil: at(DAY) });
      expect((await verify({ credential: signed })).body.valid).toBe(true);
      const lapsed = await signer.sign({ ...v2, validUntil: at(-60 * 60_000) });
      expect(checksOf((await verify({ credential: lapsed })).body)).toMatchObject({ signature: true, expiration: false });
    });

    it('revoked → revocation false; revoke is for the issuing tenant only, once', async () => {
      const identity = await certified(a);
      const vc = (await issue(a, identity.id)).body;
      expect((await revoke(b, vc.id)).status).toBe(404);
      expect((await revoke({ auth: {} }, vc.id)).status).toBe(401);
      expect((await revoke(a, 'urn:uuid:not-a-uuid')).status).toBe(400);
      expect((await revoke(a, `urn:uuid:${randomUUID()}`)).status).toBe(404);
      const res = await revoke(a, vc.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ credential_id: vc.id, identity_id: identity.id, type: 'TrustTierCredential', subject: identity.did });
      expect(Date.parse(res.body.revoked_at)).not.toBeNaN();
      const again = await revoke(a, vc.id.replace('urn:uuid:', '').toUpperCase());
      expect(again.status).toBe(409);
      const checked = await verify({ credential: vc });
      expect(checked.body.valid).toBe(false);
      expect(checksOf(checked.body)).toEqual({ signature: true, issuer: true, expiration: true, revocation: false, subject: true });
    });

    it('unknown issuer → issuer false', async () => {
      const subject = await register(a);
      // A key that claims an unregistered did:hub, and a registered DID whose document lacks the key.
      const ghost = `did:hub:${addr('ghost')}`;
      const key = await generateEd25519();
      const loaderWith = (did: string): DocumentLoader => {
        const doc = { '@context': ['https://www.w3.org/ns/did/v1', ED25519_2020_URL], id: did, verificationMethod: [{ id: `${did}#k`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: key.publicKeyMultibase }], assertionMethod: [`${did}#k`] };
        const base = loader();
        return async (url) => (url === did ? { contextUrl: null, documentUrl: url, document: doc } : url === `${did}#k` ? { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...doc.verificationMethod[0] } } : base(url));
      };
      for (const issuer of [ghost, subject.did]) {
        const forged = await signCredential(credentialFrom(issuer, subject.did), { id: `${issuer}#k`, controller: issuer, ...key }, loaderWith(issuer));
        const res = await verify({ credential: forged });
        expect(res.body.valid).toBe(false);
        expect(checksOf(res.body)).toMatchObject({ issuer: false, signature: false, subject: true });
      }
      const identity = await certified(a);
      const vc = (await issue(a, identity.id)).body;
      expect(checksOf((await verify({ credential: { ...vc, issuer: 'did:example:123' } })).body)).toMatchObject({ issuer: false, signature: false });
    });

    it('subject must be a well-formed DID, registered when did:hub', async () => {
      const signer = await identityWithKey(a);
      for (const [subject, passed] of [
        [`did:hub:${addr('nobody')}`, false],
        ['urn:example:not-a-did', false],
        ['did:example:123456789abcdefghi', true],
      ] as const) {
        const signed = await signer.sign(credentialFrom(signer.did, subject));
        const res = await verify({ credential: signed });
        expect(checksOf(res.body).subject, subject).toBe(passed);
        expect(res.body.subject).toBe(subject);
      }
    });

    it('a credential naming a remote context is invalid, and nothing is fetched', async () => {
      let hits = 0;
      const server = http.createServer((_req, res) => {
        hits++;
        res.setHeader('content-type', 'application/ld+json');
        res.end(JSON.stringify({ '@context': { extra: 'https://example.org/extra' } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const remote = `http://127.0.0.1:${(server.address() as AddressInfo).port}/context.jsonld`;
        const identity = await certified(a);
        const vc = (await issue(a, identity.id)).body;
        const res = await verify({ credential: { ...vc, '@context': [...vc['@context'], remote] } });
        expect(res.status).toBe(200);
        expect(res.body.valid).toBe(false);
        expect(checksOf(res.body).signature).toBe(false);
        await expect(loader()(remote)).rejects.toThrow(/refusing to load/);
        expect(hits).toBe(0);
      } finally {
        server.close();
      }
    });

    it('answers 400 only for a body without a credential object; malformed credentials are 200 invalid', async () => {
      for (const body of [{}, { credential: 'x' }, { credential: [] }, { credential: null }, { vc: {} }]) {
        const res = await verify(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      const empty = await verify({ credential: {} });
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ valid: false, subject: null, credential_type: null });
      expect(checksOf(empty.body)).toMatchObject({ signature: false, issuer: false, subject: false });
      const odd = await verify({ credential: { '@context': 42, type: 'VerifiableCredential', issuer: { id: 5 }, credentialSubject: [1, 'x'], proof: 'p', expirationDate: 'soon', id: 'a\u0000b' } });
      expect(odd.status).toBe(200);
      expect(odd.body).toMatchObject({ valid: false, credential_type: 'VerifiableCredential' });
      expect(checksOf(odd.body).expiration).toBe(false);
    });

    it('is public; a sent credential is checked (unknown API key 401)', async () => {
      const identity = await certified(a);
      const vc = (await issue(a, identity.id)).body;
      expect((await verify({ credential: vc }, a.auth)).body.valid).toBe(true);
      expect((await verify({ credential: vc }, { 'x-api-key': 'svc_key_unknown' })).status).toBe(401);
      expect((await verify({ credential: vc }, { authorization: 'Bearer nope' })).status).toBe(401);
    });
  });

  describe('document loader and contexts', () => {
    it('serves the trust context at /contexts/trust/v1', async () => {
      const res = await t.request({ method: 'GET', url: '/contexts/trust/v1' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/ld\+json/);
      expect(res.body['@context']).toMatchObject({ '@protected': true, TrustTierCredential: { '@id': `${trustUrl}#TrustTierCredential` }, trustTier: { '@id': `${trustUrl}#trustTier` } });
      expect((await loader()(trustUrl)).document).toEqual(res.body);
    });

    it('resolves did:hub DIDs and key URLs from our data; refuses other methods and unknown DIDs', async () => {
      const signer = await identityWithKey(a);
      const load = loader();
      expect(((await load(signer.did)).document as JsonObject).id).toBe(signer.did);
      expect((await load(`${signer.did}#owner-key`)).document).toMatchObject({ '@context': ['https://www.w3.org/ns/did/v1', ED25519_2020_URL], id: `${signer.did}#owner-key`, type: 'Ed25519VerificationKey2020' });
      await expect(load(`${signer.did}#key-9`)).rejects.toThrow();
      await expect(load(`did:hub:${addr('nobody')}`)).rejects.toThrow(/not registered/);
      await expect(load(VECTOR_KEY)).rejects.toThrow(/refusing/);
      await expect(load('https://www.w3.org/2018/credentials/examples/v1')).rejects.toThrow(/refusing/);
    });

    it('the published Ed25519Signature2020 test vector passes proof verification with our loader', async () => {
      // Our loader supplies the VC 2.0 and Ed25519-2020 contexts; the vector's own did:key method,
      // controller document and the examples context come from the vector (our loader refuses them).
      const fixtures = new Map<string, unknown>([
        ['https://www.w3.org/ns/credentials/examples/v2', EXAMPLES_V2],
        [VECTOR_METHOD.id, VECTOR_METHOD],
        [VECTOR_KEY, VECTOR_CONTROLLER],
      ]);
      const ours = loader();
      const withVector: DocumentLoader = async (url) => (fixtures.has(url) ? { contextUrl: null, documentUrl: url, document: fixtures.get(url) } : ours(url));
      expect(await verifyAssertionProof(structuredClone(VECTOR_SIGNED), withVector)).toEqual({ verified: true });
      const tampered = structuredClone(VECTOR_SIGNED);
      tampered.credentialSubject.alumniOf = 'Another School';
      expect((await verifyAssertionProof(tampered, withVector)).verified).toBe(false);
      // Without the vector's fixtures (no did:key, no examples context) our loader cannot verify it: nothing remote is fetched.
      expect((await verifyAssertionProof(structuredClone(VECTOR_SIGNED), loader())).verified).toBe(false);
    });
  });
});
