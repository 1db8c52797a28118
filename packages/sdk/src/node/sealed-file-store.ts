/**
 * A {@link SessionStore} on the local filesystem whose records are sealed at rest (Node only):
 * the files of a {@link FileSessionStore} (same names, same atomic writes), each holding
 *
 *     {"parley_sealed":1,"counter":N,"nonce":"<base64>","ciphertext":"<base64>"}
 *
 * where the ciphertext is XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha) of the record under the
 * store key, with associated data `parley-store/v1 record`, the record id and `N` (so a record
 * cannot be moved to another id or given another counter). The store key is HKDF-SHA256 (RFC 5869)
 * of the root key from a {@link SealingKeySource}, salted with the store's random id: records of
 * another state directory do not open here even under the same key.
 *
 * Rollback: every save gives the record the next counter, and `store.manifest` (sealed the same
 * way) keeps the highest counter of every record, and of deleted records. Loading a record older
 * than the manifest's counter, a plain file where a sealed record was, or no file where the
 * manifest expects one, fails with {@link SealedStoreError} `rollback` / `tampered`. A copy of a
 * deleted record put back is ignored and removed. Copying back the whole directory (manifest and
 * records of one earlier moment) is not detected: nothing outside the directory remembers.
 *
 * Migration: a record found in plain form (written by a plain store) that the manifest does not
 * know is returned and sealed in place by the same load, so the plaintext does not stay until
 * its next save. The filesystem may still hold the old plaintext blocks.
 */
import { hkdfSha256, randomBytes, utf8Decode, utf8Encode, xchacha20poly1305Decrypt, xchacha20poly1305Encrypt, XCHACHA_NONCE_BYTES } from '../crypto/primitives.js';
import type { SessionStore } from '../storage.js';
import { FileSessionStore, type FileSessionStoreOptions } from './file-store.js';
import { KeyedQueue } from '../keyed-queue.js';
import { SealedStoreError, type ScryptParams, type SealingKeyKind, type SealingKeySource } from './sealing-keys.js';
import path from 'node:path';

/** File name of the manifest in a sealed state directory (never the file of a record id). */
export const MANIFEST_FILE = 'store.manifest';

const STORE_ID_BYTES = 16;

/** The manifest file: its plain header (format, store id, key source kind, scrypt cost) and the sealed table of counters. */
export interface ManifestFile {
  parley_store: 1;
  store_id: string;
  key_source: SealingKeyKind;
  kdf?: ScryptParams;
  nonce: string;
  ciphertext: string;
}

type ManifestHeader = Omit<ManifestFile, 'nonce' | 'ciphertext'>;

/** One record's entry in the manifest: its highest counter, and whether it was deleted. */
interface Entry {
  counter: number;
  deleted?: true;
}

interface SealedRecordFile {
  parley_sealed: 1;
  counter: number;
  nonce: string;
  ciphertext: string;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

/**
 * The manifest file of `dir` (its header is plain), or undefined when the directory is not sealed.
 * @throws SealedStoreError `tampered` when it does not parse.
 */
export async function readManifest(dir: string): Promise<ManifestFile | undefined> {
  const raw = new FileSessionStore(dir, { fsync: false });
  const text = await raw.loadFile(path.join(raw.dir, MANIFEST_FILE));
  if (text === undefined) return undefined;
  let parsed: ManifestFile;
  try {
    parsed = JSON.parse(text) as ManifestFile;
  } catch {
    throw new SealedStoreError('tampered', `${path.join(raw.dir, MANIFEST_FILE)} is not a Parley store manifest`);
  }
  if (parsed?.parley_store !== 1 || typeof parsed.store_id !== 'string' || typeof parsed.nonce !== 'string' || typeof parsed.ciphertext !== 'string') {
    throw new SealedStoreError('tampered', `${path.join(raw.dir, MANIFEST_FILE)} is not a Parley store manifest`);
  }
  return parsed;
}

/** A sealed, rollback-refusing, file-per-id {@link SessionStore} (see the file comment). */
export class SealedFileSessionStore implements SessionStore {
  private readonly queue = new KeyedQueue();
  private pendingFlush: Promise<void> | undefined;
  /** The manifest (with this store's id) exists on disk. */
  private manifestWritten = false;
  private lastFlush: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly raw: FileSessionStore,
    private readonly header: ManifestHeader,
    private readonly key: Uint8Array,
    private readonly entries: Map<string, Entry>,
    /** Names the key source, for messages. */
    readonly keyLabel: string,
  ) {}

