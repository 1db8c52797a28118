/**
 * Post-quantum 1:1 sessions (design §8.34): ML-KEM-768 through our wrapper against NIST's
 * published ACVP vectors, PQXDH (Signal, revision 3) key agreement and its KDF input, the signed PQ
 * prekey, and interop with classical clients (both ends fall back to X3DH). The Double Ratchet
 * suites of double-ratchet.test.ts also run on PQXDH sessions.
 */
import { readFileSync } from 'node:fs';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import {
  DeviceIdentity,
  MLKEM768_KEY_TYPE,
  RatchetSession,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  decodeFrame,
  ed25519PublicToX25519,
  encodeFrame,
  encodeKemPublicKey,
  headerSignatureMessage,
  hexToBytes,
  mlKem768Decapsulate,
  mlKem768Encapsulate,
  mlKem768Keygen,
  pqPrekeyFromWire,
  pqPrekeyId,
  pqPrekeySigningInput,
  pqPrekeyToWire,
  pqxdhInitiate,
  pqxdhRespond,
  utf8Decode,
  utf8Encode,
  verifyPqPrekey,
  x3dhInitiate,
} from '../src/crypto/index.js';
import { BIND, CONTEXT, blobJson, codeOf, device, peerOf, text } from './ratchet-fixtures.js';

/** Published ML-KEM-768 vectors (NIST ACVP, C2SP CCTV); each entry names its source. */
interface KemVector {
  source: string;
  ek?: string;
  dk: string;
  m?: string;
  c: string;
  k: string;
}
const vectors = JSON.parse(readFileSync(new URL('./fixtures/ml-kem-768-vectors.json', import.meta.url), 'utf8')) as Record<'acvp' | 'cctvStrcmp' | 'cctvUnlucky', KemVector>;
const hex = (s: string) => hexToBytes(s.toLowerCase());
/** The same device as an old client saved it: no PQ prekey in its identity JSON. */
function classical(d: DeviceIdentity): DeviceIdentity {
  const { pq_prekey_seed: _seed, ...old } = d.toJSON();
  return DeviceIdentity.fromJSON(old);
}

describe('ML-KEM-768 wrapper (FIPS 203) against published vectors', () => {
  it.each(['acvp', 'cctvUnlucky'] as const)('%s: encapsulation with the published m gives the published c and k', (name) => {
    const v = vectors[name];
    expect(v.source).toMatch(/github\.com\/(usnistgov\/ACVP-Server|C2SP\/CCTV)/);
    const { ciphertext, sharedSecret } = mlKem768Encapsulate(hex(v.ek!), hex(v.m!));
    expect(bytesToHex(ciphertext)).toBe(v.c.toLowerCase());
    expect(bytesToHex(sharedSecret)).toBe(v.k.toLowerCase());
  });

  it.each(['acvp', 'cctvUnlucky', 'cctvStrcmp'] as const)('%s: decapsulation of the published c gives the published k', (name) => {
    const v = vectors[name];
    expect(bytesToHex(mlKem768Decapsulate(hex(v.c), hex(v.dk)))).toBe(v.k.toLowerCase());
  });

  it('keyGen: dk = dkPKE || ek || SHA3-256(ek) || z (FIPS 203 Algorithm 16), deterministic in d || z', () => {
    const seed = new Uint8Array(64).map((_, i) => i);
    const { publicKey, secretKey } = mlKem768Keygen(seed);
    expect(publicKey).toHaveLength(1184);
    expect(secretKey).toHaveLength(2400);
    expect(secretKey.subarray(1152, 1152 + 1184)).toEqual(publicKey);
    expect(secretKey.subarray(2336, 2368)).toEqual(sha3_256(publicKey));
    expect(secretKey.subarray(2368)).toEqual(seed.subarray(32));
    expect(mlKem768Keygen(seed)).toEqual({ publicKey, secretKey });
    expect(mlKem768Keygen().publicKey).not.toEqual(publicKey);
    const { ciphertext, sharedSecret } = mlKem768Encapsulate(publicKey);
    expect(mlKem768Decapsulate(ciphertext, secretKey)).toEqual(sharedSecret);
  });

  it('a tampered ciphertext decapsulates to another secret (implicit rejection), not an error', () => {
    const v = vectors.acvp;
    const c = hex(v.c);
    c[100]! ^= 0x01;
    const k = mlKem768Decapsulate(c, hex(v.dk));
    expect(k).toHaveLength(32);
    expect(bytesToHex(k)).not.toBe(v.k.toLowerCase());
  });

  it('refuses wrong lengths and keys that fail the FIPS 203 §7.2 / §7.3 checks', () => {
    const v = vectors.acvp;
    const ek = hex(v.ek!);
    expect(codeOf(() => mlKem768Encapsulate(ek.subarray(1)))).toBe('invalid_input');
    expect(codeOf(() => mlKem768Decapsulate(new Uint8Array(1087), hex(v.dk)))).toBe('invalid_input');
    expect(codeOf(() => mlKem768Keygen(new Uint8Array(32)))).toBe('invalid_input');
    const bad = ek.slice();
    bad[0] = 0xff; // first 12-bit coefficient := 4095 >= q = 3329 (modulus check)
    bad[1]! |= 0x0f;
    expect(codeOf(() => mlKem768Encapsulate(bad))).toBe('invalid_key');
    const dk = hex(v.dk);
    dk[2336]! ^= 0x01; // the stored H(ek) no longer matches (hash check)
    expect(codeOf(() => mlKem768Decapsulate(hex(v.c), dk))).toBe('invalid_key');
  });
});

