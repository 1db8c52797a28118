/**
 * Small, dependency-free encoders used by the client (browser and Node): lowercase hex for keys
 * and signatures (design §7), UTF-8, and base64url JSON of a JWT payload.
 */

const HEX = '0123456789abcdef';

/** Bytes to lowercase hex (design §7: keys and signatures are lowercase hex on the wire). */
export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b >> 4]! + HEX[b & 15]!;
  return out;
}

/**
 * Hex (either case, even length) to bytes.
 * @throws TypeError on odd length or a non-hex character.
 */
export function hexToBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError('expected an even-length hex string');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** UTF-8 encoding of a string. */
export function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** A key given as hex or raw bytes, as lowercase hex. */
export function keyToHex(key: string | Uint8Array): string {
  return typeof key === 'string' ? bytesToHex(hexToBytes(key)) : bytesToHex(key);
}

/**
 * The `exp` claim of a JWT (seconds since the epoch) as a Date, or undefined when the token is
 * not a JWT or has no numeric `exp`. The signature is NOT verified (client-side scheduling only).
 */
export function jwtExpiry(token: string): Date | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '=');
    const bin = atob(b64);
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { exp?: unknown };
    return typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : undefined;
  } catch {
    return undefined;
  }
}
