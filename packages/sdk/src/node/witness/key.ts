/**
 * A witness's signing key: a 32-byte Ed25519 seed kept as 64 hex characters and a newline in a
 * file of its data directory, created (mode 0600, exclusively, fsynced) on first start. Its
 * public half is published as a C2SP tlog-cosignature verifier key (type 0x04).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { open, readFile, stat } from 'node:fs/promises';

/** The witness's Ed25519 key pair: `secretKey` the 32-byte seed, `publicKey` 32 bytes. */
export interface WitnessKey {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

const SEED = /^[0-9a-f]{64}$/;

/**
 * Read the seed of `file`, or create the file with a random seed when it does not exist.
 * @param warn called when the file is readable by others than its owner
 * @throws Error when the file holds anything but 64 lowercase hex characters (after trimming): a
 *   witness key is never replaced silently, its vkey is what the logs' clients trust
 */
export async function loadWitnessKey(file: string, warn: (line: string) => void = () => undefined): Promise<WitnessKey> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text === undefined) {
    const secretKey = ed25519.utils.randomSecretKey();
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(`${Buffer.from(secretKey).toString('hex')}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
  }
  const seed = text.trim();
  if (!SEED.test(seed)) throw new Error(`${file} does not hold a witness key (64 hex characters)`);
  if (((await stat(file)).mode & 0o077) !== 0) warn(`warning: ${file} is readable by other users (chmod 600 it)`);
  const secretKey = new Uint8Array(Buffer.from(seed, 'hex'));
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}
