/**
 * Migration 0040: delivered times move from `messages.delivered_at` to
 * `message_receipts`, and every device's running counts are built from what is stored, so an
 * upgraded database answers the same delivered times and pending counts as before. On PostgreSQL
 * the migrations run as a database owner that is not a superuser (docs/operations.md), for whom
 * forced row-level security would hide every message from the copy.
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

const TAG = '0040_message_receipts';
const [tenant, conversation, a, b] = ['1', '2', '3', '4'].map((d) => `0000000${d}-0000-4000-8000-000000000000`);

/** The message rows (foreign keys and triggers off: the migration reads messages, nothing else); needs a superuser. */
const SEED = (() => {
  const row = (id: number, to: string, from: string, delivered: string | null) =>
    `('00000000-0000-4000-8000-${String(id).padStart(12, '0')}', '${tenant}', '${conversation}', '${tenant}', '${tenant}', '${from}', '${to}', '\\x00', '\\x00', 'text', 'normal', ${delivered ? `'${delivered}'` : 'null'})`;
  return `insert into tenants (id, name) values ('${tenant}', 't');
    set session_replication_role = replica;
    insert into messages (id, tenant_id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id, header_blob, ciphertext, message_type, priority, delivered_at) values
      ${[row(1, a!, b!, '2026-11-01T10:00:00Z'), row(2, a!, b!, null), row(3, a!, b!, '2026-11-01T10:00:02Z'), row(4, b!, a!, null), row(5, b!, a!, null)].join(',\n')};
    set session_replication_role = origin;`;
})();

type Query = <R>(text: string) => Promise<R[]>;

/** The receipts, counts and columns an upgraded database must hold. */
async function expectMigrated(query: Query): Promise<void> {
  const receipts = await query<{ message_id: string; recipient_device_id: string; delivered_at: Date }>(
    'select message_id, recipient_device_id, delivered_at from message_receipts order by message_id',
  );
  expect(receipts.map((r) => [r.message_id.slice(-1), r.recipient_device_id, r.delivered_at.toISOString()])).toEqual([
    ['1', a, '2026-11-01T10:00:00.000Z'],
    ['3', a, '2026-11-01T10:00:02.000Z'],
  ]);
  const counts = await query<{ device_id: string; kind: string; n: string }>('select device_id, kind, n::text from device_message_counts order by device_id, kind');
  expect(counts.map((r) => [r.device_id, r.kind, r.n])).toEqual([
    [a, 'delivered', '2'],
    [a, 'received', '3'],
    [b, 'received', '2'],
  ]);
  expect(await query("select 1 from information_schema.columns where table_name = 'messages' and column_name = 'delivered_at'")).toEqual([]);
}

describe('migration 0040: message receipts', () => {
  const before = migrationsBefore(TAG);
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it.skipIf(backend !== 'pglite')('moves delivered times into receipts and counts each device received and delivered messages', async () => {
    const client = new PGlite();
    const db = drizzle(client);
    await migrate(db, { migrationsFolder: before });
    await client.exec(SEED);
    await migrate(db, { migrationsFolder: MIGRATIONS_DIR });
    await expectMigrated(async (text) => (await client.query(text)).rows as never);
    await client.close();
  });

  it.skipIf(backend !== 'postgres')('does the same when the migrations run as a database owner that is not a superuser', async () => {
    await withOwnerDatabase(async ({ ownerUrl, adminUrl }) => {
      const owner = new pg.Client({ connectionString: ownerUrl });
      const admin = new pg.Client({ connectionString: adminUrl });
      await owner.connect();
      await admin.connect();
      try {
        await migratePg(drizzlePg(owner), { migrationsFolder: before });
        await admin.query(SEED);
        await migratePg(drizzlePg(owner), { migrationsFolder: MIGRATIONS_DIR });
        await expectMigrated(async (text) => (await admin.query(text)).rows);
      } finally {
        await owner.end();
        await admin.end();
      }
    });
  });
});
