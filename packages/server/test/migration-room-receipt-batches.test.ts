/**
 * Migrations 0041 and 0042 (issue 21): room envelope receipts move from one `room_receipts` row
 * per envelope to one `room_receipt_batches` row per (room message, receipt time), so an upgraded
 * database answers the same receipt times.
 */
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../src/db/migrate.js';
import { backend } from './harness.js';
import { migrationsBefore } from './migrations-before.js';

describe.skipIf(backend !== 'pglite')('migrations 0041-0042: room receipt batches', () => {
  const before = migrationsBefore('0041_room_receipt_batches');
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it('groups the receipts of each room message by receipt time and drops the old table', async () => {
    const client = new PGlite();
    const db = drizzle(client);
    await migrate(db, { migrationsFolder: before });
    const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const [tenant, m1, m2, a, b, c] = [1, 2, 3, 4, 5, 6].map(id);
    const row = (m: string, to: string, at: string) => `('${tenant}', '${m}', '${to}', '${at}')`;
    await client.exec(`insert into room_receipts (tenant_id, room_message_id, recipient_device_id, received_at) values
      ${[row(m1!, b!, '2026-11-01T10:00:00Z'), row(m1!, a!, '2026-11-01T10:00:00Z'), row(m1!, c!, '2026-11-01T10:00:05Z'), row(m2!, a!, '2026-11-01T10:00:00Z')].join(',\n')}`);

    await migrate(db, { migrationsFolder: MIGRATIONS_DIR });
    const batches = await client.query<{ room_message_id: string; recipients: string[]; received_at: Date }>(
      'select room_message_id, recipient_device_ids::text[] as recipients, received_at from room_receipt_batches order by room_message_id, received_at',
    );
    expect(batches.rows.map((r) => [r.room_message_id, r.recipients, r.received_at.toISOString()])).toEqual([
      [m1, [a, b], '2026-11-01T10:00:00.000Z'],
      [m1, [c], '2026-11-01T10:00:05.000Z'],
      [m2, [a], '2026-11-01T10:00:00.000Z'],
    ]);
    const old = await client.query("select 1 from information_schema.tables where table_name = 'room_receipts'");
    expect(old.rows).toEqual([]);
    await client.close();
  });
});
