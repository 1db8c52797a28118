/**
 * The crypto providers: node:crypto (native) and @noble (fallback).
 *
 * - Known-answer vectors on BOTH providers: RFC 8032 §7.1 Ed25519 TEST 1-3, RFC 7748 §5.2 and
 *   §6.1 X25519, RFC 8439 §2.8.2 ChaCha20-Poly1305, draft-irtf-cfrg-xchacha §A.3.1
 *   XChaCha20-Poly1305, RFC 4231 HMAC-SHA256, RFC 5869 HKDF-SHA256; plus random inputs on which
 *   the two must agree byte for byte.
 * - Strict Ed25519 verification (`zip215: false`) stays the same: non-canonical and small-order
 *   public keys, S >= L, tampered signatures are refused by both.
 * - Cross-implementation: a Double Ratchet session whose two ends run on different providers
 *   (both directions, out of order, tampering still detected), and the same for an MLS group.
 *
 * The provider is switched with useCryptoProvider, which is per process: vitest runs every test
 * file in its own fork, so nothing leaks into other files.
 */
import * as nodeCrypto from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CryptoError,
  DeviceIdentity,
  RatchetSession,
  aeadOpen,
  aeadSeal,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  chacha20poly1305Decrypt,
  chacha20poly1305Encrypt,
  cryptoProvider,
  ed25519Keygen,
  ed25519PublicKey,
  ed25519PublicToX25519,
  ed25519SecretToX25519,
  ed25519Sign,
  ed25519Verify,
  hexToBytes,
  hkdfSha256,
  hmacSha256,
  randomBytes,
  useCryptoProvider,
  utf8Decode,
  utf8Encode,
  wipe,
  x25519DH,
  x25519Keygen,
  x25519PublicKey,
  xchacha20poly1305Decrypt,
  xchacha20poly1305Encrypt,
  type WireMessage,
} from '../src/crypto/index.js';
import { MlsClient } from '../src/mls/index.js';
import { MLS_CIPHERSUITE, MLS_HYBRID_CIPHERSUITE } from '../src/mls/ciphersuites.js';
import { createNodeBackend, type NodeCryptoModule } from '../src/crypto/backend-node.js';
import { BIND } from './ratchet-fixtures.js';

const PROVIDERS = ['node', 'noble'] as const;
type Provider = (typeof PROVIDERS)[number];
const hex = bytesToHex;
const h = (s: string) => hexToBytes(s);
const range = (from: number, to: number) => Uint8Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Run `f` on the given provider, then return to the default (native on Node). */
function on<T>(provider: Provider, f: () => T): T {
  useCryptoProvider(provider);
  try {
    return f();
  } finally {
    useCryptoProvider('node');
  }
}

afterAll(() => void useCryptoProvider('node'));

