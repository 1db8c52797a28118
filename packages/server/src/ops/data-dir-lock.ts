/**
 * One process at a time on an embedded data directory: the embedded database (PGlite) is a
 * single-process PostgreSQL whose files two processes must never open together. `npm start` and
 * the CLI commands that open the database take `DATA_DIR/parley.lock` before anything under
 * `DATA_DIR` is opened; a second process finds it and stops at once, touching nothing.
 *
 * The lock file holds the holder's process id (decimal, one line). It is created whole (written
 * to a temporary file, then hard-linked into place, so a reader never sees it half written) and
 * removed when the holder exits. A lock whose process is gone (killed, crashed, the machine
 * restarted) is stale and is taken over: the process id no longer exists, is this very process
 * (a container restarted with the same pid), or belongs to a program that is not Node.js (the id
 * was reused). A PostgreSQL database (`DATABASE_URL`) takes no lock: instances share it.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Name of the lock file inside the data directory. */
export const LOCK_FILE = 'parley.lock';

/** Thrown by {@link lockDataDir} when a live process holds the directory. */
export class DataDirLockedError extends Error {
  constructor(
    /** The data directory (absolute). */
    readonly dir: string,
    /** Process id of the holder. */
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dir} is in use by another Parley process (pid ${pid})`);
    this.name = 'DataDirLockedError';
  }
}

/** A held lock. */
export interface DataDirLock {
  /** The lock file's path. */
  readonly file: string;
  /** Remove the lock file if it is still this process's (idempotent; also runs at process exit). */
  release(): void;
}

/** Whether `pid` names a running Node.js process other than this one (see the file comment). */
function holderAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, under another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // Linux: a reused id that now runs another program is not a holder.
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes(path.basename(process.execPath));
  } catch {
    return true; // no /proc (macOS) or not readable: trust the signal check
  }
}

/** The process id written in a lock file; NaN when missing or unreadable. */
function readPid(file: string): number {
  try {
    return Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
  } catch {
    return Number.NaN;
  }
}

/**
 * The live process holding `dir`, or undefined when none does (no lock file, or a stale one).
 * Reads only; creates nothing.
 */
export function dataDirHolder(dir: string): number | undefined {
  const pid = readPid(path.join(path.resolve(dir), LOCK_FILE));
  return holderAlive(pid) ? pid : undefined;
}

/**
 * Take `dir`'s lock, creating the directory when missing; a stale lock is taken over.
 * @throws DataDirLockedError when a live process holds it; the filesystem's error when the
 *   directory cannot be created or written (EACCES, EROFS, …).
 */
export function lockDataDir(dir: string): DataDirLock {
  const abs = path.resolve(dir);
  fs.mkdirSync(abs, { recursive: true });
  const file = path.join(abs, LOCK_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${process.pid}\n`, { mode: 0o644 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        fs.linkSync(tmp, file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readPid(file);
      if (holderAlive(holder) || attempt >= 2) throw new DataDirLockedError(abs, holder);
      // Stale: replace it, then read back, so of two processes taking over the same stale lock
      // at once only the one whose file is in place goes on.
      fs.renameSync(tmp, file);
      fs.writeFileSync(tmp, `${process.pid}\n`, { mode: 0o644 });
      if (readPid(file) === process.pid) break;
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.removeListener('exit', release);
    if (readPid(file) === process.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { file, release };
}
