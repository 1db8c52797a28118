/** Minimal types for http_ece 1.2 (RFC 8188 encrypted content-encoding; push tests decrypt Web Push bodies with it; it ships none). */
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';

  interface EceParams {
    version: 'aes128gcm' | 'aesgcm';
    /** The receiver's key pair (RFC 8291 §3.4: the user agent's ECDH key). */
    privateKey?: ECDH;
    /** base64url of the authentication secret (RFC 8291 §3.2). */
    authSecret?: string;
  }

  const ece: { decrypt(buffer: Buffer, params: EceParams): Buffer };
  export default ece;
}