  /** The directory holding the state files. */
  get dir(): string {
    return this.raw.dir;
  }

  /** The file that holds `id` (as {@link FileSessionStore.fileFor}). */
  fileFor(id: string): string {
    return this.raw.fileFor(id);
  }

  /**
   * Open the sealed store of `dir` with the root key from `source`; a directory without a
   * manifest (new, or written by a plain store) becomes sealed at its first write.
   * @throws SealedStoreError `sealed_store` (sealed with another kind of key source),
   *   `key_unavailable`, `wrong_key`, `tampered` (unreadable manifest).
   */
  static async open(dir: string, source: SealingKeySource, options: FileSessionStoreOptions = {}): Promise<SealedFileSessionStore> {
    const raw = new FileSessionStore(dir, options);
    const found = await readManifest(raw.dir);
    if (found && found.key_source !== source.kind) {
      throw new SealedStoreError('sealed_store', `${raw.dir} is sealed with a ${found.key_source} (${keySourceHint(found.key_source)}), not a ${source.kind}`);
    }
    const header: ManifestHeader = found
      ? { parley_store: 1, store_id: found.store_id, key_source: found.key_source, ...(found.kdf ? { kdf: found.kdf } : {}) }
      : { parley_store: 1, store_id: b64(randomBytes(STORE_ID_BYTES)), key_source: source.kind };
    const root = await source.key({ stateDir: raw.dir, salt: unb64(header.store_id), params: found?.kdf, create: !found });
    if (!found && root.params) header.kdf = root.params;
    const key = hkdfSha256(root.key, unb64(header.store_id), utf8Encode('parley-store/v1 key'), 32);
    const store = new SealedFileSessionStore(raw, header, key, new Map(), source.label);
    if (found) store.unsealManifest(found);
    store.manifestWritten = found !== undefined;
    return store;
  }

  async load(id: string): Promise<string | undefined> {
    const file = this.raw.fileFor(id);
    return this.queue.run(id, async () => {
      const text = await this.raw.loadFile(file);
      const entry = this.entries.get(id);
      if (text === undefined) {
        if (entry && !entry.deleted) throw new SealedStoreError('tampered', `${file} is missing, but the store manifest records it (counter ${entry.counter}): the state directory was damaged or tampered with`);
        return undefined;
      }
      const sealed = asSealedRecord(text, file);
      if (!sealed) {
        if (entry) throw new SealedStoreError('rollback', `${file} holds a plain record where the store manifest expects a sealed one (counter ${entry.counter}): refused`);
        await this.write(id, file, text); // migration: seal it now
        return text;
      }
      if (entry?.deleted && sealed.counter <= entry.counter) {
        await this.raw.deleteFile(file); // an old copy of a deleted record: finish the delete
        return undefined;
      }
      if (entry && sealed.counter < entry.counter) {
        throw new SealedStoreError('rollback', `${file} is an older copy of the record (counter ${sealed.counter}, the store manifest says ${entry.counter}): refused`);
      }
      const plain = this.open(sealed, recordAad(id, sealed.counter), file);
      // Written just before a crash that lost the manifest update: the record is newer, keep it
      // (recorded with the next manifest write; loading alone never writes the manifest).
      if (!entry || sealed.counter > entry.counter) this.entries.set(id, { counter: sealed.counter });
      return plain;
    });
  }

  async save(id: string, state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('state must be a string');
    const file = this.raw.fileFor(id);
    return this.queue.run(id, () => this.write(id, file, state));
  }

  async delete(id: string): Promise<void> {
    const file = this.raw.fileFor(id);
    return this.queue.run(id, async () => {
      const entry = this.entries.get(id);
      if (entry && !entry.deleted) {
        this.entries.set(id, { counter: entry.counter, deleted: true });
        await this.flushManifest();
      }
      await this.raw.deleteFile(file);
    });
  }

