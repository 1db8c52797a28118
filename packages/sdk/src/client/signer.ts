/**
 * Signing with the device identity key, as the client's flows take it (enrollment, activation,
 * renewal, key bindings): a {@link Signer} callback, so the key may live elsewhere (a keystore).
 */
import { bytesToHex, keyToHex } from './encoding.js';

/**
 * Ed25519 signing with the device identity key: returns the 64-byte signature as bytes or as
 * hex (either case). May be async.
 */
export type Signer = (message: Uint8Array) => Uint8Array | string | Promise<Uint8Array | string>;

/** Sign and normalise the signature to lowercase hex. */
export async function signHex(sign: Signer, message: Uint8Array): Promise<string> {
  const sig = await sign(message);
  return typeof sig === 'string' ? keyToHex(sig) : bytesToHex(sig);
}
