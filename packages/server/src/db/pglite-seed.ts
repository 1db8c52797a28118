/**
 * Fast first start on the embedded default: creating a PGlite data directory
 * runs `initdb` in WebAssembly and then every migration, about 10 s on a small machine. The build
 * makes that directory once — an in-memory PGlite with every migration applied, dumped as a
 * gzip tarball with PGlite's `dumpDataDir` — and a fresh `DATA_DIR` starts from a copy of it,
 * unpacked by {@link createFromSeed}; later migrations still apply on top as usual. The seed holds
 * no keys or tenant data: signing keys and everything else are made at first start, per
 * installation.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import type { Database, Db } from './types.js';

const gunzip = promisify(zlib.gunzip);

/** Where the build writes the seed (`packages/server/pglite-seed/seed.tar.gz`, from src or dist alike). */
export const DEFAULT_SEED_FILE = fileURLToPath(new URL('../../pglite-seed/seed.tar.gz', import.meta.url));

/** Make the seed: a migrated, empty PGlite data directory as a gzip tarball at `file`. Returns its size in bytes. */
export async function writeSeed(file: string = DEFAULT_SEED_FILE): Promise<number> {
  // Loaded here, not at the top: the service imports this module first thing at start (main.ts)
  // for createFromSeed, which needs nothing but Node.
  const [{ PGlite }, { drizzle: drizzlePglite }, { runMigrations }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite'), import('./migrate.js')]);
  const client = new PGlite();
  await client.waitReady;
  try {
    const database: Database = { db: drizzlePglite(client) as unknown as Db, driver: 'pglite', raw: { kind: 'pglite', client }, close: () => client.close() };
    await runMigrations(database);
    // Half the files a new installation writes at first start are the template databases', which
    // serve only CREATE DATABASE: the embedded service never runs it (cold start, docs/decisions.md).
    for (const name of ['template0', 'template1']) {
      await client.exec(`ALTER DATABASE ${name} IS_TEMPLATE false`);
      await client.exec(`DROP DATABASE ${name}`);
    }
    await client.query('CHECKPOINT');
    const dump = await client.dumpDataDir('gzip');
    const bytes = new Uint8Array(await dump.arrayBuffer());
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
    return bytes.length;
  } finally {
    await client.close();
  }
}

/** One entry of the seed's tarball: a directory, or a file with its bytes. */
interface TarEntry {
  name: string;
  mode: number;
  data: Uint8Array | undefined;
}

/** The entries of an uncompressed ustar archive (what PGlite's `dumpDataDir` writes): regular files and directories only. */
export function readTar(tar: Uint8Array): TarEntry[] {
  const text = (start: number, length: number) => {
    const bytes = tar.subarray(start, start + length);
    const end = bytes.indexOf(0);
    return Buffer.from(end < 0 ? bytes : bytes.subarray(0, end)).toString('utf8');
  };
  const octal = (start: number, length: number) => parseInt(text(start, length).trim() || '0', 8);
  const entries: TarEntry[] = [];
  for (let at = 0; at + 512 <= tar.length; ) {
    if (tar[at] === 0) break; // the two zero blocks that end the archive
    const prefix = text(at + 345, 131);
    const name = (prefix ? `${prefix}/${text(at, 100)}` : text(at, 100)).replace(/^\/+/, '').replace(/\/+$/, '');
    const size = octal(at + 124, 12);
    const type = String.fromCharCode(tar[at + 156]!);
    if (name.split('/').some((part) => part === '..')) throw new Error(`seed entry outside the data directory: ${name}`);
    const start = at + 512;
    if (start + size > tar.length) throw new Error('truncated seed');
    if (type === '0' || type === '\0') entries.push({ name, mode: octal(at + 100, 8) & 0o777, data: tar.subarray(start, start + size) });
    else if (type === '5') entries.push({ name, mode: octal(at + 100, 8) & 0o777, data: undefined });
    else throw new Error(`unsupported tar entry type "${type}" (${name})`);
    at = start + Math.ceil(size / 512) * 512;
  }
  if (!entries.some((e) => e.name === 'PG_VERSION')) throw new Error('the seed holds no PostgreSQL data directory');
  return entries;
}

/** The worker that unpacks off the main thread (dist only: from source there is no .js to start). */
const WORKER_FILE = fileURLToPath(new URL('./seed-worker.js', import.meta.url));

/**
 * {@link unpackSeedHere} on a worker thread, so that gunzip, tar parsing and the file writes'
 * JavaScript side cost the main thread nothing while it loads the app; on the calling thread
 * where the worker's file is missing (running from source).
 */
function unpackSeedInWorker(dataDir: string, file: string): Promise<boolean> {
  if (!fs.existsSync(WORKER_FILE)) return unpackSeedHere(dataDir, file);
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_FILE, { workerData: { dataDir, file } });
    worker.once('message', (made: boolean) => resolve(made));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the seed worker exited with ${code}`)));
  });
}

/** Unpackings started ahead by {@link startCreateFromSeed}, by resolved data directory. */
const started = new Map<string, Promise<boolean>>();

/**
 * Start {@link createFromSeed} for `dataDir` now without waiting for it (main.ts, before the
 * app's modules load): the next `createFromSeed` of the same directory — openDatabase's — takes
 * over this run and its outcome instead of starting another.
 */
export function startCreateFromSeed(dataDir: string, file: string = DEFAULT_SEED_FILE): void {
  const run = unpackSeedInWorker(dataDir, file);
  run.catch(() => undefined); // its taker sees the error
  started.set(path.resolve(dataDir), run);
}

/**
 * Create the PGlite data directory `dataDir` from the seed at `file`: gunzip and unpack it with
 * Node's own file system calls (asynchronous, so the work overlaps the rest of start-up; PGlite's
 * `loadDataDir` writes file by file through its WebAssembly file system, several times slower),
 * into a sibling directory that is renamed into place at the end, so an interrupted start never
 * leaves a half-made database behind. Nothing is synced to disk: a power cut in the first
 * seconds of the very first start can damage this still-empty database (delete it to start over).
 * @returns true when the directory was made; false when `dataDir` already exists or there is no
 *   seed file (open the directory as it is, or let PGlite run initdb).
 * @throws when the seed is damaged (nothing is left behind).
 */
export async function createFromSeed(dataDir: string, file: string = DEFAULT_SEED_FILE): Promise<boolean> {
  const key = path.resolve(dataDir);
  const ahead = started.get(key);
  if (ahead) {
    started.delete(key);
    return ahead;
  }
  return unpackSeedHere(dataDir, file);
}

/**
 * {@link createFromSeed}'s work, on the calling thread. `blocking`: with synchronous calls (the
 * seed worker, which has nothing else to do: less CPU in all than asynchronous writes).
 */
export async function unpackSeedHere(dataDir: string, file: string, blocking = false): Promise<boolean> {
  if (fs.existsSync(dataDir) || !fs.existsSync(file)) return false;
  const entries = readTar(blocking ? zlib.gunzipSync(fs.readFileSync(file)) : await gunzip(await fs.promises.readFile(file)));
  const tmp = `${dataDir}.seeding-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
    for (const e of entries) if (!e.data) fs.mkdirSync(path.join(tmp, e.name), { recursive: true, mode: e.mode });
    const files = entries.filter((e) => e.data);
    for (const dir of new Set(files.map((e) => path.dirname(e.name)))) fs.mkdirSync(path.join(tmp, dir), { recursive: true, mode: 0o700 });
    if (blocking) for (const e of files) fs.writeFileSync(path.join(tmp, e.name), e.data!, { mode: e.mode || 0o600 });
    else await Promise.all(files.map((e) => fs.promises.writeFile(path.join(tmp, e.name), e.data!, { mode: e.mode || 0o600 })));
    try {
      fs.renameSync(tmp, dataDir);
    } catch (err) {
      // Another process made the directory meanwhile: use theirs.
      if (!fs.existsSync(dataDir)) throw err;
      fs.rmSync(tmp, { recursive: true, force: true });
      return false;
    }
    return true;
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}