const RFC8032 = [
  {
    name: 'TEST 1',
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'TEST 2',
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'TEST 3',
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    public: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature:
      '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
];

const SUNSCREEN = utf8Encode(
  "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
);

describe('the default provider', () => {
  it('is node:crypto on Node, reported with what implements it', () => {
    const p = cryptoProvider();
    expect(p.name).toBe('node');
    expect(p.native).toBe(true);
    expect(p.implementation).toMatch(/^node:crypto/);
  });
});

describe.each(PROVIDERS)('known answers on the %s provider', (provider) => {
  it.each(RFC8032)('Ed25519 RFC 8032 §7.1 $name: public key, signature, verification', (v) => {
    on(provider, () => {
      expect(cryptoProvider().name).toBe(provider);
      const secret = h(v.secret);
      const message = h(v.message);
      expect(hex(ed25519PublicKey(secret))).toBe(v.public);
      expect(hex(ed25519Sign(message, secret))).toBe(v.signature);
      expect(ed25519Verify(h(v.signature), message, h(v.public))).toBe(true);
      const bad = h(v.signature);
      bad[63]! ^= 0x01;
      expect(ed25519Verify(bad, message, h(v.public))).toBe(false);
      expect(ed25519Verify(h(v.signature), utf8Encode('other'), h(v.public))).toBe(false);
    });
  });

  it('X25519 RFC 7748 §5.2 (two scalar multiplications, high bit of u set in the second)', () => {
    on(provider, () => {
      expect(
        hex(
          x25519DH(
            h('a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4'),
            h('e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c'),
          ),
        ),
      ).toBe('c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552');
      expect(
        hex(
          x25519DH(
            h('4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d'),
            h('e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493'),
          ),
        ),
      ).toBe('95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957');
    });
  });

  it('X25519 RFC 7748 §6.1 (key pairs and the shared secret)', () => {
    on(provider, () => {
      const alice = h('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a');
      const bob = h('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb');
      expect(hex(x25519PublicKey(alice))).toBe('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
      expect(hex(x25519PublicKey(bob))).toBe('de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
      const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
      expect(hex(x25519DH(alice, x25519PublicKey(bob)))).toBe(shared);
      expect(hex(x25519DH(bob, x25519PublicKey(alice)))).toBe(shared);
    });
  });

  it('X25519 refuses a low-order peer key (all-zero output) with invalid_key', () => {
    on(provider, () => {
      const { secretKey } = x25519Keygen();
      for (const low of [new Uint8Array(32), Uint8Array.of(1, ...new Uint8Array(31))]) {
        expect(() => x25519DH(secretKey, low)).toThrow(expect.objectContaining({ code: 'invalid_key' }) as Error);
      }
    });
  });

  it('ChaCha20-Poly1305 RFC 8439 §2.8.2', () => {
    on(provider, () => {
      const key = range(0x80, 0x9f);
      const nonce = h('070000004041424344454647');
      const aad = h('50515253c0c1c2c3c4c5c6c7');
      const expected =
        'd31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b' +
        '1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc' +
        '3ff4def08e4b7a9de576d26586cec64b6116' +
        '1ae10b594f09e26a7e902ecbd0600691';
      expect(hex(chacha20poly1305Encrypt(key, nonce, SUNSCREEN, aad))).toBe(expected);
      expect(chacha20poly1305Decrypt(key, nonce, h(expected), aad)).toEqual(SUNSCREEN);
      const bad = h(expected);
      bad[0]! ^= 1;
      expect(() => chacha20poly1305Decrypt(key, nonce, bad, aad)).toThrow(CryptoError);
    });
  });

  it('XChaCha20-Poly1305 draft-irtf-cfrg-xchacha §A.3.1', () => {
    on(provider, () => {
      const key = range(0x80, 0x9f);
      const nonce = range(0x40, 0x57);
      const aad = h('50515253c0c1c2c3c4c5c6c7');
      const expected =
        'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39' +
        'ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9' +
        '21f9664c97637da9768812f615c68b13b52e' +
        'c0875924c1c7987947deafd8780acf49';
      expect(hex(xchacha20poly1305Encrypt(key, nonce, SUNSCREEN, aad))).toBe(expected);
      const out = xchacha20poly1305Decrypt(key, nonce, h(expected), aad);
      expect(out).toEqual(SUNSCREEN);
      expect(out.constructor).toBe(Uint8Array);
      for (const [i, what] of [[0, 'ciphertext'], [expected.length / 2 - 1, 'tag']] as const) {
        const bad = h(expected);
        bad[i]! ^= 0x80;
        expect(() => xchacha20poly1305Decrypt(key, nonce, bad, aad), what).toThrow(expect.objectContaining({ code: 'decrypt_failed' }) as Error);
      }
      expect(() => xchacha20poly1305Decrypt(key, nonce, h(expected), h('50515253c0c1c2c3c4c5c6c8'))).toThrow(CryptoError);
      expect(() => xchacha20poly1305Decrypt(key, nonce, h(expected))).toThrow(CryptoError);
    });
  });

  it('HMAC-SHA256 RFC 4231 §4.3 (test case 2) and HKDF-SHA256 RFC 5869 §A.1 (test case 1)', () => {
    on(provider, () => {
      expect(hex(hmacSha256(utf8Encode('Jefe'), utf8Encode('what do ya want for nothing?')))).toBe(
        '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
      );
      expect(hex(hkdfSha256(new Uint8Array(22).fill(0x0b), range(0x00, 0x0c), range(0xf0, 0xf9), 42))).toBe(
        '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
      );
      // An info over node's 1 KiB hkdfSync limit still works (and agrees, see below).
      expect(hkdfSha256(randomBytes(32), randomBytes(32), randomBytes(2000), 64)).toHaveLength(64);
    });
  });

  it('strict Ed25519: refuses S >= L, non-canonical and small-order public keys', () => {
    on(provider, () => {
      const p = 2n ** 255n - 19n;
      const L = 2n ** 252n + 27742317777372353535851937790883648493n;
      const le = (n: bigint) => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));
      const fromLe = (b: Uint8Array) => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);
      const v = RFC8032[1]!;
      const sig = h(v.signature);
      const sPlusL = new Uint8Array(64);
      sPlusL.set(sig.subarray(0, 32));
      sPlusL.set(le(fromLe(sig.subarray(32)) + L), 32);
      expect(ed25519Verify(sPlusL, h(v.message), h(v.public))).toBe(false);
      // The identity and other small-order points, canonical and not: with R = identity and S = 0,
      // [S]B = R + [k]A holds for A = identity, which a permissive (ZIP 215) verifier accepts.
      const identity = le(1n);
      const negZero = le(1n);
      negZero[31]! |= 0x80;
      const zeroS = new Uint8Array(32);
      const forged = new Uint8Array(64);
      forged.set(identity);
      forged.set(zeroS, 32);
      for (const a of [identity, le(p + 1n), negZero, le(p - 1n), le(0n), le(p)]) {
        expect(ed25519Verify(forged, utf8Encode('any message'), a), hex(a)).toBe(false);
      }
      // Wrong lengths and a non-point never throw.
      expect(ed25519Verify(sig.subarray(1), h(v.message), h(v.public))).toBe(false);
      expect(ed25519Verify(sig, h(v.message), le(2n ** 255n - 1n))).toBe(false);
    });
  });
});