  /** Seal `state` as the next counter of `id`, write it, then record the counter in the manifest. */
  private async write(id: string, file: string, state: string): Promise<void> {
    // The store id (which salts the store key) is on disk before the first record sealed with it.
    if (!this.manifestWritten) await this.flushManifest();
    const counter = (this.entries.get(id)?.counter ?? 0) + 1;
    const nonce = randomBytes(XCHACHA_NONCE_BYTES);
    const ciphertext = xchacha20poly1305Encrypt(this.key, nonce, utf8Encode(state), recordAad(id, counter));
    const record: SealedRecordFile = { parley_sealed: 1, counter, nonce: b64(nonce), ciphertext: b64(ciphertext) };
    await this.raw.saveFile(file, JSON.stringify(record));
    this.entries.set(id, { counter });
    await this.flushManifest();
  }

  private open(box: { nonce: string; ciphertext: string }, aad: Uint8Array, file: string): string {
    try {
      return utf8Decode(xchacha20poly1305Decrypt(this.key, unb64(box.nonce), unb64(box.ciphertext), aad));
    } catch (cause) {
      throw new SealedStoreError('tampered', `${file} does not authenticate under the ${this.keyLabel}: it was altered, or moved from another record`, { cause });
    }
  }

  private unsealManifest(file: ManifestFile): void {
    const where = path.join(this.dir, MANIFEST_FILE);
    let text: string;
    try {
      text = utf8Decode(xchacha20poly1305Decrypt(this.key, unb64(file.nonce), unb64(file.ciphertext), manifestAad(this.header)));
    } catch (cause) {
      throw new SealedStoreError('wrong_key', `the ${this.keyLabel} does not open ${this.dir} (its manifest ${where} does not authenticate): wrong key, or the manifest was altered`, { cause });
    }
    const table = JSON.parse(text) as Record<string, Entry>;
    for (const [id, entry] of Object.entries(table)) this.entries.set(id, entry);
  }

  /**
   * Write the manifest with every counter recorded so far. Calls made while a write is queued
   * share it; a call made while one runs queues the next one.
   */
  private flushManifest(): Promise<void> {
    if (this.pendingFlush) return this.pendingFlush;
    const run = this.lastFlush.then(
      () => this.writeManifest(),
      () => this.writeManifest(),
    );
    this.pendingFlush = run;
    this.lastFlush = run;
    return run;
  }

  private async writeManifest(): Promise<void> {
    this.pendingFlush = undefined;
    const nonce = randomBytes(XCHACHA_NONCE_BYTES);
    const table = utf8Encode(JSON.stringify(Object.fromEntries(this.entries)));
    const ciphertext = xchacha20poly1305Encrypt(this.key, nonce, table, manifestAad(this.header));
    const file: ManifestFile = { ...this.header, nonce: b64(nonce), ciphertext: b64(ciphertext) };
    await this.raw.saveFile(path.join(this.dir, MANIFEST_FILE), JSON.stringify(file));
    this.manifestWritten = true;
  }
}

/** How an operator gives a key of `kind` to the agent command. */
export function keySourceHint(kind: SealingKeyKind): string {
  switch (kind) {
    case 'key-file':
      return 'give it with --key-file PATH or PARLEY_KEY_FILE';
    case 'passphrase':
      return 'give it with PARLEY_PASSPHRASE';
    case 'keychain':
      return 'it is kept in the OS keychain of the user that sealed it';
  }
}

function recordAad(id: string, counter: number): Uint8Array {
  return utf8Encode(`parley-store/v1 record\0${id}\0${counter}`);
}

/** The manifest's associated data: its plain header, so the key source kind and cost cannot be swapped. */
function manifestAad(header: ManifestHeader): Uint8Array {
  const kdf = header.kdf ? `${header.kdf.N}/${header.kdf.r}/${header.kdf.p}` : '';
  return utf8Encode(`parley-store/v1 manifest\0${header.store_id}\0${header.key_source}\0${kdf}`);
}

/** The sealed record in `text`; undefined for a plain record. @throws SealedStoreError `tampered` for a malformed sealed one. */
function asSealedRecord(text: string, file: string): SealedRecordFile | undefined {
  if (!text.startsWith('{"parley_sealed"')) return undefined;
  let r: SealedRecordFile | undefined;
  try {
    r = JSON.parse(text) as SealedRecordFile;
  } catch {
    r = undefined;
  }
  if (r?.parley_sealed === 1 && Number.isSafeInteger(r.counter) && r.counter > 0 && typeof r.nonce === 'string' && typeof r.ciphertext === 'string') return r;
  throw new SealedStoreError('tampered', `${file} is a malformed sealed record`);
}
