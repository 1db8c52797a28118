/**
 * Signed A2A Agent Cards anchored in `did:hub` (A2A 1.0 "Agent Card Signing"): what the agent that
 * signs a card, the service that stores it and any client that verifies it must compute alike.
 *
 * - A signature is a JWS (RFC 7515) in the card's `signatures` array as `{protected, signature,
 *   header?}` with a detached payload: the signing input is
 *   `ASCII(protected || "." || BASE64URL(UTF-8(JCS(card without "signatures"))))`, JCS being the
 *   RFC 8785 JSON Canonicalization Scheme.
 * - The protected header is `{"alg":"EdDSA","kid":"<did:hub DID URL>","typ":"JOSE"}` (RFC 8037
 *   EdDSA over Ed25519); `kid` names a verification method of the signer's `did:hub` document
 *   that is listed in its `assertionMethod` (W3C DID Core §5.3.2).
 * - A card verifies when at least one signature verifies; a `crit` header or an unencoded payload
 *   (`b64: false`, RFC 7797) is refused.
 *
 * The package depends on TypeBox alone, so the caller brings JCS, Ed25519 verification and the
 * `publicKeyMultibase` decoder ({@link CardCrypto}): the server passes Node's, the SDK its own.
 */
import { utf8Bytes } from './signing-domains.js';

/** `type` of the DID document service entry that points at a hub identity's Agent Card. */
export const A2A_AGENT_CARD_SERVICE_TYPE = 'A2AAgentCard';
/** Fragment of that service entry's id (`did:hub:<address>#a2a-agent-card`). */
export const A2A_AGENT_CARD_SERVICE_FRAGMENT = 'a2a-agent-card';
/** The A2A protocol version the cards announce. */
export const A2A_PROTOCOL_VERSION = '1.0';
/** Fragment of a `did:hub` document's owner key (the registration key): `did:hub:<address>#owner-key`. */
export const OWNER_KEY_FRAGMENT = 'owner-key';
/** JWS `alg` of card signatures (RFC 8037). */
export const AGENT_CARD_JWS_ALG = 'EdDSA';
/** Largest card the service stores, in bytes of its JSON. */
export const AGENT_CARD_MAX_BYTES = 64 * 1024;

/** One entry of an Agent Card's `signatures` (A2A 1.0 `AgentCardSignature`, JWS JSON form). */
export interface AgentCardJws {
  /** base64url of the protected header JSON. */
  protected: string;
  /** base64url of the 64-byte Ed25519 signature. */
  signature: string;
  /** Unprotected header parameters (not covered by the signature). */
  header?: Record<string, unknown>;
}

/** The decoded protected header of a card signature. */
export interface AgentCardJwsHeader {
  alg: string;
  kid: string;
  typ?: string;
  [k: string]: unknown;
}

/** The part of a DID document a card check reads (W3C DID Core). */
export interface CardDidDocument {
  id: string;
  verificationMethod?: readonly { id: string; type: string; controller?: string; publicKeyMultibase?: string }[];
  assertionMethod?: readonly (string | { id: string })[];
}

/** Cryptography the caller brings to {@link checkAgentCardSignatures}. */
export interface CardCrypto {
  /** RFC 8785 JCS of a JSON value (undefined for a value JSON cannot represent). */
  canonicalize(value: unknown): string | undefined;
  /** Ed25519 (RFC 8032) verification of `signature` (64 bytes) over `message` by `publicKey` (32 bytes). */
  verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
  /** The raw 32-byte key of a `z` + base58btc(0xed 0x01 ‖ key) value, or null. */
  decodePublicKeyMultibase(value: string): Uint8Array | null;
}

/**
 * Why a card is refused:
 * - `not_a_card`: not a JSON object, or not representable in JCS;
 * - `unsigned`: no `signatures`, or an empty array;
 * - `malformed_signature`: an entry without base64url `protected`/`signature`, a header that is not
 *   JSON, or without `kid`;
 * - `unsupported_header`: `alg` other than EdDSA, a `crit` parameter, or `b64: false`;
 * - `wrong_did`: `kid` is not a DID URL of the expected `did:hub` document;
 * - `unknown_key`: `kid` names no Ed25519 assertion method of the document;
 * - `bad_signature`: the signature does not verify (tampered card, or signed by another key);
 * - `identity_unavailable`: the DID did not resolve, or the identity is deactivated (suspended);
 * - `tier_too_low`: the identity's trust tier is below the caller's minimum.
 */
export type AgentCardRefusal =
  | 'not_a_card'
  | 'unsigned'
  | 'malformed_signature'
  | 'unsupported_header'
  | 'wrong_did'
  | 'unknown_key'
  | 'bad_signature'
  | 'identity_unavailable'
  | 'tier_too_low';

/** The outcome of a card check: the verifying `kid`, or the reason of the refusal with a sentence. */
export type AgentCardCheck = { ok: true; kid: string } | { ok: false; reason: AgentCardRefusal; detail: string };

const B64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64URL = /^[A-Za-z0-9_-]*$/;