describe('node and noble agree byte for byte on random inputs', () => {
  it('Ed25519 public keys and signatures, X25519 public keys and DH, AEADs', () => {
    for (let i = 0; i < 40; i++) {
      const seed = randomBytes(32);
      const msg = randomBytes(i * 7);
      const xa = randomBytes(32);
      const xb = randomBytes(32);
      const key = randomBytes(32);
      const nonce = randomBytes(24);
      const aad = i % 3 === 0 ? undefined : randomBytes(i);
      const run = () => {
        const pub = ed25519PublicKey(seed);
        const sig = ed25519Sign(msg, seed);
        return {
          pub: hex(pub),
          sig: hex(sig),
          ok: ed25519Verify(sig, msg, pub),
          xpub: hex(x25519PublicKey(xa)),
          dh: hex(x25519DH(xa, x25519PublicKey(xb))),
          conv: hex(x25519DH(ed25519SecretToX25519(seed), x25519PublicKey(xb))),
          convPub: hex(x25519DH(xb, ed25519PublicToX25519(pub))),
          x: hex(xchacha20poly1305Encrypt(key, nonce, msg, aad)),
          c: hex(chacha20poly1305Encrypt(key, nonce.subarray(0, 12), msg, aad)),
          hmac: hex(hmacSha256(key, msg)),
          hkdf: hex(hkdfSha256(msg, key, aad ?? new Uint8Array(0), 1 + i * 8)),
          hkdfLongInfo: hex(hkdfSha256(key, msg, new Uint8Array(1025 + i), 32)),
        };
      };
      const native = on('node', run);
      expect(native.ok).toBe(true);
      expect(native.conv).toBe(native.convPub); // a converted identity secret agrees natively
      expect(on('noble', run)).toEqual(native);
    }
  });

  it('keys made by one provider work on the other; sealed boxes open across', () => {
    for (const [a, b] of [['node', 'noble'], ['noble', 'node']] as const) {
      const ed = on(a, () => ed25519Keygen());
      const x1 = on(a, () => x25519Keygen());
      const x2 = on(b, () => x25519Keygen());
      expect(on(b, () => hex(ed25519PublicKey(ed.secretKey)))).toBe(hex(ed.publicKey));
      expect(on(b, () => hex(x25519PublicKey(x1.secretKey)))).toBe(hex(x1.publicKey));
      const sig = on(a, () => ed25519Sign(utf8Encode('hi'), ed.secretKey));
      expect(on(b, () => ed25519Verify(sig, utf8Encode('hi'), ed.publicKey))).toBe(true);
      expect(on(a, () => hex(x25519DH(x1.secretKey, x2.publicKey)))).toBe(on(b, () => hex(x25519DH(x2.secretKey, x1.publicKey))));
      const key = randomBytes(32);
      const box = on(a, () => aeadSeal(key, utf8Encode('across'), utf8Encode('ad')));
      expect(utf8Decode(on(b, () => aeadOpen(key, box, utf8Encode('ad'))))).toBe('across');
    }
  });

  it('a cached native key follows its bytes: a changed or wiped array is never served a stale key', () => {
    const a = ed25519Keygen();
    const b = ed25519Keygen();
    const msg = utf8Encode('m');
    const secret = a.secretKey.slice();
    expect(ed25519Verify(ed25519Sign(msg, secret), msg, a.publicKey)).toBe(true);
    secret.set(b.secretKey);
    expect(ed25519Verify(ed25519Sign(msg, secret), msg, b.publicKey)).toBe(true);
    wipe(secret);
    expect(hex(ed25519PublicKey(secret))).toBe(on('noble', () => hex(ed25519PublicKey(new Uint8Array(32)))));
    const x = x25519Keygen();
    const peer = x25519Keygen();
    const xs = x.secretKey.slice();
    const before = hex(x25519DH(xs, peer.publicKey));
    xs[0]! ^= 0x40;
    expect(hex(x25519DH(xs, peer.publicKey))).not.toBe(before);
    expect(hex(x25519DH(xs, peer.publicKey))).toBe(on('noble', () => hex(x25519DH(xs, peer.publicKey))));
  });
});

