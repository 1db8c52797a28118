/**
 * DID documents, resolution and updates (contract §2.8, §4.10, §8; design §8.15): the multibase
 * vector, DID Core rules on a real document, the resolution routes (`/hub/resolve/{address}`,
 * `/1.0/identifiers/{did}`), the owner-key-signed `PATCH /hub/{address}/did` (signature, replay,
 * staleness, tenants) and the contract §8 rate limit of `GET /hub/{address}/did`.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { eq } from 'drizzle-orm';
import { base58btc } from 'multiformats/bases/base58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDidDocument, DID_CONTEXT, messagingEndpoint, parseDid, resolutionResult } from '../../src/modules/hub/did.js';
import { decodePublicKeyMultibase, publicKeyMultibase } from '../../src/keys/index.js';
import { hubIdentities } from '../../src/db/schema/index.js';
import { HubDidService } from '../../src/modules/hub/did-service.js';
import { newOwner, type Owner } from '../../testing/flows.js';
import { loadConfig } from '../../src/config.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys, type DeviceKeys } from '../../testing/keys.js';

const PUBLIC_URL = 'https://parley.example.com';
let seq = 0;
const addr = (prefix = 'did') => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
/** A fresh Ed25519 public key as `publicKeyMultibase`. */
const newMultibase = () => publicKeyMultibase(Buffer.from(newDeviceKeys().identityPublicKey, 'hex'));

/** An Ed25519 public key from a 32-byte seed (RFC 8032), via PKCS#8. */
function publicKeyFromSeed(seed: Buffer): Buffer {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
}

/** A key under the X25519 multicodec (0xec 0x01): well-formed multibase, wrong key type. */
const x25519Multibase = (key: Uint8Array) => base58btc.encode(new Uint8Array([0xec, 0x01, ...key]));

/** A signed PATCH body: signature = Ed25519(owner key, UTF-8 JCS(body without signature)), base64. */
function signedUpdate(owner: DeviceKeys, unsigned: Record<string, unknown>): Record<string, unknown> {
  const signature = Buffer.from(owner.sign(Buffer.from(canonicalize(unsigned)!, 'utf8')), 'hex').toString('base64');
  return { ...unsigned, signature };
}
const updateBody = (owner: DeviceKeys, publicKeyMb = newMultibase(), at = new Date()) =>
  signedUpdate(owner, { add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: publicKeyMb }, timestamp: at.toISOString() });

