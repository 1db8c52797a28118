/**
 * Where the key that seals an agent's state directory comes from (Node only): a key file or a
 * passphrase the operator provides. `docs/architecture.md` ("Keys at rest") says what sealing
 * protects; {@link SealedFileSessionStore} does the sealing.
 *
 * An OS keychain source would implement the same {@link SealingKeySource} interface; none ships
 * yet (see docs/decisions.md "Agent state sealed at rest").
 */
import { randomBytes, scrypt, type ScryptOptions } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';

/** Length in bytes of a root sealing key (and of a key file's raw content). */
export const SEALING_KEY_BYTES = 32;

/** Kinds of {@link SealingKeySource}, as recorded in a sealed store's manifest. */
export type SealingKeyKind = 'key-file' | 'passphrase' | 'keychain';

/** Why a sealed store cannot be opened or read (`code`), with a message saying what to do. */
export type SealedStoreErrorCode =
  /** No key source was chosen (and plain storage was not chosen either). */
  | 'no_key'
  /** The key source cannot give a key (missing or malformed key file, empty passphrase). */
  | 'key_unavailable'
  /** The key does not open the store's manifest: wrong key file or passphrase. */
  | 'wrong_key'
  /** The state directory is sealed but was opened with another key source kind, or as plain. */
  | 'sealed_store'
  /** A record is older than the manifest says (a previous copy was put back), or a plain file replaced a sealed one. */
  | 'rollback'
  /** A record or the manifest fails authentication, is malformed, or is missing. */
  | 'tampered';

/** The error of sealed state directories; see {@link SealedStoreErrorCode}. */
export class SealedStoreError extends CodedError<SealedStoreErrorCode> {
  override readonly name = 'SealedStoreError';
}

/** scrypt cost parameters (RFC 7914): CPU/memory cost `N` (a power of 2), block size `r`, parallelism `p`. */
export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/**
 * Default scrypt cost: N = 2^17, r = 8, p = 1 (about 128 MiB and a few hundred milliseconds per
 * derivation), the interactive-login level of the OWASP Password Storage Cheat Sheet.
 */
export const DEFAULT_SCRYPT: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });

/** What a source is told when asked for the key of one state directory. */
export interface SealingKeyRequest {
  /** The state directory (absolute). */
  stateDir: string;
  /** The store's random 16-byte id (the scrypt salt of a passphrase). */
  salt: Uint8Array;
  /** The source parameters recorded when the store was created (undefined when creating it). */
  params: ScryptParams | undefined;
  /** True when the store is new: the source may create its key (a key file) and choose `params`. */
  create: boolean;
}

/** The key a source gives: 32 bytes, and the parameters to record in the store's manifest. */
export interface SealingKey {
  key: Uint8Array;
  params?: ScryptParams;
}

/** A source of the 32-byte root key that seals a state directory. */
export interface SealingKeySource {
  readonly kind: SealingKeyKind;
  /** Names the source for error messages and logs, e.g. `key file /etc/parley/agent.key`. */
  readonly label: string;
  /**
   * The root key of the store described by `request`.
   * @throws SealedStoreError `key_unavailable` when this source cannot give a key.
   */
  key(request: SealingKeyRequest): Promise<SealingKey>;
}

/**
 * The root key is the content of a file: 32 raw bytes, or 64 hexadecimal characters (a trailing
 * newline allowed, e.g. from `openssl rand -hex 32`). For a store not sealed yet the file is created when
 * missing (32 random bytes, mode 0600, never overwritten; a missing parent directory is created
 * with mode 0700). On POSIX systems a key file that its
 * group or others may read is refused, as OpenSSH refuses such private keys.
 */
export class KeyFileSource implements SealingKeySource {
  readonly kind = 'key-file';
  readonly label: string;
  /** The key file (absolute). */
  readonly file: string;

  constructor(file: string) {
    if (typeof file !== 'string' || file.length === 0) throw new TypeError('the key file must be a non-empty path');
    this.file = path.resolve(file);
    this.label = `key file ${this.file}`;
  }

  async key(request: SealingKeyRequest): Promise<SealingKey> {
    let info = await stat(this.file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw new SealedStoreError('key_unavailable', `cannot read the ${this.label}: ${err.message}`, { cause: err });
    });
    if (!info) {
      if (!request.create) throw new SealedStoreError('key_unavailable', `the ${this.label} does not exist; ${request.stateDir} was sealed with another key file`);
      await this.create();
      info = await stat(this.file);
    }
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
      throw new SealedStoreError('key_unavailable', `the ${this.label} may be read by other users (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`);
    }
    return { key: parseKeyFile(await readFile(this.file), this.label) };
  }

  private async create(): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const handle = await open(this.file, 'wx', 0o600);
    try {
      await handle.writeFile(randomBytes(SEALING_KEY_BYTES));
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

function parseKeyFile(bytes: Buffer, label: string): Uint8Array {
  if (bytes.length === SEALING_KEY_BYTES) return new Uint8Array(bytes);
  const text = bytes.toString('latin1').trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return new Uint8Array(Buffer.from(text, 'hex'));
  throw new SealedStoreError('key_unavailable', `the ${label} must hold ${SEALING_KEY_BYTES} raw bytes or 64 hexadecimal characters`);
}

/**
 * The root key is scrypt (RFC 7914) of the passphrase (UTF-8, Unicode NFC) with the store's
 * 16-byte id as salt and the cost recorded in its manifest ({@link DEFAULT_SCRYPT} for new
 * stores). Derived keys are kept in memory per salt, so reopening a store costs one derivation.
 */
export class PassphraseSource implements SealingKeySource {
  readonly kind = 'passphrase';
  readonly label: string;
  private readonly passphrase: string;
  private readonly cost: ScryptParams;
  private readonly derived = new Map<string, Promise<Uint8Array>>();

  /**
   * @param label names where the passphrase came from (default `passphrase (PARLEY_PASSPHRASE)`).
   * @param cost scrypt cost of new stores (default {@link DEFAULT_SCRYPT}).
   * @throws SealedStoreError `key_unavailable` for an empty passphrase.
   */
  constructor(passphrase: string, options: { label?: string; cost?: ScryptParams } = {}) {
    this.label = options.label ?? 'passphrase (PARLEY_PASSPHRASE)';
    if (typeof passphrase !== 'string' || passphrase.length === 0) throw new SealedStoreError('key_unavailable', `the ${this.label} is empty`);
    this.passphrase = passphrase.normalize('NFC');
    this.cost = options.cost ?? DEFAULT_SCRYPT;
  }

  async key(request: SealingKeyRequest): Promise<SealingKey> {
    const params = request.params ?? this.cost;
    const id = `${Buffer.from(request.salt).toString('hex')}/${params.N}/${params.r}/${params.p}`;
    let key = this.derived.get(id);
    if (!key) {
      key = scryptKey(this.passphrase, request.salt, params);
      this.derived.set(id, key);
      key.catch(() => this.derived.delete(id));
    }
    return { key: await key, params };
  }
}

function scryptKey(passphrase: string, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  // scrypt needs 128·N·r bytes (RFC 7914 §2); node:crypto refuses more than maxmem (32 MiB by default).
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 128 * params.N * params.r + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(passphrase, salt, SEALING_KEY_BYTES, options, (err, key) => (err ? reject(new SealedStoreError('key_unavailable', `scrypt failed: ${err.message}`, { cause: err })) : resolve(new Uint8Array(key))));
  });
}