describe('the node backend on a Node that refuses a private JWK with a placeholder x', () => {
  it('goes over to PKCS#8 DER and still gives the RFC 8032 / RFC 7748 answers', () => {
    let refused = 0;
    const strict = {
      ...nodeCrypto,
      createPrivateKey(input: Parameters<NodeCryptoModule['createPrivateKey']>[0]) {
        if (input.format === 'jwk') {
          refused++;
          throw new Error('JWK "x" does not match "d"');
        }
        return nodeCrypto.createPrivateKey(input as Parameters<typeof nodeCrypto.createPrivateKey>[0]);
      },
    } as unknown as NodeCryptoModule;
    const b = createNodeBackend(strict);
    const v = RFC8032[2]!;
    expect(hex(b.ed25519Sign(h(v.message), h(v.secret)))).toBe(v.signature);
    expect(hex(b.ed25519PublicKey(h(RFC8032[1]!.secret)))).toBe(RFC8032[1]!.public);
    expect(hex(b.x25519PublicKey(h('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a')))).toBe(
      '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
    );
    expect(refused).toBe(1); // tried once, then DER only
  });
});

describe('a Double Ratchet session across providers', () => {
  function tampered(wire: WireMessage): WireMessage {
    const ct = base64ToBytes(wire.ciphertext);
    ct[0]! ^= 1;
    return { header_blob: wire.header_blob, ciphertext: bytesToBase64(ct) };
  }

  it.each([
    ['node', 'noble'],
    ['noble', 'node'],
  ] as const)('initiator on %s, responder on %s: both directions, out of order, tampering refused', (pa, pb) => {
    const aliceId = on(pa, () => DeviceIdentity.generate(randomUUID()));
    const bobId = on(pb, () => DeviceIdentity.generate(randomUUID()));
    const alice = on(pa, () => RatchetSession.initiate(aliceId, { device_id: bobId.deviceId!, ...bobId.publicKeys }, BIND));
    const first = on(pa, () => alice.encrypt(utf8Encode('hello bob')));
    const { session: bob, plaintext } = on(pb, () => RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND));
    expect(utf8Decode(plaintext)).toBe('hello bob');
    const A = (f: () => WireMessage) => on(pa, f);
    const B = (f: () => WireMessage) => on(pb, f);
    for (let round = 0; round < 3; round++) {
      // Bob → Alice, three messages delivered 3, 1, 2; Alice → Bob, two in order.
      const fromBob = [0, 1, 2].map((i) => B(() => bob.encrypt(utf8Encode(`b${round}.${i}`))));
      expect(on(pa, () => codeOf(() => alice.decrypt(tampered(fromBob[2]!))))).toBe('decrypt_failed');
      for (const i of [2, 0, 1]) expect(utf8Decode(on(pa, () => alice.decrypt(fromBob[i]!)))).toBe(`b${round}.${i}`);
      expect(on(pa, () => codeOf(() => alice.decrypt(fromBob[0]!)))).toBe('replay');
      const fromAlice = [0, 1].map((i) => A(() => alice.encrypt(utf8Encode(`a${round}.${i}`))));
      expect(on(pb, () => codeOf(() => bob.decrypt(tampered(fromAlice[1]!))))).toBe('decrypt_failed');
      for (const i of [1, 0]) expect(utf8Decode(on(pb, () => bob.decrypt(fromAlice[i]!)))).toBe(`a${round}.${i}`);
    }
    // A saved session resumes on the other provider.
    const bobAgain = on(pa, () => RatchetSession.fromJSON(bob.serialize(), bobId));
    const last = A(() => alice.encrypt(utf8Encode('after restore')));
    expect(utf8Decode(on(pa, () => bobAgain.decrypt(last)))).toBe('after restore');
  });
});

