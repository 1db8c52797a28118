/**
 * Encryption at rest for small server-held secrets the service must read back (a webhook signing
 * secret cannot be hashed: the service signs with it). AES-256-GCM from node:crypto, nothing
 * hand-made: a random 96-bit IV per value, the 128-bit tag checked on every open, and an optional
 * `context` bound as additional authenticated data (e.g. the owning row's id, so a sealed value
 * copied to another row does not open).
 *
 * Stored form (version 1): `v1:<base64 iv>:<base64 ciphertext || tag>`.
 *
 * The key (32 bytes) comes from `SECRETS_KEY` (base64) or, when unset, from a key generated once in
 * `DATA_DIR/secrets-key` (see {@link loadSecretsKey}). Several instances sharing one PostgreSQL
 * database must all be given the same `SECRETS_KEY`.
 *
 * Rotation is a keyring: the current key seals, the current and the previous keys
 * (`SECRETS_KEY_PREVIOUS`) open. The format carries no key id; opening tries each key in turn
 * (GCM authentication tells a wrong key apart; a ring holds one to three keys), and
 * {@link SecretBox.reseal} rewrites a value sealed under a previous key under the current one.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Bytes of an AES-256 key. */
export const SECRETS_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'v1:';
const ALGORITHM = 'aes-256-gcm';

/** Thrown by {@link SecretBox.open} for a value that is malformed, tampered with, or sealed under another key or context. */
export class SecretBoxError extends Error {}

/**
 * Decode a base64 key and check it is exactly {@link SECRETS_KEY_BYTES} bytes.
 * @throws RangeError when `b64` is not canonical base64 of 32 bytes.
 */
export function decodeSecretsKey(b64: string): Buffer {
  const key = Buffer.from(b64, 'base64');
  const canonical = key.toString('base64').replace(/=+$/, '') === b64.trim().replace(/=+$/, '');
  if (key.length !== SECRETS_KEY_BYTES || !canonical) throw new RangeError(`the key must be base64 of ${SECRETS_KEY_BYTES} bytes`);
  return key;
}

/**
 * The key to seal secrets with: `configured` (base64 of 32 bytes, from `SECRETS_KEY`) when given;
 * otherwise the key in `DATA_DIR/secrets-key`, generated on first use (mode 0600, created
 * atomically: the first writer wins, every other process reads the winner's key).
 * @throws RangeError when `configured` or the key file does not hold 32 base64 bytes.
 */
export function loadSecretsKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return decodeSecretsKey(configured);
  const file = path.join(dataDir, 'secrets-key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(tmp, `${randomBytes(SECRETS_KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
    try {
      fs.linkSync(tmp, file); // atomic create-if-absent, with the full content already written
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.unlinkSync(tmp);
    }
  }
  return decodeSecretsKey(fs.readFileSync(file, 'utf8').trim());
}

/**
 * The keyring of a configuration: `SECRETS_KEY` (else `DATA_DIR/secrets-key`, {@link loadSecretsKey})
 * seals and opens, each key of `SECRETS_KEY_PREVIOUS` opens. The server and the CLI build it alike.
 * @throws RangeError when a key is not base64 of 32 bytes.
 */
export function secretBoxOf(config: { secretsKey: string | undefined; secretsKeyPrevious: readonly string[]; dataDir: string }): SecretBox {
  return new SecretBox(loadSecretsKey(config.secretsKey, config.dataDir), config.secretsKeyPrevious.map(decodeSecretsKey));
}

/** Seals strings with AES-256-GCM under the current 32-byte key; opens them under it or a previous key. */
export class SecretBox {
  private readonly key: Buffer;
  private readonly previous: Buffer[];

  /**
   * @param key the current key: seals, and opens first.
   * @param previous keys that only open (`SECRETS_KEY_PREVIOUS`), tried in order after `key`.
   * @throws RangeError unless every key is 32 bytes.
   */
  constructor(key: Uint8Array, previous: readonly Uint8Array[] = []) {
    for (const k of [key, ...previous]) if (k.length !== SECRETS_KEY_BYTES) throw new RangeError(`a SecretBox key is ${SECRETS_KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
    this.previous = previous.map((k) => Buffer.from(k)).filter((k) => !k.equals(this.key));
  }

  /** Whether `value` is in the sealed format (otherwise it is, for example, a legacy clear value). */
  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** Encrypt `plaintext` (UTF-8) bound to `context`; answers `v1:<iv>:<ciphertext+tag>` (base64 parts). */
  seal(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${iv.toString('base64')}:${body.toString('base64')}`;
  }

  /**
   * Decrypt a value from {@link seal} with the same `context`, under the current key or a previous one.
   * @throws SecretBoxError when the value is malformed, was altered, or was sealed under a key not in the ring or another context.
   */
  open(sealed: string, context = ''): string {
    return this.openWithIndex(sealed, context).plaintext;
  }

  /**
   * The value sealed again under the current key when it opens only under a previous key; null
   * when it is already sealed under the current key (nothing to do).
   * @throws SecretBoxError as {@link open}.
   */
  reseal(sealed: string, context = ''): string | null {
    const { plaintext, keyIndex } = this.openWithIndex(sealed, context);
    return keyIndex === 0 ? null : this.seal(plaintext, context);
  }

  /** The plaintext and the index of the key that opened it (0 current, 1… previous). */
  private openWithIndex(sealed: string, context: string): { plaintext: string; keyIndex: number } {
    const parts = SecretBox.isSealed(sealed) ? sealed.slice(PREFIX.length).split(':') : [];
    const iv = Buffer.from(parts[0] ?? '', 'base64');
    const body = Buffer.from(parts[1] ?? '', 'base64');
    if (parts.length !== 2 || iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretBoxError('not a sealed v1 value');
    const keys = [this.key, ...this.previous];
    for (let keyIndex = 0; keyIndex < keys.length; keyIndex++) {
      try {
        const decipher = createDecipheriv(ALGORITHM, keys[keyIndex]!, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        return { plaintext: Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8'), keyIndex };
      } catch {
        // not this key (or altered): try the next one
      }
    }
    throw new SecretBoxError('sealed value does not authenticate (altered, or another key or context)');
  }
}
