/**
 * Migrations 0041 and 0042: room envelope receipts move from one `room_receipts` row per
 * envelope to one `room_receipt_batches` row per (room message, receipt time), across a rolling
 * upgrade. 0041 copies the receipts recorded so far and keeps the old table for the previous
 * release's instances; 0042 copies what they recorded meanwhile, except envelopes that a batch row
 * already names (a receipt stays recorded once), and drops the old table. On PostgreSQL the
 * migrations run as a database owner that is not a superuser (docs/operations.md), for whom forced
 * row-level security would hide every row from the copies.
 */
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { backend } from '../../testing/harness.js';
import { migrationsBefore, withOwnerDatabase } from './migrations-before.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [tenantA, tenantB, m1, m2, a, b, c, d] = [1, 2, 3, 4, 5, 6, 7, 8].map(id);

/** `(room message, recipient, time)` rows per tenant. */
type Rows = Record<string, string[]>;

/** Recorded before 0041, in `room_receipts`. */
const BEFORE_0041: Rows = {
  [tenantA!]: [`('${m1}', '${b}', '2026-11-01T10:00:00Z')`, `('${m1}', '${a}', '2026-11-01T10:00:00Z')`, `('${m1}', '${c}', '2026-11-01T10:00:05Z')`],
  [tenantB!]: [`('${m2}', '${a}', '2026-11-01T10:00:00Z')`],
};

/** Recorded by a new instance after 0041 (one batch row: `(room message, recipients, time)`). */
const NEW_INSTANCE: Rows = { [tenantB!]: [`('${m2}', '{${d}}', '2026-11-01T10:01:00Z')`] };

/**
 * Recorded by the previous release's instances after 0041, in `room_receipts` (its key keeps an
 * envelope there once): a new recipient of m1; two new recipients of m2 at one time (one row); `d`
 * of m2 again, which the new instance's batch row names already (not copied).
 */
const OLD_INSTANCE: Rows = {
  [tenantA!]: [`('${m1}', '${d}', '2026-11-01T10:02:00Z')`],
  [tenantB!]: [`('${m2}', '${c}', '2026-11-01T10:03:00Z')`, `('${m2}', '${b}', '2026-11-01T10:03:00Z')`, `('${m2}', '${d}', '2026-11-01T10:04:00Z')`],
};

/** `room_receipt_batches` after 0041, as `message recipients time` lines. */
const AFTER_0041 = [`${m1} {${a},${b}} 2026-11-01T10:00:00.000Z`, `${m1} {${c}} 2026-11-01T10:00:05.000Z`, `${m2} {${a}} 2026-11-01T10:00:00.000Z`];

/** ... and after 0042. */
const AFTER_0042 = [
  `${m1} {${a},${b}} 2026-11-01T10:00:00.000Z`,
  `${m1} {${c}} 2026-11-01T10:00:05.000Z`,
  `${m1} {${d}} 2026-11-01T10:02:00.000Z`,
  `${m2} {${a}} 2026-11-01T10:00:00.000Z`,
  `${m2} {${d}} 2026-11-01T10:01:00.000Z`,
  `${m2} {${b},${c}} 2026-11-01T10:03:00.000Z`,
];

/** Insert `rows` into `table` in each tenant's scope (both tables' policies are forced). */
async function store(exec: (text: string) => Promise<unknown>, table: 'room_receipts' | 'room_receipt_batches', rows: Rows): Promise<void> {
  const recipient = table === 'room_receipts' ? 'recipient_device_id' : 'recipient_device_ids';
  const cast = table === 'room_receipts' ? 'uuid' : 'uuid[]';
  for (const [tenant, values] of Object.entries(rows)) {
    await exec(`begin; select set_config('app.tenant_id', '${tenant}', true);
      insert into ${table} (tenant_id, room_message_id, ${recipient}, received_at)
      select '${tenant}', v.m::uuid, v.r::${cast}, v.t::timestamptz from (values ${values.join(', ')}) as v(m, r, t); commit`);
  }
}

const BATCHES = `select room_message_id::text || ' ' || recipient_device_ids::text || ' ' || to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as line
  from room_receipt_batches order by room_message_id, received_at`;
const OLD_COUNT = 'select count(*)::int as n from room_receipts';
const OLD_TABLE = `select to_regclass('room_receipts')::text as t`;
const FORCED = `select relforcerowsecurity as forced from pg_class where relname = 'room_receipt_batches'`;

type Query = <R>(text: string) => Promise<R[]>;

/**
 * The rolling upgrade through 0041 and 0042 on one database: `exec` and `migrateTo` as the
 * migrating role, `read` as a role that row-level security does not hide rows from.
 */
async function upgrade(exec: (text: string) => Promise<unknown>, migrateTo: (folder: string) => Promise<void>, read: Query, folders: { before0041: string; before0042: string }) {
  await migrateTo(folders.before0041);
  await store(exec, 'room_receipts', BEFORE_0041);
  await migrateTo(folders.before0042);
  expect((await read<{ line: string }>(BATCHES)).map((r) => r.line)).toEqual(AFTER_0041);
  expect((await read<{ n: number }>(OLD_COUNT))[0]!.n).toBe(4);
  await store(exec, 'room_receipt_batches', NEW_INSTANCE);
  await store(exec, 'room_receipts', OLD_INSTANCE);
  await migrateTo(MIGRATIONS_DIR);
  expect((await read<{ line: string }>(BATCHES)).map((r) => r.line)).toEqual(AFTER_0042);
  expect((await read<{ t: string | null }>(OLD_TABLE))[0]!.t).toBeNull();
  expect((await read<{ forced: boolean }>(FORCED))[0]!.forced).toBe(true);
}

describe('migrations 0041 and 0042: room receipt batches across a rolling upgrade', () => {
  const folders = { before0041: migrationsBefore('0041_room_receipt_batches'), before0042: migrationsBefore('0042_drop_room_receipts') };
  afterAll(() => Object.values(folders).forEach((f) => fs.rmSync(f, { recursive: true, force: true })));

  it.skipIf(backend !== 'pglite')('copies the receipts of both releases once, grouped by receipt time, then drops the old table', async () => {
    const client = new PGlite();
    const db = drizzle(client);
    await upgrade(
      (text) => client.exec(text),
      (folder) => migrate(db, { migrationsFolder: folder }),
      async (text) => (await client.query(text)).rows as never[],
      folders,
    );
    await client.close();
  });

  it.skipIf(backend !== 'postgres')('copies every tenant when the migrations run as a database owner that is not a superuser', async () => {
    await withOwnerDatabase(async ({ ownerUrl, adminUrl }) => {
      const [owner, admin] = [new pg.Client({ connectionString: ownerUrl }), new pg.Client({ connectionString: adminUrl })];
      await owner.connect();
      await admin.connect();
      try {
        const db = drizzlePg(owner);
        await upgrade(
          (text) => owner.query(text),
          (folder) => migratePg(db, { migrationsFolder: folder }),
          async (text) => (await admin.query(text)).rows as never[],
          folders,
        );
      } finally {
        await owner.end();
        await admin.end();
      }
    });
  });
});