describe('signed PQ prekey (PQXDH §3.2)', () => {
  it('is an ML-KEM-768 key signed by the identity key over the pq-prekey domain and EncodeKEM, identified by its hash', () => {
    const bob = device();
    const p = bob.pqPrekey!;
    expect(p.publicKey).toHaveLength(1184);
    const encoded = encodeKemPublicKey(p.publicKey);
    expect(encoded).toHaveLength(1185);
    expect(encoded[0]).toBe(MLKEM768_KEY_TYPE);
    expect(p.keyId).toBe(bytesToHex(sha256(encoded).subarray(0, 16)));
    expect(p.keyId).toBe(pqPrekeyId(p.publicKey));
    expect(bob.sign(pqPrekeySigningInput(p.publicKey))).toEqual(p.signature); // Ed25519 is deterministic
    expect(bob.sign(encoded)).not.toEqual(p.signature); // never over the bare EncodeKEM
    expect(verifyPqPrekey(bob.identityPublicKey, p)).toBe(true);
    expect(verifyPqPrekey(device().identityPublicKey, p)).toBe(false);
    expect(verifyPqPrekey(bob.identityPublicKey, { ...p, keyId: pqPrekeyId(device().pqPrekey!.publicKey) })).toBe(false);
  });

  it('round-trips through the wire form (base64 blobs) and the identity JSON', () => {
    const bob = device();
    const wire = pqPrekeyToWire(bob.pqPrekey!);
    expect(base64ToBytes(wire.public_key)).toHaveLength(1184);
    expect(pqPrekeyFromWire(wire)).toEqual(bob.pqPrekey);
    expect(codeOf(() => pqPrekeyFromWire({ ...wire, signature: bytesToBase64(new Uint8Array(63)) }))).toBe('invalid_input');
    const json = bob.toJSON();
    expect(json.pq_prekey_seed).toMatch(/^[0-9a-f]{128}$/);
    expect(DeviceIdentity.fromJSON(JSON.stringify(bob)).pqPrekey).toEqual(bob.pqPrekey);
    const old = classical(bob);
    expect(old.pqPrekey).toBeUndefined();
    expect(old.toJSON()).not.toHaveProperty('pq_prekey_seed');
    const upgraded = old.withPqPrekey();
    expect(upgraded.identityPublicKeyHex).toBe(bob.identityPublicKeyHex);
    expect(upgraded.pqPrekey!.keyId).not.toBe(bob.pqPrekey!.keyId);
    expect(verifyPqPrekey(bob.identityPublicKey, upgraded.pqPrekey!)).toBe(true);
  });
});