function codeOf(f: () => unknown): string {
  try {
    f();
    return 'none';
  } catch (e) {
    return e instanceof CryptoError ? e.code : `other: ${(e as Error).message}`;
  }
}

describe('MLS across providers (parleyMlsCryptoProvider: ts-mls on native Ed25519, ChaCha20-Poly1305, HMAC/HKDF)', () => {
  const member = (deviceId: string) => MlsClient.create({ deviceId });

  it.each([MLS_CIPHERSUITE, MLS_HYBRID_CIPHERSUITE])('a group of %s built on one provider carries messages made on either, and refuses a tampered one', async (ciphersuite) => {
    for (const [build, other] of [['node', 'noble'], ['noble', 'node']] as const) {
      useCryptoProvider(build);
      const alice = await member(`alice-${build}`);
      const bob = await member(`bob-${build}`);
      await alice.createGroup('g', { ciphersuite });
      const [kp] = await bob.generateKeyPackages(1, ciphersuite);
      const { welcome } = await alice.addMembers('g', [kp!]);
      await bob.joinFromWelcome(welcome);
      for (const [send, receive] of [[build, other], [other, build], [other, other]] as const) {
        for (const [from, to] of [[alice, bob], [bob, alice]] as const) {
          useCryptoProvider(send);
          const text = `${send}→${receive}`;
          const ct = await from.encrypt('g', utf8Encode(text));
          useCryptoProvider(receive);
          const bad = ct.slice();
          bad[bad.length - 1]! ^= 1;
          await expect(to.processMessage('g', bad)).rejects.toThrow();
          const got = await to.processMessage('g', ct);
          expect(got.kind).toBe('application');
          if (got.kind === 'application') expect(utf8Decode(got.plaintext)).toBe(text);
        }
      }
    }
    useCryptoProvider('node');
  });
});