describe('DID helpers (pure)', () => {
  it('publicKeyMultibase: the seed of 32 bytes of 0x01 gives the published vector', () => {
    const key = publicKeyFromSeed(Buffer.alloc(32, 1));
    expect(publicKeyMultibase(key)).toBe('z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX');
    expect(Buffer.from(decodePublicKeyMultibase('z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX')!).equals(key)).toBe(true);
    expect(() => publicKeyMultibase(new Uint8Array(31))).toThrow(RangeError);
  });

  it('decodePublicKeyMultibase refuses other prefixes, lengths and encodings', () => {
    const key = publicKeyFromSeed(Buffer.alloc(32, 1));
    const mb = publicKeyMultibase(key);
    // the same bytes under the X25519 multicodec (0xec 0x01), a short key, a non-z multibase, junk
    for (const bad of [x25519Multibase(key), mb.slice(0, -3), 'm' + Buffer.concat([Buffer.from([0xed, 1]), key]).toString('base64'), 'z0OIl', '', 'z']) {
      expect(decodePublicKeyMultibase(bad), bad).toBeNull();
    }
  });

  it('parseDid, messagingEndpoint, resolutionResult', () => {
    expect(parseDid('did:hub:Agent-1')).toEqual({ address: 'agent-1' });
    expect(parseDid('did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX')).toEqual({ error: 'methodNotSupported' });
    for (const bad of ['did:hub:-bad', 'did:hub:ab', 'did:hub:', 'hub:agent', 'did:HUB:agent', 'nonsense']) expect(parseDid(bad), bad).toEqual({ error: 'invalidDid' });
    expect(messagingEndpoint('https://p.example.com/')).toBe('wss://p.example.com/api/v1/ws');
    expect(messagingEndpoint('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/api/v1/ws');
    expect(messagingEndpoint('https://p.example.com/base')).toBe('wss://p.example.com/base/api/v1/ws');
    expect(resolutionResult(null, {}, 'invalidDid')).toEqual({
      '@context': 'https://w3id.org/did-resolution/v1',
      didDocument: null,
      didResolutionMetadata: { error: 'invalidDid' },
      didDocumentMetadata: {},
    });
    const doc = buildDidDocument({ address: 'abc', ownerKey: null, methods: [], wsUrl: 'wss://x/api/v1/ws' });
    expect(doc.verificationMethod).toEqual([]);
    expect(resolutionResult(doc, { created: new Date('2026-01-02T03:04:05.678Z') }).didDocumentMetadata).toEqual({ created: '2026-01-02T03:04:05Z' });
  });
});

/** W3C DID Core rules a document must satisfy (§4, §5.1–§5.4), for this DID and service URL. */
function expectDidCore(doc: any, did: string, wsUrl: string) {
  expect(doc['@context']).toEqual([...DID_CONTEXT]);
  expect(doc['@context'][0]).toBe('https://www.w3.org/ns/did/v1');
  expect(doc.id).toBe(did);
  expect(doc.id).toMatch(/^did:[a-z0-9]+:[A-Za-z0-9._%-]+$/);
  const ids = new Set<string>();
  for (const m of doc.verificationMethod) {
    expect(m.id.startsWith(`${did}#`), m.id).toBe(true);
    expect(ids.has(m.id), `duplicate ${m.id}`).toBe(false);
    ids.add(m.id);
    expect(m.type).toBe('Ed25519VerificationKey2020');
    expect(m.controller).toMatch(/^did:[a-z0-9]+:.+$/);
    expect(m.controller).toBe(did);
    expect(decodePublicKeyMultibase(m.publicKeyMultibase), m.publicKeyMultibase).not.toBeNull();
  }
  for (const rel of ['authentication', 'assertionMethod']) {
    expect(Array.isArray(doc[rel])).toBe(true);
    for (const ref of doc[rel]) expect(ids.has(ref), `${rel} ${ref} names no verification method`).toBe(true);
  }
  expect(doc.service.length).toBeGreaterThan(0);
  const serviceIds = new Set<string>();
  for (const s of doc.service) {
    expect(s.id.startsWith(`${did}#`)).toBe(true);
    expect(serviceIds.has(s.id)).toBe(false);
    serviceIds.add(s.id);
    expect(typeof s.type).toBe('string');
    expect(s.serviceEndpoint).toMatch(/^wss?:\/\//);
  }
  expect(doc.service[0].serviceEndpoint).toBe(wsUrl);
}

describe('DID documents and resolution routes', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let ownerKeys: DeviceKeys;
  let address: string;
  let bare: string;
  let apiKey: string;

  const register = async (owner: Owner, body: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers });
  const patch = (address: string, payload: unknown, headers: Record<string, string> = a.auth) =>
    t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/did`, headers, payload: payload as object });

  beforeAll(async () => {
    t = await startApp({ env: { PUBLIC_URL, RATE_LIMIT_DID_PUBLIC_PER_MIN: '10000' } });
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    ownerKeys = newDeviceKeys();
    address = addr();
    await register(a, { hub_address: address, display_name: 'Signer', public_key: b64(ownerKeys.identityPublicKey) });
    bare = addr('bare');
    // An identity registered before the owner key was required has none (contract §2.8 requires it now).
    const legacy = await register(a, { hub_address: bare, display_name: 'No key', public_key: hubOwnerKey() });
    await t.app.parley.database.db.update(hubIdentities).set({ publicKey: null }).where(eq(hubIdentities.id, legacy.id));
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'resolver' } });
    expect(key.status).toBe(201);
    apiKey = key.body.key;
  });
  afterAll(() => t.close());

  it('GET /hub/{address}/did answers a DID Core document with the owner key and the wss endpoint from PUBLIC_URL', async () => {
    const res = await get(`/api/v1/hub/${address}/did`);
    expect(res.status).toBe(200);
    const did = `did:hub:${address}`;
    expectDidCore(res.body, did, 'wss://parley.example.com/api/v1/ws');
    expect(res.body.verificationMethod).toEqual([
      { id: `${did}#owner-key`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: publicKeyMultibase(Buffer.from(ownerKeys.identityPublicKey, 'hex')) },
    ]);
    expect(res.body.authentication).toEqual([`${did}#owner-key`]);
    expect(res.body.assertionMethod).toEqual([`${did}#owner-key`]);
    expect(res.body.service).toEqual([{ id: `${did}#messaging`, type: 'ParleyMessaging', serviceEndpoint: 'wss://parley.example.com/api/v1/ws' }]);
    // any case resolves to the stored address; an identity without owner key has no methods
    expect((await get(`/api/v1/hub/${address.toUpperCase()}/did`)).body.id).toBe(did);
    const none = await get(`/api/v1/hub/${bare}/did`);
    expect(none.status).toBe(200);
    expectDidCore(none.body, `did:hub:${bare}`, 'wss://parley.example.com/api/v1/ws');
    expect(none.body.verificationMethod).toEqual([]);
  });

  it('GET /hub/{address}/did: 404 {detail} unknown, 400 malformed, 401 with an invalid credential, 200 with a valid API key or token', async () => {
    const unknown = await get('/api/v1/hub/nobody-here/did');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: expect.any(String) });
    expect((await get('/api/v1/hub/-bad-/did')).status).toBe(400);
    expect((await get(`/api/v1/hub/${address}/did`, { 'x-api-key': 'svc_agent_sk_dev_' + '0'.repeat(64) })).status).toBe(401);
    expect((await get(`/api/v1/hub/${address}/did`, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await get(`/api/v1/hub/${address}/did`, { 'x-api-key': apiKey })).status).toBe(200);
    expect((await get(`/api/v1/hub/${address}/did`, b.auth)).status).toBe(200);
  });

  it('GET /hub/resolve/{address}: resolution result; 404 notFound and 400 invalidDid still carry one', async () => {
    const res = await get(`/api/v1/hub/resolve/${address}`);
    expect(res.status).toBe(200);
    expect(res.body['@context']).toBe('https://w3id.org/did-resolution/v1');
    expect(res.body.didResolutionMetadata).toEqual({ contentType: 'application/did+ld+json' });
    expectDidCore(res.body.didDocument, `did:hub:${address}`, 'wss://parley.example.com/api/v1/ws');
    expect(res.body.didDocumentMetadata.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body.didDocumentMetadata.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body.detail).toBeUndefined();

    const missing = await get('/api/v1/hub/resolve/nobody-here');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      '@context': 'https://w3id.org/did-resolution/v1',
      didDocument: null,
      didResolutionMetadata: { error: 'notFound' },
      didDocumentMetadata: {},
      detail: expect.any(String),
    });
    const invalid = await get('/api/v1/hub/resolve/no_such_thing!');
    expect(invalid.status).toBe(400);
    expect(invalid.body.didResolutionMetadata).toEqual({ error: 'invalidDid' });
    expect(invalid.body.didDocument).toBeNull();
    expect((await get(`/api/v1/hub/resolve/${address}`, { 'x-api-key': 'svc_agent_sk_dev_' + '1'.repeat(64) })).status).toBe(401);
  });

  it('GET /1.0/identifiers/{did} (Universal Resolver driver path, outside /api/v1)', async () => {
    const did = `did:hub:${address}`;
    for (const url of [`/1.0/identifiers/${did}`, `/1.0/identifiers/${encodeURIComponent(did)}`]) {
      const res = await get(url);
      expect(res.status, url).toBe(200);
      expect(String(res.headers['content-type'])).toContain('application/ld+json');
      expect(String(res.headers['content-type'])).toContain('profile="https://w3id.org/did-resolution"');
      expect(res.body.didDocument.id).toBe(did);
      expect(res.body.didResolutionMetadata.contentType).toBe('application/did+ld+json');
    }
    const cases: [string, number, string][] = [
      ['did:hub:nobody-here', 404, 'notFound'],
      ['did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX', 400, 'methodNotSupported'],
      ['did:hub:-x', 400, 'invalidDid'],
      ['not-a-did', 400, 'invalidDid'],
    ];
    for (const [d, status, error] of cases) {
      const res = await get(`/1.0/identifiers/${encodeURIComponent(d)}`);
      expect(res.status, d).toBe(status);
      expect(res.body.didResolutionMetadata, d).toEqual({ error });
      expect(res.body.didDocument).toBeNull();
    }
    expect((await get(`/api/v1/1.0/identifiers/${did}`)).status).toBe(404);
  });

  it('HubDidService.resolve: registered identities, the platform issuer document hook first, null otherwise', async () => {
    const db = t.app.parley.database.db;
    const platformDoc = { '@context': [...DID_CONTEXT], id: 'did:hub:parley-platform', assertionMethod: ['did:hub:parley-platform#issuer'] };
    const svc = new HubDidService({ db, publicUrl: PUBLIC_URL, platformDocument: (x) => (x === 'parley-platform' ? platformDoc : null) });
    expect(await svc.resolve('parley-platform')).toBe(platformDoc);
    expect(await svc.resolve('PARLEY-PLATFORM')).toBe(platformDoc);
    expect((await svc.resolve(address)) as any).toMatchObject({ id: `did:hub:${address}` });
    expect(await svc.resolve('nobody-here')).toBeNull();
    expect(await svc.resolve('-bad')).toBeNull();
    expect((await svc.resolveDid('did:hub:parley-platform')).body.didDocument).toBe(platformDoc);
    expect(((await t.app.parley.hubDid.resolve(address)) as any).id).toBe(`did:hub:${address}`);
  });

  describe('PATCH /hub/{address}/did', () => {
    it('adds #key-2, #key-3 … with a valid owner-key signature; resolution shows them', async () => {
      const did = `did:hub:${address}`;
      const k2 = newMultibase();
      const res = await patch(address, updateBody(ownerKeys, k2));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expectDidCore(res.body, did, 'wss://parley.example.com/api/v1/ws');
      expect(res.body.verificationMethod.at(-1)).toEqual({ id: `${did}#key-2`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: k2 });
      expect(res.body.authentication).toEqual([`${did}#owner-key`, `${did}#key-2`]);
      expect(res.body.assertionMethod).toEqual([`${did}#owner-key`, `${did}#key-2`]);

      const k3 = newMultibase();
      const third = await patch(address.toUpperCase(), updateBody(ownerKeys, k3, new Date(Date.now() + 1000)));
      expect(third.status).toBe(200);
      expect(third.body.verificationMethod.map((m: any) => m.id)).toEqual([`${did}#owner-key`, `${did}#key-2`, `${did}#key-3`]);

      const resolved = await get(`/api/v1/hub/resolve/${address}`);
      expect(resolved.body.didDocument).toEqual(third.body);
      expect(Date.parse(resolved.body.didDocumentMetadata.updated)).toBeGreaterThanOrEqual(Date.parse(resolved.body.didDocumentMetadata.created));
    });

    it('signs every field but `signature`: extra fields are covered; a changed field fails with 403', async () => {
      const extra = signedUpdate(ownerKeys, {
        add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: newMultibase() },
        timestamp: new Date(Date.now() + 2000).toISOString(),
        nonce: 'n-1',
      });
      expect((await patch(address, extra)).status).toBe(200);
      const tampered = { ...updateBody(ownerKeys, newMultibase(), new Date(Date.now() + 3000)) };
      (tampered.add_verification_method as any).publicKeyMultibase = newMultibase();
      const res = await patch(address, tampered);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: expect.any(String) });
    });

    it('403 when signed by another key', async () => {
      const res = await patch(address, updateBody(newDeviceKeys(), newMultibase(), new Date(Date.now() + 4000)));
      expect(res.status).toBe(403);
    });

    it('409 for a replayed request and for a timestamp not newer than the last accepted one', async () => {
      const body = updateBody(ownerKeys, newMultibase(), new Date(Date.now() + 10_000));
      expect((await patch(address, body)).status).toBe(200);
      const replay = await patch(address, body);
      expect(replay.status).toBe(409);
      expect(replay.body.detail).toMatch(/replay/);
      // a fresh key, properly signed, but dated before the last accepted update
      expect((await patch(address, updateBody(ownerKeys, newMultibase(), new Date(Date.now() + 5000)))).status).toBe(409);
    });

    it('400 for a timestamp more than 5 minutes away (past or future)', async () => {
      for (const offset of [-6 * 60_000, 6 * 60_000]) {
        const res = await patch(address, updateBody(ownerKeys, newMultibase(), new Date(Date.now() + offset)));
        expect(res.status, String(offset)).toBe(400);
      }
    });

    it('409 for a key already in the document and for an identity without owner key', async () => {
      const current = (await get(`/api/v1/hub/${address}/did`)).body;
      const dup = await patch(address, updateBody(ownerKeys, current.verificationMethod[0].publicKeyMultibase, new Date(Date.now() + 20_000)));
      expect(dup.status).toBe(409);
      expect((await patch(address, updateBody(ownerKeys, current.verificationMethod[1].publicKeyMultibase, new Date(Date.now() + 21_000)))).status).toBe(409);
      const none = await patch(bare, updateBody(ownerKeys, newMultibase()));
      expect(none.status).toBe(409);
    });

    it('400 for malformed bodies and keys; 401 without auth; 404 for another tenant or an unknown address', async () => {
      const x25519 = x25519Multibase(Buffer.from(newDeviceKeys().identityPublicKey, 'hex'));
      const future = () => new Date(Date.now() + 30_000);
      const bad: unknown[] = [
        {},
        { add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: newMultibase() }, timestamp: new Date().toISOString() },
        updateBody(ownerKeys, x25519, future()),
        updateBody(ownerKeys, 'z' + '1'.repeat(45), future()),
        // well-formed multibase, but the identity point (small order) is no usable key
        updateBody(ownerKeys, publicKeyMultibase(new Uint8Array([1, ...new Array(31).fill(0)])), future()),
        signedUpdate(ownerKeys, { add_verification_method: { type: 'JsonWebKey2020', publicKeyMultibase: newMultibase() }, timestamp: future().toISOString() }),
        signedUpdate(ownerKeys, { add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: newMultibase() }, timestamp: 'yesterday' }),
        { ...updateBody(ownerKeys, newMultibase(), future()), signature: 'AAAA' },
        { ...updateBody(ownerKeys, newMultibase(), future()), signature: 'not base64!' },
      ];
      for (const body of bad) {
        const res = await patch(address, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.detail).toEqual(expect.any(String));
      }
      expect((await patch(address, updateBody(ownerKeys), {})).status).toBe(401);
      expect((await patch(address, updateBody(ownerKeys), { 'x-api-key': apiKey })).status).toBe(403);
      const other = await patch(address, updateBody(ownerKeys, newMultibase(), future()), b.auth);
      expect(other.status).toBe(404);
      expect((await patch('nobody-here', updateBody(ownerKeys))).status).toBe(404);
      expect((await patch('-bad-', updateBody(ownerKeys))).status).toBe(400);
    });
  });
});