describe('PQXDH key agreement', () => {
  it('SK = HKDF-SHA256(F || DH1 || DH2 || DH3 || SS, 0^32, info naming curve, hash and KEM); AD as X3DH', () => {
    const alice = device();
    const bob = device();
    const a = pqxdhInitiate(alice, bob.identityPublicKey, bob.ephemeralPublicKey, bob.pqPrekey!, CONTEXT);
    expect(a.kemCiphertext).toHaveLength(1088);
    expect(a.pqPrekeyId).toBe(bob.pqPrekey!.keyId);
    // Recompute Bob's side from its raw DH outputs and KEM secret with @noble/hashes directly.
    const dh1 = bob.dhWithEphemeralKey(ed25519PublicToX25519(alice.identityPublicKey));
    const dh2 = bob.dhWithIdentityKey(a.ephemeralPublicKey);
    const dh3 = bob.dhWithEphemeralKey(a.ephemeralPublicKey);
    const ss = bob.pqDecapsulate(a.pqPrekeyId, a.kemCiphertext);
    const ikm = new Uint8Array([...new Uint8Array(32).fill(0xff), ...dh1, ...dh2, ...dh3, ...ss]);
    const expected = hkdf(sha256, ikm, new Uint8Array(32), utf8Encode('Parley_PQXDH_CURVE25519_SHA-256_ML-KEM-768'), 32);
    expect(bytesToHex(a.sharedKey)).toBe(bytesToHex(expected));
    const b = pqxdhRespond(bob, alice.identityPublicKey, a.ephemeralPublicKey, a.kemCiphertext, a.pqPrekeyId, CONTEXT);
    expect(b.sharedKey).toEqual(a.sharedKey);
    expect(b.associatedData).toEqual(a.associatedData);
    expect(a.associatedData).toEqual(x3dhInitiate(alice, bob.identityPublicKey, bob.ephemeralPublicKey, CONTEXT).associatedData);
    // without the KEM secret (the X3DH KDF) the same DH outputs give another key
    const classicalIkm = ikm.subarray(0, 32 + 96);
    expect(bytesToHex(hkdf(sha256, classicalIkm, new Uint8Array(32), utf8Encode('Parley_X3DH_X25519_SHA256_v1'), 32))).not.toBe(bytesToHex(a.sharedKey));
  });

  it('the initiator refuses a PQ prekey the responder did not sign (PQXDH §3.3)', () => {
    const alice = device();
    const bob = device();
    const mallory = device();
    const swapped = { ...mallory.pqPrekey! }; // Mallory's key and signature, offered as Bob's
    expect(codeOf(() => pqxdhInitiate(alice, bob.identityPublicKey, bob.ephemeralPublicKey, swapped, CONTEXT))).toBe('bad_signature');
    const sig = bob.pqPrekey!.signature.slice();
    sig[0]! ^= 0x01;
    expect(codeOf(() => pqxdhInitiate(alice, bob.identityPublicKey, bob.ephemeralPublicKey, { ...bob.pqPrekey!, signature: sig }, CONTEXT))).toBe('bad_signature');
    expect(codeOf(() => RatchetSession.initiate(alice, peerOf(bob), { ...BIND, pqPrekey: swapped }))).toBe('bad_signature');
  });
});

