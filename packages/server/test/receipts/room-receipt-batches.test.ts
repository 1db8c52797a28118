/**
 * Delivered receipts of room envelopes as `room_receipt_batches` rows: a write records
 * only the recipients a message has no row for yet, under the tenant's receipt lock, so writers
 * racing on the same envelopes (two instances' live batches, a member-timeline page) record and
 * publish every receipt exactly once.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { RoomMessageDeliveredEvent } from '@parley/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiptPublisher } from '../../src/modules/receipts/publisher.js';
import { RoomDeliveries, type DeliveredEnvelope } from '../../src/modules/receipts/room-deliveries.js';
import { InProcessBus, type BusEvent } from '../../src/realtime/bus.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('room receipt batches', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('racing writers record and publish each receipt once; a message keeps the time of its first row', async () => {
    const tenantId = randomUUID();
    const [m1, m2, room, sender, a, b, c] = Array.from({ length: 7 }, () => randomUUID());
    const published: string[] = [];
    const bus = new InProcessBus();
    bus.subscribe((e: BusEvent) => {
      if (e.type !== 'frames') return;
      for (const f of e.frames) {
        const d = f.data as RoomMessageDeliveredEvent;
        for (const id of d.room_message_ids) published.push(`${id}:${d.device_id}`);
      }
    });
    const publisher = new ReceiptPublisher(new Notifier(bus));
    // Two instances on the same database, batching with no delay.
    const [one, two] = [0, 1].map(() => new RoomDeliveries({ db: t.app.parley.database.db, publisher, delayMs: 0 }));
    const ref = (m: string, to: string, releaseSeq: number): DeliveredEnvelope => ({ roomMessageId: m!, recipientDeviceId: to!, roomId: room!, senderDeviceId: sender!, releaseSeq });
    one!.delivered(tenantId, ref(m1!, a!, 1));
    one!.delivered(tenantId, ref(m1!, b!, 1));
    one!.delivered(tenantId, ref(m1!, b!, 1)); // a second socket of the same recipient
    two!.delivered(tenantId, ref(m1!, b!, 1));
    two!.delivered(tenantId, ref(m2!, a!, 2));
    await Promise.all([one!.fetched(tenantId, [ref(m1!, a!, 1), ref(m2!, a!, 2), ref(m2!, c!, 2)]), one!.drain(), two!.drain()]);
    // A later write of recorded and new envelopes records only the new one.
    await two!.fetched(tenantId, [ref(m1!, a!, 1), ref(m1!, c!, 1)]);

    expect(published.sort()).toEqual([`${m1}:${a}`, `${m1}:${b}`, `${m1}:${c}`, `${m2}:${a}`, `${m2}:${c}`].sort());
    const rows = await t.app.parley.database.db.execute<{ mid: string; rid: string; n: number }>(
      sql`select room_message_id as mid, rid::text, count(*)::int as n from room_receipt_batches, unnest(recipient_device_ids) as rid group by 1, 2 order by 1, 2`,
    );
    const recorded = ((rows as unknown as { rows: { mid: string; rid: string; n: number }[] }).rows ?? rows).map((r) => `${r.mid}:${r.rid}x${r.n}`);
    expect(recorded.sort()).toEqual([`${m1}:${a}x1`, `${m1}:${b}x1`, `${m1}:${c}x1`, `${m2}:${a}x1`, `${m2}:${c}x1`].sort());
  });
});