describe('rate limit of the DID routes (contract §8: 60/min public, 600/min with an API key)', () => {
  it('defaults are the contract §8 numbers', () => {
    const limits = loadConfig({}).rateLimits;
    expect([limits.didPublicPerMin, limits.didApiKeyPerMin]).toEqual([60, 600]);
  });

  it('with configured limits (RATE_LIMIT_DID_PUBLIC_PER_MIN=3, _API_KEY_=6): per IP for anonymous callers, per key and higher with an API key; resolution routes too', async () => {
    const t = await startApp({ env: { RATE_LIMIT_DID_PUBLIC_PER_MIN: '3', RATE_LIMIT_DID_API_KEY_PER_MIN: '6' } });
    try {
      const owner = await newOwner(t);
      const address = addr('rl');
      expect((await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address: address, display_name: 'RL', public_key: hubOwnerKey() } })).status).toBe(201);
      const key = (await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'rl' } })).body.key as string;
      const statuses = async (url: string, n: number, headers: Record<string, string> = {}, remoteAddress?: string) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await t.app.inject({ method: 'GET', url, headers, ...(remoteAddress ? { remoteAddress } : {}) })).statusCode);
        return out;
      };
      expect(await statuses(`/api/v1/hub/${address}/did`, 4)).toEqual([200, 200, 200, 429]);
      // counted before validation and lookup: a malformed address is limited too
      expect(await statuses('/api/v1/hub/-bad-/did', 1)).toEqual([429]);
      expect(await statuses(`/api/v1/hub/${address}/did`, 2, {}, '10.0.0.9')).toEqual([200, 200]);
      expect(await statuses(`/api/v1/hub/${address}/did`, 7, { 'x-api-key': key })).toEqual([200, 200, 200, 200, 200, 200, 429]);
      expect(await statuses(`/api/v1/hub/resolve/${address}`, 4, {}, '10.0.0.10')).toEqual([200, 200, 200, 429]);
      expect(await statuses(`/1.0/identifiers/did:hub:${address}`, 4, {}, '10.0.0.11')).toEqual([200, 200, 200, 429]);
    } finally {
      await t.close();
    }
  });
});