describe('PQXDH sessions and classical interop', () => {
  it('a hybrid pair agrees with PQXDH: the initial header carries the KEM ciphertext until the first reply', () => {
    const aliceId = device();
    const bobId = device();
    const alice = RatchetSession.initiate(aliceId, peerOf(bobId), { ...BIND, pqPrekey: bobId.pqPrekey! });
    const first = alice.encrypt(text('hello'));
    const x = blobJson(first).header.x3dh;
    expect(x.pq).toEqual({ kem: 'ML-KEM-768', prekey_id: bobId.pqPrekey!.keyId, ciphertext: expect.stringMatching(/^[0-9a-f]{2176}$/) });
    expect(first.header_blob.length).toBeLessThan(8192);
    const { session: bob, plaintext } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND);
    expect(utf8Decode(plaintext)).toBe('hello');
    expect([alice.postQuantum, bob.postQuantum]).toEqual([true, true]);
    expect(utf8Decode(alice.decrypt(bob.encrypt(text('hi'))))).toBe('hi');
    expect(blobJson(alice.encrypt(text('later'))).header.x3dh).toBeUndefined();
    // the state says how the session was agreed, and keeps saying it
    expect(alice.toJSON().key_agreement).toBe('pqxdh');
    expect(RatchetSession.fromJSON(bob.serialize(), bobId).postQuantum).toBe(true);
  });

  it('falls back to X3DH when the responder has no PQ prekey (old client), byte-compatible with it', () => {
    const aliceId = device();
    const oldBob = classical(device());
    // the new initiator has nothing to use: plain X3DH, no pq fields, no new state fields
    const alice = RatchetSession.initiate(aliceId, peerOf(oldBob), { ...oldBob.pqPrekey ? { pqPrekey: oldBob.pqPrekey } : undefined, ...BIND });
    const first = alice.encrypt(text('classical'));
    expect(Object.keys(blobJson(first).header.x3dh).sort()).toEqual(['ephemeral_key', 'identity_key', 'signed_prekey']);
    expect(alice.toJSON()).not.toHaveProperty('key_agreement');
    const { session: bob, plaintext } = RatchetSession.respond(oldBob, first, aliceId.identityPublicKeyHex, BIND);
    expect(utf8Decode(plaintext)).toBe('classical');
    expect([alice.postQuantum, bob.postQuantum]).toEqual([false, false]);
    expect(utf8Decode(alice.decrypt(bob.encrypt(text('ok'))))).toBe('ok');
  });

  it('an old initiator (no PQ) still reaches a PQ-capable responder over X3DH', () => {
    const oldAlice = classical(device());
    const bobId = device();
    const alice = RatchetSession.initiate(oldAlice, peerOf(bobId), BIND);
    const { session: bob, plaintext } = RatchetSession.respond(bobId, alice.encrypt(text('from an old client')), oldAlice.identityPublicKeyHex, BIND);
    expect(utf8Decode(plaintext)).toBe('from an old client');
    expect(bob.postQuantum).toBe(false);
  });

  it('a PQXDH message for a PQ prekey the responder does not hold is unknown_prekey', () => {
    const aliceId = device();
    const bobId = device();
    const first = RatchetSession.initiate(aliceId, peerOf(bobId), { ...BIND, pqPrekey: bobId.pqPrekey! }).encrypt(text('x'));
    expect(codeOf(() => RatchetSession.respond(classical(bobId), first, aliceId.identityPublicKeyHex, BIND))).toBe('unknown_prekey');
    expect(codeOf(() => RatchetSession.respond(bobId.withPqPrekey(), first, aliceId.identityPublicKeyHex, BIND))).toBe('unknown_prekey');
    // another holder (e.g. a one-time PQ prekey store) can be named
    const holder = { pqDecapsulate: (id: string, ct: Uint8Array) => bobId.pqDecapsulate(id, ct) };
    expect(utf8Decode(RatchetSession.respond(classical(bobId), first, aliceId.identityPublicKeyHex, { ...BIND, pqPrekeys: holder }).plaintext)).toBe('x');
  });

  it('a tampered KEM ciphertext fails: unsigned, the signature; re-signed by the sender, the AEAD', () => {
    const aliceId = device();
    const bobId = device();
    const first = RatchetSession.initiate(aliceId, peerOf(bobId), { ...BIND, pqPrekey: bobId.pqPrekey! }).encrypt(text('x'));
    const frame = decodeFrame(first);
    const ct = frame.header.x3dh!.pq!.ciphertext;
    const flipped = (ct[0] === '0' ? '1' : '0') + ct.slice(1);
    const header = { ...frame.header, x3dh: { ...frame.header.x3dh!, pq: { ...frame.header.x3dh!.pq!, ciphertext: flipped } } };
    expect(codeOf(() => RatchetSession.respond(bobId, encodeFrame({ ...frame, header }), aliceId.identityPublicKeyHex, BIND))).toBe('bad_signature');
    const resigned = { ...frame, header, signature: aliceId.sign(headerSignatureMessage(header)) };
    expect(codeOf(() => RatchetSession.respond(bobId, encodeFrame(resigned), aliceId.identityPublicKeyHex, BIND))).toBe('decrypt_failed');
    // dropping pq (a downgrade of this message to X3DH) needs the sender's signature too, and then the AEAD fails
    const { pq: _pq, ...x3dh } = frame.header.x3dh!;
    const downgraded = { ...frame.header, x3dh };
    expect(codeOf(() => RatchetSession.respond(bobId, encodeFrame({ ...frame, header: downgraded }), aliceId.identityPublicKeyHex, BIND))).toBe('bad_signature');
    const downgradedSigned = { ...frame, header: downgraded, signature: aliceId.sign(headerSignatureMessage(downgraded)) };
    expect(codeOf(() => RatchetSession.respond(bobId, encodeFrame(downgradedSigned), aliceId.identityPublicKeyHex, BIND))).toBe('decrypt_failed');
    expect(utf8Decode(RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND).plaintext)).toBe('x');
  });
});
