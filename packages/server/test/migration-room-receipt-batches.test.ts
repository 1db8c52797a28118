/**
 * Migration 0041 (issue 21): room envelope receipts move from one `room_receipts` row per envelope
 * to one `room_receipt_batches` row per (room message, receipt time), so an upgraded database
 * answers the same receipt times; the old table stays for the previous release's instances. On
 * PostgreSQL the migrations run as a database owner that is not a superuser (docs/operations.md),
 * for whom forced row-level security would hide every row from the copy.
 */
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../src/db/migrate.js';
import { backend } from './harness.js';
import { migrationsBefore, withOwnerDatabase } from './migrations-before.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [tenantA, tenantB, m1, m2, a, b, c] = [1, 2, 3, 4, 5, 6, 7].map(id);

/** The old rows, per tenant (inserted in that tenant's scope: the table's policy is forced). */
const OLD: Record<string, string[]> = {
  [tenantA!]: [`('${m1}', '${b}', '2026-11-01T10:00:00Z')`, `('${m1}', '${a}', '2026-11-01T10:00:00Z')`, `('${m1}', '${c}', '2026-11-01T10:00:05Z')`],
  [tenantB!]: [`('${m2}', '${a}', '2026-11-01T10:00:00Z')`],
};

/** What the database must hold after the migration, as `message recipients time` lines. */
const EXPECTED = [`${m1} {${a},${b}} 2026-11-01T10:00:00.000Z`, `${m1} {${c}} 2026-11-01T10:00:05.000Z`, `${m2} {${a}} 2026-11-01T10:00:00.000Z`];

/** Store the old rows through `exec` (one SQL text at a time). */
async function storeOld(exec: (text: string) => Promise<unknown>): Promise<void> {
  for (const [tenant, rows] of Object.entries(OLD)) {
    await exec(`begin; select set_config('app.tenant_id', '${tenant}', true);
      insert into room_receipts (tenant_id, room_message_id, recipient_device_id, received_at)
      select '${tenant}', v.m::uuid, v.r::uuid, v.t::timestamptz from (values ${rows.join(', ')}) as v(m, r, t); commit`);
  }
}

const BATCHES = `select room_message_id::text || ' ' || recipient_device_ids::text || ' ' || to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as line
  from room_receipt_batches order by room_message_id, received_at`;
const OLD_COUNT = 'select count(*)::int as n from room_receipts';

describe('migration 0041: room receipt batches', () => {
  const before = migrationsBefore('0041_room_receipt_batches');
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it.skipIf(backend !== 'pglite')('groups the receipts of each room message by receipt time and keeps the old table', async () => {
    const client = new PGlite();
    const db = drizzle(client);
    await migrate(db, { migrationsFolder: before });
    await storeOld((text) => client.exec(text));
    await migrate(db, { migrationsFolder: MIGRATIONS_DIR });
    expect((await client.query<{ line: string }>(BATCHES)).rows.map((r) => r.line)).toEqual(EXPECTED);
    expect((await client.query<{ n: number }>(OLD_COUNT)).rows[0]!.n).toBe(4);
    await client.close();
  });

  it.skipIf(backend !== 'postgres')('copies every tenant when the migrations run as a database owner that is not a superuser', async () => {
    await withOwnerDatabase(async ({ ownerUrl, adminUrl }) => {
      const owner = new pg.Client({ connectionString: ownerUrl });
      await owner.connect();
      try {
        const db = drizzlePg(owner);
        await migratePg(db, { migrationsFolder: before });
        await storeOld((text) => owner.query(text));
        await migratePg(db, { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await owner.end();
      }
      const check = new pg.Client({ connectionString: adminUrl });
      await check.connect();
      try {
        expect((await check.query<{ line: string }>(BATCHES)).rows.map((r) => r.line)).toEqual(EXPECTED);
        expect((await check.query<{ n: number }>(OLD_COUNT)).rows[0]!.n).toBe(4);
      } finally {
        await check.end();
      }
    });
  });
});
