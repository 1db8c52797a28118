/**
 * Start-up failures as one line with the fix: what went wrong, naming the setting involved
 * (`PORT`, `DATA_DIR`, `DATABASE_URL` with its password masked), and what to do. No stack trace:
 * the cause is the operator's setting, not the code. An unforeseen failure still reads as one
 * line; `LOG_LEVEL=debug` adds its stack.
 */
import { maskUrlPassword, type Config } from '../config.js';
import { DataDirLockedError } from './data-dir-lock.js';

/** A start-up failure whose message is the whole line to print (without `error: `). */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** The command that creates a missing PostgreSQL database (cli/database-commands.ts). */
export const CREATE_DB_COMMAND = 'npm run cli -- create-db';

/**
 * The port cannot be bound. `holder` is the process holding the same `DATA_DIR`, when one does
 * (then the port is most likely that Parley's).
 */
export function portUnavailable(host: string, port: number, code: string | undefined, holder?: number): StartupError {
  if (code === 'EACCES') return new StartupError(`port ${port} on ${host} needs privileges this process lacks: set PORT to 1024 or above (e.g. PORT=8080)`);
  if (code === 'EADDRNOTAVAIL') return new StartupError(`HOST ${host} is not an address of this machine: set HOST (e.g. HOST=127.0.0.1)`);
  const who = holder !== undefined ? `Parley (pid ${holder}, same DATA_DIR) is already running there` : 'another program listens there';
  return new StartupError(`port ${port} on ${host} is already in use: ${who}; stop it, or choose another port with PORT (e.g. PORT=${port === 8080 ? 8081 : port + 1} npm start)`);
}

/** The line for a data directory held by another process (`npm start` or a CLI command). */
export function dataDirLocked(err: DataDirLockedError, role: 'server' | 'command'): StartupError {
  const fix =
    role === 'server'
      ? 'stop it first, or give this one its own DATA_DIR (and PORT)'
      : 'stop it first: this command opens the embedded database, which one process at a time may hold';
  return new StartupError(`${err.message}: ${fix}`, { cause: err });
}

/** Socket errors of a server that cannot be reached at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET']);

/** The database name of a PostgreSQL URL ('' when it names none). */
export function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1));
  } catch {
    return '';
  }
}

/**
 * The line for a failure to use `DATABASE_URL` (connect, log in, find the database), or undefined
 * when `err` is another kind of failure. SQLSTATEs: 3D000 invalid_catalog_name, 28P01
 * invalid_password, 28000 invalid_authorization_specification (PostgreSQL docs, Appendix A).
 */
export function describeDatabaseError(err: unknown, url: string): StartupError | undefined {
  const shown = `DATABASE_URL=${maskUrlPassword(url)}`;
  const code = (err as { code?: unknown } | undefined)?.code;
  const message = String((err as Error | undefined)?.message ?? err);
  if (code === '3D000') {
    const name = databaseName(url);
    return new StartupError(`database "${name}" does not exist on the server of ${shown}: create it with \`${CREATE_DB_COMMAND}\` (same DATABASE_URL), then start again`, { cause: err });
  }
  if (code === '28P01' || code === '28000') return new StartupError(`PostgreSQL refused the login of ${shown}: fix the user name or password in DATABASE_URL`, { cause: err });
  if ((typeof code === 'string' && UNREACHABLE.has(code)) || /timeout|terminated unexpectedly/i.test(message)) {
    return new StartupError(`cannot reach PostgreSQL at ${shown} (${typeof code === 'string' ? code : 'timed out'}): start PostgreSQL or fix DATABASE_URL (unset it to use the embedded database in DATA_DIR)`, { cause: err });
  }
  if (err instanceof TypeError && /invalid url/i.test(message)) return new StartupError(`${shown} is not a PostgreSQL URL: use postgres://user:password@host:5432/database`, { cause: err });
  return undefined;
}

/**
 * The one line (without `error: `) for any start-up failure: the failures above, a malformed
 * setting (`loadConfig`'s errors name their variable), or an unforeseen error (its message, with
 * `DATABASE_URL`'s password masked wherever it appears).
 */
export function describeStartupError(err: unknown, config: Config | undefined): string {
  if (err instanceof StartupError) return err.message;
  if (err instanceof DataDirLockedError) return dataDirLocked(err, 'server').message;
  if (!config) return `invalid configuration: ${(err as Error)?.message ?? String(err)}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    if ((err as { syscall?: string }).syscall === 'listen' || (err as { syscall?: string }).syscall === 'bind') return portUnavailable(config.host, config.port, code).message;
  }
  if (config.databaseUrl) {
    const db = describeDatabaseError(err, config.databaseUrl) ?? describeDatabaseError((err as { cause?: unknown })?.cause, config.databaseUrl);
    if (db) return db.message;
  }
  if ((code === 'EACCES' || code === 'EROFS' || code === 'EPERM') && typeof (err as NodeJS.ErrnoException).path === 'string') {
    return `cannot write ${(err as NodeJS.ErrnoException).path} (${code}): make DATA_DIR (${config.dataDir}) writable by this user, or set DATA_DIR to a directory that is`;
  }
  const message = (err as Error)?.message ?? String(err);
  return `start-up failed: ${config.databaseUrl ? message.split(config.databaseUrl).join(maskUrlPassword(config.databaseUrl)) : message}`;
}
