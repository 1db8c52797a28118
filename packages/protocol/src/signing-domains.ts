/**
 * Domain separation of everything a device identity key signs.
 *
 * A device's Ed25519 identity key signs several kinds of message. Without a tag that says what a
 * signature is for, a signature made for one purpose can be presented as another (a server that
 * chooses a token-renewal challenge could have the device sign the encoding of a PQ prekey). Every
 * message the identity key signs is therefore `domain || 0x00 || body`, with one ASCII domain per
 * purpose ({@link SIGNING_DOMAINS}), except:
 * - the enrollment proof of possession of `POST /api/v1/enroll`: a signature over the raw 32-byte
 *   identity public key, kept exactly as the wire contract defines it; no tagged message is 32 bytes long and equal
 *   to the key (every tag alone plus its 0x00 is at least 17 bytes of ASCII);
 * - MLS signatures, which carry RFC 9420's own `SignWithLabel` labels ("MLS 1.0 " + label);
 * - the A2A Agent Card JWS, whose signing input is `base64url(header) "." base64url(payload)`.
 *
 * Browser-safe: no imports.
 */

/** The purposes a device identity key signs for, each with its ASCII domain tag. */
export const SIGNING_DOMAINS = {
  /** A device-token renewal challenge, `POST /api/v1/devices/{id}/token`. */
  tokenRenewal: 'parley/v2/token-renewal',
  /** The canonical header of an X3DH + Double Ratchet frame (protocol `x3dh-dr` v2). */
  messageHeader: 'parley/v2/message-header',
  /** An X25519 signed prekey (X3DH §3.2: Sig(IK, Encode(SPK))). */
  signedPrekey: 'parley/v2/signed-prekey',
  /** An ML-KEM-768 PQ prekey (PQXDH §3.2: Sig(IK, EncodeKEM(PQPK))). */
  pqPrekey: 'parley/v2/pq-prekey',
  /** A fresh key binding: server nonce, tenant and the keys being registered or activated. */
  keyBinding: 'parley/v2/key-binding',
} as const;

/** One of {@link SIGNING_DOMAINS}' values. */
export type SigningDomain = (typeof SIGNING_DOMAINS)[keyof typeof SIGNING_DOMAINS];

/**
 * The bytes the identity key signs for `domain`: UTF-8(domain) || 0x00 || body.
 * @param domain one of {@link SIGNING_DOMAINS}.
 * @param body the purpose's own bytes (a challenge, a canonical header, an encoded key …).
 */
export function domainSeparated(domain: SigningDomain, body: Uint8Array): Uint8Array {
  const tag = utf8Bytes(domain);
  const out = new Uint8Array(tag.length + 1 + body.length);
  out.set(tag, 0);
  out[tag.length] = 0;
  out.set(body, tag.length + 1);
  return out;
}

/**
 * UTF-8 encoding of `text` (RFC 3629), for this browser-safe package that has no `TextEncoder` in
 * its library types. A lone surrogate is encoded as U+FFFD, as `TextEncoder` does.
 */
export function utf8Bytes(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return Uint8Array.from(out);
}
