/**
 * Fast first start (`db/pglite-seed.ts`): a new PGlite data directory starts
 * from the build's migrated seed instead of initdb + every migration; it is then an ordinary
 * database (writes persist across reopenings, the seed is not read again), and a damaged seed
 * falls back to the slow path instead of stopping the service. The unpacking main.ts starts
 * before the app's modules load is the one openDatabase then uses.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { readTar, startCreateFromSeed, writeSeed } from '../../src/db/pglite-seed.js';
import { backend } from '../../testing/harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-seed-'));
const journal = JSON.parse(fs.readFileSync(new URL('../../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };

async function applied(database: Database): Promise<number> {
  if (database.raw.kind !== 'pglite') throw new Error('pglite only');
  const r = await database.raw.client.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
  return r.rows[0]!.n;
}

describe.skipIf(backend !== 'pglite')('PGlite seed', () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const seed = path.join(dir, 'seed.tar.gz');
  const good = path.join(dir, 'good.tar.gz');

  it('a new data directory starts migrated from the seed, then lives on its own', async () => {
    expect(await writeSeed(seed)).toBeGreaterThan(100_000);
    fs.copyFileSync(seed, good);
    const data = path.join(dir, 'data');
    const db = await openDatabase({ pgliteDir: data, pgliteSeed: seed });
    try {
      expect(await applied(db)).toBe(journal.entries.length);
      if (db.raw.kind !== 'pglite') throw new Error('pglite only');
      // Without the template databases (fewer files to write at first start).
      expect((await db.raw.client.query<{ datname: string }>('select datname from pg_database')).rows.map((r) => r.datname)).toEqual(['postgres']);
      await runMigrations(db); // nothing left to apply
      expect(await applied(db)).toBe(journal.entries.length);
      await db.raw.client.query(`insert into tenants (id, name) values ('00000000-0000-4000-8000-000000000001', 'seeded')`);
    } finally {
      await db.close();
    }
    fs.writeFileSync(seed, 'not a tarball'); // the seed is not read for an existing directory
    const again = await openDatabase({ pgliteDir: data, pgliteSeed: seed });
    try {
      if (again.raw.kind !== 'pglite') throw new Error('pglite only');
      expect((await again.raw.client.query<{ name: string }>('select name from tenants')).rows.map((r) => r.name)).toEqual(['seeded']);
    } finally {
      await again.close();
    }
  });

  it('an unpacking started ahead is taken over by openDatabase, and no half-made directory is left', async () => {
    const data = path.join(dir, 'ahead');
    startCreateFromSeed(data, good);
    const db = await openDatabase({ pgliteDir: data, pgliteSeed: good });
    try {
      expect(await applied(db)).toBe(journal.entries.length);
      expect(fs.readdirSync(dir).filter((name) => name.includes('.seeding-'))).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('the seed reader refuses entries outside the data directory and archives without a database', () => {
    const header = (name: string) => {
      const block = Buffer.alloc(512);
      block.write(name, 0);
      block.write('0000644\0', 100);
      block.write('00000000000\0', 124);
      block.write('0', 156);
      return block;
    };
    expect(() => readTar(Buffer.concat([header('../escape'), Buffer.alloc(1024)]))).toThrow('outside the data directory');
    expect(() => readTar(Buffer.concat([header('base/1'), Buffer.alloc(1024)]))).toThrow('no PostgreSQL data directory');
  });

  it('a damaged seed falls back to initdb and migrations', async () => {
    fs.writeFileSync(seed, 'not a tarball');
    const db = await openDatabase({ pgliteDir: path.join(dir, 'fallback'), pgliteSeed: seed });
    try {
      await runMigrations(db);
      expect(await applied(db)).toBe(journal.entries.length);
    } finally {
      await db.close();
    }
  });
});
