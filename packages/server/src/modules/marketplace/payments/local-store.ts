/**
 * The local payment processor's events in the database (`local_processor_events`, migration 0043):
 * what `LocalProcessor` promised and has not delivered yet survives a restart (design §8.26;
 * local.ts). A platform table: every statement runs through `crossTenant`, in its own short
 * transaction. Only charges and transfers write here, and the marketplace makes both outside any
 * transaction (rentals.ts, payouts.ts); refunds, made inside one, never touch the store.
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../../db/client.js';
import { localProcessorEvents as E } from '../../../db/schema/index.js';
import { crossTenant } from '../../../db/tenant.js';
import type { LocalEventStore, StoredLocalEvent } from './local.js';

const WHY = "the local payment processor's own events (a platform table, no tenant data)";

/** {@link LocalEventStore} on the service's database. */
export class DbLocalEventStore implements LocalEventStore {
  constructor(private readonly db: Db) {}

  /** Record an event to deliver at `deliverAt` (once per id). */
  async save(e: StoredLocalEvent): Promise<void> {
    await crossTenant(this.db, WHY, (tx) => tx.insert(E).values({ eventId: e.id, type: e.type, data: e.data, deliverAt: e.deliverAt }).onConflictDoNothing());
  }

  /** The handler accepted the event: it is not delivered again. */
  async delivered(id: string): Promise<void> {
    await crossTenant(this.db, WHY, (tx) =>
      tx
        .update(E)
        .set({ deliveredAt: new Date() })
        .where(and(eq(E.eventId, id), isNull(E.deliveredAt))),
    );
  }

  /** Every event not delivered yet, the earliest due first. */
  async pending(): Promise<StoredLocalEvent[]> {
    const rows = await crossTenant(this.db, WHY, (tx) => tx.select().from(E).where(isNull(E.deliveredAt)).orderBy(asc(E.deliverAt), asc(E.eventId)));
    return rows.map((r) => ({ id: r.eventId, type: r.type, data: r.data as StoredLocalEvent['data'], deliverAt: r.deliverAt }));
  }
}
