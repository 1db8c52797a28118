/**
 * Base64 (RFC 4648 §4, standard alphabet, padded) for the MLS wire helpers and the saved MLS and
 * messenger state. Uses Node's `Buffer` when the runtime has one (encoding a saved state of tens
 * of KiB through `btoa` costs milliseconds), else `btoa`/`atob`, which browsers provide, so the
 * module has no Buffer dependency. Decoding is strict: anything that is not canonical padded
 * base64 is refused rather than silently truncated.
 */

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CHUNK = 0x8000;

/** The part of Node's `Buffer` used here. */
interface NodeBufferLike {
  from(bytes: ArrayBufferLike, offset: number, length: number): { toString(encoding: 'base64'): string };
  from(text: string, encoding: 'base64'): Uint8Array;
}

/** Node's `Buffer`, when the runtime has one (read from `globalThis`: no import, no bundler shim). */
const NodeBuffer = (globalThis as { Buffer?: NodeBufferLike }).Buffer;

export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array {
  if (typeof text !== 'string' || !BASE64_RE.test(text)) throw new TypeError('invalid base64');
  if (NodeBuffer) return new Uint8Array(NodeBuffer.from(text, 'base64'));
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8Encode(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** Strict UTF-8 decoding; returns undefined for invalid byte sequences. */
export function utf8Decode(bytes: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
