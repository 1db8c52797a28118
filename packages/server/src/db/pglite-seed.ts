/**
 * Fast first start on the embedded default (issue 14 item 5): creating a PGlite data directory
 * runs `initdb` in WebAssembly and then every migration, about 10 s on a small machine. The build
 * makes that directory once — an in-memory PGlite with every migration applied, dumped as a
 * gzip tarball with PGlite's `dumpDataDir` — and a fresh `DATA_DIR` starts from a copy of it
 * (`loadDataDir`); later migrations still apply on top as usual. The seed holds no keys or
 * tenant data: signing keys and everything else are made at first start, per installation.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import type { Database, Db } from './client.js';
import { runMigrations } from './migrate.js';

/** Where the build writes the seed (`packages/server/pglite-seed/seed.tar.gz`, from src or dist alike). */
export const DEFAULT_SEED_FILE = fileURLToPath(new URL('../../pglite-seed/seed.tar.gz', import.meta.url));

/** Make the seed: a migrated, empty PGlite data directory as a gzip tarball at `file`. Returns its size in bytes. */
export async function writeSeed(file: string = DEFAULT_SEED_FILE): Promise<number> {
  const client = new PGlite();
  await client.waitReady;
  try {
    const database: Database = { db: drizzlePglite(client) as unknown as Db, driver: 'pglite', raw: { kind: 'pglite', client }, close: () => client.close() };
    await runMigrations(database);
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

/**
 * The seed to start a new data directory from: its bytes when `dataDir` does not exist yet and
 * the seed file is there, else undefined (an existing directory is opened as it is).
 */
export function seedFor(dataDir: string, file: string = DEFAULT_SEED_FILE): Blob | undefined {
  if (fs.existsSync(dataDir) || !fs.existsSync(file)) return undefined;
  return new Blob([fs.readFileSync(file)]);
}
