/**
 * The SDK's `did:hub` driver for the `did-resolver` package, the DID update signer and the
 * ParleyClient DID methods, against a running server over HTTP (contract §4.10; design §8.15).
 */
import { Resolver } from 'did-resolver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { bytesToBase64, ed25519Keygen, ed25519PublicKey } from '../src/crypto/primitives.js';
import { decodePublicKeyMultibase, getResolver, publicKeyMultibase, signDidUpdate } from '../src/did/index.js';

describe('did:hub resolution with did-resolver over HTTP', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let resolver: Resolver;
  const ownerKey = ed25519Keygen();
  const address = `sdk-did-${Date.now().toString(36)}`;
  const did = `did:hub:${address}`;

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { PUBLIC_URL: 'https://parley.example.com' } });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`did-owner-${Date.now()}@example.com`) });
    await owner.call('createTenant', { body: { name: 'DID tenant' } });
    await owner.call('registerHub', { body: { hub_address: address, display_name: 'Resolvable', public_key: bytesToBase64(ownerKey.publicKey) } });
    resolver = new Resolver(getResolver({ baseUrl: t.baseUrl + '/' }));
  });
  afterAll(() => t?.close());

  it('publicKeyMultibase matches the published vector and round-trips', () => {
    const key = ed25519PublicKey(new Uint8Array(32).fill(1));
    expect(publicKeyMultibase(key)).toBe('z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX');
    expect(decodePublicKeyMultibase('z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX')).toEqual(key);
    expect(decodePublicKeyMultibase('zzz')).toBeNull();
  });

  it('a Resolver with our driver resolves a registered DID (and a DID URL with a fragment)', async () => {
    const res = await resolver.resolve(did);
    expect(res.didResolutionMetadata).toEqual({ contentType: 'application/did+ld+json' });
    expect(res.didDocument).toMatchObject({
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/ed25519-2020/v1'],
      id: did,
      verificationMethod: [{ id: `${did}#owner-key`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: publicKeyMultibase(ownerKey.publicKey) }],
      assertionMethod: [`${did}#owner-key`],
      service: [{ id: `${did}#messaging`, type: 'ParleyMessaging', serviceEndpoint: 'wss://parley.example.com/api/v1/ws' }],
    });
    expect(res.didDocumentMetadata.created).toMatch(/Z$/);
    expect((await resolver.resolve(`${did}#owner-key`)).didDocument?.id).toBe(did);
  });

  it('unknown and malformed DIDs resolve to notFound / invalidDid; other methods are not ours; a dead server is internalError', async () => {
    expect((await resolver.resolve('did:hub:nobody-here')).didResolutionMetadata.error).toBe('notFound');
    expect((await resolver.resolve('did:hub:ab')).didResolutionMetadata.error).toBe('invalidDid');
    expect((await resolver.resolve('did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX')).didResolutionMetadata.error).toBe('unsupportedDidMethod');
    const dead = new Resolver(getResolver({ baseUrl: 'http://127.0.0.1:9', fetch: () => Promise.reject(new Error('ECONNREFUSED')) }));
    const res = await dead.resolve(did);
    expect(res.didResolutionMetadata.error).toBe('internalError');
    expect(res.didDocument).toBeNull();
  });

  it('signDidUpdate + ParleyClient.updateDid add #key-2; the resolver sees it; a replay is refused', async () => {
    const newKey = ed25519Keygen().publicKey;
    const body = signDidUpdate({ add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: publicKeyMultibase(newKey) } }, ownerKey.secretKey);
    expect(body.timestamp).toEqual(expect.any(String));
    const doc = await owner.updateDid(address, body);
    expect(doc.verificationMethod?.map((m) => m.id)).toEqual([`${did}#owner-key`, `${did}#key-2`]);
    const resolved = await resolver.resolve(did);
    expect(resolved.didDocument?.verificationMethod?.[1]).toEqual({ id: `${did}#key-2`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: publicKeyMultibase(newKey) });
    await expect(owner.updateDid(address, body)).rejects.toMatchObject({ status: 409 });
    // signed by another key
    const forged = signDidUpdate({ add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: publicKeyMultibase(ed25519Keygen().publicKey) } }, ed25519Keygen().secretKey);
    await expect(owner.updateDid(address, forged)).rejects.toMatchObject({ status: 403 });
  });

  it('ParleyClient: resolveHub, getDidDocument, resolveDid (anonymous)', async () => {
    const anon = new ParleyClient({ baseUrl: t.baseUrl });
    expect((await anon.resolveHub(address)).didDocument?.id).toBe(did);
    expect((await anon.getDidDocument(address.toUpperCase())).id).toBe(did);
    expect((await anon.resolveDid(did)).didDocument?.id).toBe(did);
    const err = await anon.resolveHub('nobody-here').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParleyApiError);
    expect((err as ParleyApiError).status).toBe(404);
    await expect(anon.resolveDid('did:web:example.com')).rejects.toMatchObject({ status: 400 });
  });
});
