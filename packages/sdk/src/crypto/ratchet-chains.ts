/**
 * The chain steps of the Double Ratchet ("The Double Ratchet Algorithm", Signal, rev. 1): KDF_RK and
 * KDF_CK with the recommended algorithms of §5.2, and the body of RatchetDecrypt (§3.5) —
 * TrySkippedMessageKeys, SkipMessageKeys (bounded by MAX_SKIP and the total cap) and DHRatchet —
 * on a state copy the session commits only on success (`double-ratchet.ts`).
 */
import { headerSigningBytes, type Frame } from './frame.js';
import {
  CryptoError,
  KEY_BYTES,
  XCHACHA_NONCE_BYTES,
  bytesToHex,
  concatBytes,
  hexToBytes,
  hkdfSha256,
  hmacSha256,
  utf8Encode,
  wipe,
  x25519DH,
  x25519Keygen,
  xchacha20poly1305Decrypt,
} from './primitives.js';
import { RETIRED_RATCHET_KEYS, skippedKey, type RatchetState } from './ratchet-state.js';

/** HKDF info of KDF_RK: the application-specific byte sequence of Double Ratchet §5.2. */
export const KDF_RK_INFO = utf8Encode('Parley_DoubleRatchet_RootChain_v1');
const MESSAGE_KEY_CONSTANT = Uint8Array.of(0x01);
const CHAIN_KEY_CONSTANT = Uint8Array.of(0x02);

/**
 * KDF_RK (Double Ratchet §5.2): HKDF-SHA256(salt = rk, ikm = dh_out, info = KDF_RK_INFO), 64 bytes
 * → [new root key, new chain key].
 */
export function kdfRk(rootKey: Uint8Array, dhOutput: Uint8Array): [rootKey: Uint8Array, chainKey: Uint8Array] {
  const out = hkdfSha256(dhOutput, rootKey, KDF_RK_INFO, 64);
  const result: [Uint8Array, Uint8Array] = [out.slice(0, 32), out.slice(32, 64)];
  wipe(out);
  return result;
}

/** KDF_CK (Double Ratchet §5.2): [HMAC-SHA256(ck, 0x02) as next chain key, HMAC-SHA256(ck, 0x01) as message key]. */
export function kdfCk(chainKey: Uint8Array): [chainKey: Uint8Array, messageKey: Uint8Array] {
  return [hmacSha256(chainKey, CHAIN_KEY_CONSTANT), hmacSha256(chainKey, MESSAGE_KEY_CONSTANT)];
}

/** The body of RatchetDecrypt, on a state copy `s` that the caller commits only on success. */
export function ratchetDecrypt(s: RatchetState, frame: Frame): Uint8Array {
  const { header } = frame;
  const aad = concatBytes(s.ad, headerSigningBytes(header));
  const nonce = hexToBytes(header.nonce, XCHACHA_NONCE_BYTES);

  // TrySkippedMessageKeys
  const key = skippedKey(header.ratchet_pub, header.msg_num);
  const stored = s.skipped.get(key);
  if (stored) {
    const plaintext = xchacha20poly1305Decrypt(stored, nonce, frame.ciphertext, aad);
    s.skipped.delete(key); // wiped by retire() once the caller commits
    return plaintext;
  }

  const currentDhr = s.dhr === null ? null : bytesToHex(s.dhr);
  if (header.ratchet_pub === currentDhr) {
    if (header.msg_num < s.nr) {
      throw new CryptoError('replay', 'message key already used or evicted (replayed or duplicate frame)');
    }
  } else {
    if (s.retiredRatchetKeys.includes(header.ratchet_pub)) {
      throw new CryptoError('replay', 'frame from a past receiving chain whose key is gone (replayed or evicted)');
    }
    skipMessageKeys(s, header.pn);
    dhRatchet(s, hexToBytes(header.ratchet_pub, KEY_BYTES));
  }
  skipMessageKeys(s, header.msg_num);
  if (s.ckr === null) {
    // only reachable with the initiator's initial DHr (SPK_B), which the peer never sends from
    throw new CryptoError('decrypt_failed', 'no receiving chain for this ratchet key');
  }
  const [ckr, mk] = kdfCk(s.ckr);
  try {
    const plaintext = xchacha20poly1305Decrypt(mk, nonce, frame.ciphertext, aad);
    s.ckr = ckr;
    s.nr += 1;
    return plaintext;
  } finally {
    wipe(mk);
  }
}

/** SkipMessageKeys (Double Ratchet §3.5), bounded by MAX_SKIP and the total cap. */
function skipMessageKeys(s: RatchetState, until: number): void {
  if (s.nr + s.maxSkip < until) {
    throw new CryptoError('too_many_skipped', `message ${until} would skip ${until - s.nr} keys (MAX_SKIP is ${s.maxSkip})`);
  }
  if (s.ckr === null || s.dhr === null) return;
  const dhrHex = bytesToHex(s.dhr);
  let ckr = s.ckr;
  while (s.nr < until) {
    const [nextCk, mk] = kdfCk(ckr);
    s.skipped.set(skippedKey(dhrHex, s.nr), mk);
    ckr = nextCk;
    s.nr += 1;
  }
  s.ckr = ckr;
  while (s.skipped.size > s.maxSkippedKeys) {
    const oldest = s.skipped.keys().next().value as string;
    s.skipped.delete(oldest);
  }
}

/** DHRatchet (Double Ratchet §3.5): step both chains with the peer's new ratchet public key. */
function dhRatchet(s: RatchetState, peerRatchetPub: Uint8Array): void {
  if (s.dhr !== null) {
    s.retiredRatchetKeys.push(bytesToHex(s.dhr));
    if (s.retiredRatchetKeys.length > RETIRED_RATCHET_KEYS) s.retiredRatchetKeys.shift();
  }
  s.pn = s.ns;
  s.ns = 0;
  s.nr = 0;
  s.dhr = peerRatchetPub;
  const dh1 = x25519DH(s.dhs.secretKey, s.dhr);
  [s.rk, s.ckr] = kdfRk(s.rk, dh1);
  s.dhs = x25519Keygen();
  const dh2 = x25519DH(s.dhs.secretKey, s.dhr);
  [s.rk, s.cks] = kdfRk(s.rk, dh2);
  wipe(dh1, dh2);
}
