/**
 * What `npm start` checks before it opens anything (main.ts), so that a start that cannot succeed
 * stops at once with one line ({@link StartupError}) and leaves the data directory as it was:
 * the port can be bound, the embedded data directory is not held by another process (its lock is
 * taken, data-dir-lock.ts), and a `DATABASE_URL` database can be logged in to.
 */
import net from 'node:net';
import type { Config } from '../config.js';
import { DataDirLockedError, dataDirHolder, lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { StartupError, dataDirLocked, describeDatabaseError, portUnavailable } from './startup-errors.js';

/** How long the database check waits for a connection (ms). */
const DATABASE_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Bind `host:port` and let go of it at once. Port 0 (any free port) is not checked.
 * @throws StartupError naming the port and `PORT` when it is taken or not allowed.
 */
export async function checkPortFree(host: string, port: number, dataDir: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(portUnavailable(host, port, err.code, dataDirHolder(dataDir))));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Connect to `url` and log in, then disconnect.
 * @throws StartupError naming `DATABASE_URL` (password masked): unreachable, login refused, or
 *   the database missing (with the command that creates it).
 */
export async function checkDatabase(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  let client: InstanceType<typeof pg.Client>;
  try {
    client = new pg.Client({ connectionString: url, connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS });
  } catch (err) {
    throw describeDatabaseError(err, url) ?? err;
  }
  // A connection that fails later emits 'error'; without a listener that would end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw describeDatabaseError(err, url) ?? new StartupError(`cannot use DATABASE_URL: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Everything above for `config`: the port, then (embedded database) the data directory's lock, or
 * (`DATABASE_URL`) the database. Answers the lock, which the caller holds until it exits.
 * @throws StartupError as described.
 */
export async function preflight(config: Config): Promise<DataDirLock | undefined> {
  await checkPortFree(config.host, config.port, config.dataDir);
  if (config.databaseUrl) {
    await checkDatabase(config.databaseUrl);
    return undefined;
  }
  if (config.pgliteInMemory) return undefined;
  return lockForServer(config.dataDir);
}

/** Take the data directory's lock for the service. @throws StartupError when another process holds it. */
function lockForServer(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw dataDirLocked(err, 'server');
    throw err;
  }
}