/** The string of UTF-8 bytes, or null when they are not valid UTF-8. */
function utf8Text(bytes: Uint8Array): string | null {
  try {
    return decodeURIComponent(Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
  } catch {
    return null;
  }
}

/** base64url without padding (RFC 4648 §5) of bytes. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4;
    for (let k = 0; k < chars; k++) out += B64URL_ALPHABET[(n >> (18 - 6 * k)) & 63];
  }
  return out;
}

/** Bytes of an unpadded base64url string, or null when it is not one (wrong characters or length, non-zero trailing bits). */
export function base64UrlDecode(text: string): Uint8Array | null {
  if (!B64URL.test(text) || text.length % 4 === 1) return null;
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const ch of text) {
    acc = ((acc << 6) | B64URL_ALPHABET.indexOf(ch)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return Uint8Array.from(out);
}

/** The card without its `signatures` member (the signed content). */
export function unsignedCard(card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _signatures, ...rest } = card;
  return rest;
}

/**
 * The JWS signing input of a card signature: `protected || "." || BASE64URL(UTF-8(JCS(card
 * without "signatures")))`, as bytes. @returns null when the card is not representable in JCS.
 */
export function agentCardSigningInput(card: Record<string, unknown>, protectedHeader: string, canonicalize: CardCrypto['canonicalize']): Uint8Array | null {
  const payload = canonicalize(unsignedCard(card));
  if (payload === undefined) return null;
  return utf8Bytes(`${protectedHeader}.${base64UrlEncode(utf8Bytes(payload))}`);
}

/** The protected header of a card signature, base64url-encoded: `{"alg":"EdDSA","kid":…,"typ":"JOSE"}`. */
export function agentCardProtectedHeader(kid: string): string {
  return base64UrlEncode(utf8Bytes(JSON.stringify({ alg: AGENT_CARD_JWS_ALG, kid, typ: 'JOSE' })));
}

const refuse = (reason: AgentCardRefusal, detail: string): AgentCardCheck => ({ ok: false, reason, detail });

function decodeHeader(protectedHeader: string): AgentCardJwsHeader | null {
  const bytes = base64UrlDecode(protectedHeader);
  const text = bytes && utf8Text(bytes);
  if (!text) return null;
  try {
    const header = JSON.parse(text) as unknown;
    if (!header || typeof header !== 'object' || Array.isArray(header)) return null;
    const h = header as AgentCardJwsHeader;
    return typeof h.kid === 'string' && typeof h.alg === 'string' ? h : null;
  } catch {
    return null;
  }
}

/** The Ed25519 key of assertion method `kid` in `doc`, or null. */
function assertionKey(doc: CardDidDocument, kid: string, crypto: CardCrypto): Uint8Array | null {
  const asserted = (doc.assertionMethod ?? []).some((m) => (typeof m === 'string' ? m : m.id) === kid);
  const method = doc.verificationMethod?.find((m) => m.id === kid);
  if (!asserted || !method || method.type !== 'Ed25519VerificationKey2020' || typeof method.publicKeyMultibase !== 'string') return null;
  return crypto.decodePublicKeyMultibase(method.publicKeyMultibase);
}

function checkOne(card: Record<string, unknown>, entry: unknown, doc: CardDidDocument, crypto: CardCrypto): AgentCardCheck {
  const jws = entry as Partial<AgentCardJws> | null;
  if (!jws || typeof jws !== 'object' || typeof jws.protected !== 'string' || typeof jws.signature !== 'string') {
    return refuse('malformed_signature', 'a signature entry must have base64url "protected" and "signature" strings');
  }
  const header = decodeHeader(jws.protected);
  if (!header) return refuse('malformed_signature', 'the protected header is not base64url JSON with "alg" and "kid"');
  if (header.alg !== AGENT_CARD_JWS_ALG) return refuse('unsupported_header', `alg must be ${AGENT_CARD_JWS_ALG}, not ${header.alg}`);
  if (header.crit !== undefined || header.b64 === false) return refuse('unsupported_header', 'the protected header must not carry "crit" or "b64": false');
  if (!header.kid.startsWith(`${doc.id}#`)) return refuse('wrong_did', `kid ${header.kid} is not a verification method of ${doc.id}`);
  const key = assertionKey(doc, header.kid, crypto);
  if (!key) return refuse('unknown_key', `kid ${header.kid} is not an Ed25519 assertion method of the DID document`);
  const signature = base64UrlDecode(jws.signature);
  if (!signature || signature.length !== 64) return refuse('malformed_signature', 'the signature is not 64 bytes of base64url');
  const input = agentCardSigningInput(card, jws.protected, crypto.canonicalize);
  if (!input) return refuse('not_a_card', 'the card is not representable as RFC 8785 canonical JSON');
  if (!crypto.verifyEd25519(signature, input, key)) return refuse('bad_signature', `the signature by ${header.kid} does not verify over the canonical card (tampered, or signed by another key)`);
  return { ok: true, kid: header.kid };
}

/**
 * Check a card's signatures against the signer's DID document (see the file comment). The card
 * verifies when one signature verifies; otherwise the refusal of its first signature is answered.
 */
export function checkAgentCardSignatures(card: unknown, doc: CardDidDocument, crypto: CardCrypto): AgentCardCheck {
  if (!card || typeof card !== 'object' || Array.isArray(card)) return refuse('not_a_card', 'an Agent Card is a JSON object');
  const c = card as Record<string, unknown>;
  const signatures = c.signatures;
  if (!Array.isArray(signatures) || signatures.length === 0) return refuse('unsigned', 'the card has no signatures');
  let first: AgentCardCheck | undefined;
  for (const entry of signatures) {
    const result = checkOne(c, entry, doc, crypto);
    if (result.ok) return result;
    first ??= result;
  }
  return first!;
}
