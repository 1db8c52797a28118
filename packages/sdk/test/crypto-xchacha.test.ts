/**
 * XChaCha20-Poly1305 wrapper against draft-irtf-cfrg-xchacha-03 §A.3.1 (AEAD_XChaCha20_Poly1305
 * test vector), plus the random-nonce seal/open wrapper and the design §7 derived values.
 */
import { describe, expect, it } from 'vitest';
import {
  CryptoError,
  aeadOpen,
  aeadSeal,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  ed25519Keygen,
  ed25519PublicToX25519,
  ed25519SecretToX25519,
  ed25519Verify,
  hexToBytes,
  proofOfPossession,
  utf8Encode,
  verifyProofOfPossession,
  x25519DH,
  x25519Keygen,
  x25519PublicKey,
  xchacha20poly1305Decrypt,
  xchacha20poly1305Encrypt,
} from '../src/crypto/index.js';

const range = (from: number, to: number) => Uint8Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha §A.3.1)', () => {
  const key = range(0x80, 0x9f);
  const nonce = range(0x40, 0x57);
  const aad = hexToBytes('50515253c0c1c2c3c4c5c6c7');
  const plaintext = utf8Encode(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  );
  const ciphertext =
    'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39' +
    'ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9' +
    '21f9664c97637da9768812f615c68b13b52e';
  const tag = 'c0875924c1c7987947deafd8780acf49';

  it('has the vector inputs the draft lists', () => {
    expect(bytesToHex(key)).toBe('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
    expect(bytesToHex(nonce)).toBe('404142434445464748494a4b4c4d4e4f5051525354555657');
    expect(plaintext.length).toBe(114);
  });

  it('encrypts to the expected ciphertext || tag', () => {
    const out = xchacha20poly1305Encrypt(key, nonce, plaintext, aad);
    expect(bytesToHex(out)).toBe(ciphertext + tag);
  });

  it('decrypts the expected ciphertext || tag', () => {
    const out = xchacha20poly1305Decrypt(key, nonce, hexToBytes(ciphertext + tag), aad);
    expect(out).toEqual(plaintext);
  });

  it('refuses a flipped ciphertext bit, tag bit, AAD byte or nonce byte', () => {
    const good = hexToBytes(ciphertext + tag);
    const flip = (b: Uint8Array, i: number) => {
      const c = b.slice();
      c[i]! ^= 1;
      return c;
    };
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof CryptoError && e.code === 'decrypt_failed';
      }
      return false;
    };
    expect(refused(() => xchacha20poly1305Decrypt(key, nonce, flip(good, 0), aad))).toBe(true);
    expect(refused(() => xchacha20poly1305Decrypt(key, nonce, flip(good, good.length - 1), aad))).toBe(true);
    expect(refused(() => xchacha20poly1305Decrypt(key, nonce, good, flip(aad, 3)))).toBe(true);
    expect(refused(() => xchacha20poly1305Decrypt(key, flip(nonce, 23), good, aad))).toBe(true);
    expect(refused(() => xchacha20poly1305Decrypt(key, nonce, good.subarray(0, 15), aad))).toBe(true);
  });

  it('rejects wrong key and nonce lengths', () => {
    expect(() => xchacha20poly1305Encrypt(key.subarray(1), nonce, plaintext)).toThrow(CryptoError);
    expect(() => xchacha20poly1305Encrypt(key, nonce.subarray(0, 12), plaintext)).toThrow(/24-byte/);
  });
});

describe('aeadSeal / aeadOpen', () => {
  it('draws a fresh 24-byte nonce per message and round-trips', () => {
    const key = x25519Keygen().secretKey;
    const m = utf8Encode('hello');
    const a = aeadSeal(key, m, utf8Encode('ad'));
    const b = aeadSeal(key, m, utf8Encode('ad'));
    expect(a.nonce).toHaveLength(24);
    expect(a.ciphertext).toHaveLength(m.length + 16);
    expect(bytesToHex(a.nonce)).not.toBe(bytesToHex(b.nonce));
    expect(bytesToHex(a.ciphertext)).not.toBe(bytesToHex(b.ciphertext));
    expect(aeadOpen(key, a, utf8Encode('ad'))).toEqual(m);
    expect(() => aeadOpen(key, a, utf8Encode('other'))).toThrow(CryptoError);
  });
});

describe('encodings and key conversion', () => {
  it('hex and base64 are strict', () => {
    expect(() => hexToBytes('abc')).toThrow(CryptoError);
    expect(() => hexToBytes('zz')).toThrow(CryptoError);
    expect(() => hexToBytes('00', 2)).toThrow(/2 bytes/);
    expect(bytesToBase64(utf8Encode('any carnal pleas'))).toBe('YW55IGNhcm5hbCBwbGVhcw==');
    expect(base64ToBytes('YW55IGNhcm5hbCBwbGVhcw==')).toEqual(utf8Encode('any carnal pleas'));
    expect(() => base64ToBytes('YW55IGNhcm5hbCBwbGVhcw')).toThrow(CryptoError);
    expect(() => base64ToBytes('YW55_GNh')).toThrow(CryptoError);
    const big = Uint8Array.from({ length: 100_000 }, (_, i) => i & 0xff);
    expect(base64ToBytes(bytesToBase64(big))).toEqual(big);
  });

  it('Ed25519 → X25519 conversion agrees on both halves (DH commutes)', () => {
    const ed = ed25519Keygen();
    const x = x25519Keygen();
    expect(x25519PublicKey(ed25519SecretToX25519(ed.secretKey))).toEqual(ed25519PublicToX25519(ed.publicKey));
    expect(x25519DH(ed25519SecretToX25519(ed.secretKey), x.publicKey)).toEqual(x25519DH(x.secretKey, ed25519PublicToX25519(ed.publicKey)));
  });

  it('X25519 refuses a low-order peer key', () => {
    expect(() => x25519DH(x25519Keygen().secretKey, new Uint8Array(32))).toThrow(expect.objectContaining({ code: 'invalid_key' }));
  });

  it('proof of possession is a signature over the raw identity public key', () => {
    const ed = ed25519Keygen();
    const pop = proofOfPossession(ed.secretKey);
    expect(pop).toMatch(/^[0-9a-f]{128}$/);
    expect(ed25519Verify(hexToBytes(pop), ed.publicKey, ed.publicKey)).toBe(true);
    expect(verifyProofOfPossession(bytesToHex(ed.publicKey), pop)).toBe(true);
    expect(verifyProofOfPossession(ed25519Keygen().publicKey, pop)).toBe(false);
    expect(verifyProofOfPossession('nothex', pop)).toBe(false);
  });
});
