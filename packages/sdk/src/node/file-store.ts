/**
 * A {@link SessionStore} on the local filesystem (Node.js only), one file per id, written
 * atomically: the state goes to a fresh temporary file in the same directory, which is fsynced,
 * renamed over the target (atomic on POSIX filesystems and on NTFS), after which the directory
 * is fsynced. A crash therefore leaves either the previous state or the new one, never a torn
 * file. Files are created with mode 0600 in a directory created with mode 0700.
 *
 * Operations on one id run one after another in call order, so the last `save` called is the one
 * that stays. One process per directory: the store does not lock against other processes.
 *
 * The files hold the states as given, in plain text. The agent keeps its state directory sealed
 * instead (`SealedFileSessionStore` over these files, `state-store.ts`) unless plain storage
 * was chosen.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { SessionStore } from '../storage.js';
import { KeyedQueue } from '../keyed-queue.js';

/** Options of {@link FileSessionStore}. */
export interface FileSessionStoreOptions {
  /**
   * fsync the file and its directory on every save and delete (default true). Turn off only
   * where durability does not matter (tests); atomicity against torn files remains.
   */
  fsync?: boolean;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_ID_BYTES = 180;

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** A durable, atomic, file-per-id {@link SessionStore} under `dir`. */
export class FileSessionStore implements SessionStore {
  /** The directory holding the state files. */
  readonly dir: string;
  private readonly fsync: boolean;
  private readonly queue = new KeyedQueue();
  private ready: Promise<void> | undefined;

  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError('dir must be a non-empty path');
    this.dir = path.resolve(dir);
    this.fsync = options.fsync ?? true;
  }

  /**
   * The file that holds `id`: `<id>.json` for ids of letters, digits, `_` and `-` (up to 128
   * characters, e.g. UUIDs); `~<base64url of the UTF-8 id>.json` for any other id (up to 180
   * UTF-8 bytes). Two ids never share a file.
   * @throws TypeError for an empty or too long id.
   */
  fileFor(id: string): string {
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('id must be a non-empty string');
    if (SAFE_ID.test(id)) return path.join(this.dir, `${id}.json`);
    if (Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES) throw new TypeError(`id must be at most ${MAX_ID_BYTES} UTF-8 bytes`);
    return path.join(this.dir, `~${base64url(id)}.json`);
  }

  async load(id: string): Promise<string | undefined> {
    return this.loadFile(this.fileFor(id));
  }

  async save(id: string, state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('state must be a string');
    return this.saveFile(this.fileFor(id), state);
  }

  async delete(id: string): Promise<void> {
    return this.deleteFile(this.fileFor(id));
  }

  /**
   * The UTF-8 text of `file` (a path in {@link dir}, e.g. from {@link fileFor}), or undefined
   * when it does not exist. Queued with every other operation on the same file.
   */
  loadFile(file: string): Promise<string | undefined> {
    return this.queue.run(file, async () => {
      try {
        return await readFile(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    });
  }

  /** Replace `file` (a path in {@link dir}) with `text`, atomically and durably (see the file comment). */
  saveFile(file: string, text: string): Promise<void> {
    return this.queue.run(file, async () => {
      await this.ensureDir();
      const temp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
      try {
        const handle = await open(temp, 'wx', 0o600);
        try {
          await handle.writeFile(text, 'utf8');
          if (this.fsync) await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, file);
      } catch (err) {
        await unlink(temp).catch(() => undefined);
        throw err;
      }
      await this.syncDir();
    });
  }

  /** Remove `file` (a path in {@link dir}); resolves also when it does not exist. */
  deleteFile(file: string): Promise<void> {
    return this.queue.run(file, async () => {
      try {
        await unlink(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      await this.syncDir();
    });
  }

  private ensureDir(): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      (err: unknown) => {
        this.ready = undefined;
        throw err;
      },
    );
    return this.ready;
  }

  /** fsync the directory so the rename / unlink itself is durable (skipped where unsupported). */
  private async syncDir(): Promise<void> {
    if (!this.fsync) return;
    let handle;
    try {
      handle = await open(this.dir, 'r');
      await handle.sync();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Windows cannot open or fsync a directory; the rename is still atomic there.
      if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw err;
    } finally {
      await handle?.close();
    }
  }
}
