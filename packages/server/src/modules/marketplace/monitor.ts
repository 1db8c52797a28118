/**
 * Continuous trust monitoring of rented agents (contract §4.16 "the rented agent's trust score is
 * continuously monitored"; design §8.35 `suspended`). An active rental whose agent falls below the
 * listing's tier (`min_tier`) or score floor (`min_score`), or whose identity is suspended, is
 * suspended at once — its room's messages held, its SPT revoked, `rental_updated` to both tenants' owners and webhooks, a
 * `rental.suspended` event in both chains — and resumes (`rental.resumed`, a new SPT until the
 * rental's end, the held room messages delivered) only when the agent is back above both. Checked by the marketplace job on every
 * poll and after each trust recompute; the listing's tier and score are the live copies the
 * hub_identities trigger keeps (migration 0021).
 */
import type { Db } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { lockChains } from '../audit/index.js';
import * as repo from './rentals-repo.js';
import type { RentalService } from './rentals.js';
import type { RentalRoom } from './room.js';

/** Counts of one monitor pass. */
export interface MonitorResult {
  suspended: number;
  resumed: number;
}

export class RentalMonitor {
  constructor(private readonly deps: { db: Db; rentals: RentalService; room: RentalRoom }) {}

  /** One pass over every tenant's active and trust-suspended rentals. */
  async check(): Promise<MonitorResult> {
    const out: MonitorResult = { suspended: 0, resumed: 0 };
    const changed = await crossTenant(this.deps.db, 'rental trust monitor: rentals of every tenant against their agents', (tx) => repo.trustMismatches(tx));
    for (const m of changed) {
      const row = await withTenant(this.deps.db, await this.renterOf(m.id), async (tx) => {
        const peek = await repo.getRental(tx, m.id);
        if (!peek) return null;
        await lockChains(tx, [peek.tenantId, peek.partnerTenantId]);
        const r = await repo.getRental(tx, m.id, true);
        if (!r || r.status !== m.status) return null;
        if (r.status === 'active') return { row: await this.deps.rentals.end(tx, r, 'suspended', 'trust_drop'), previous: 'active' };
        return { row: await this.deps.rentals.resumeIn(tx, r), previous: 'suspended' };
      });
      if (!row) continue;
      out[row.previous === 'active' ? 'suspended' : 'resumed']++;
      await this.deps.rentals.notify(row.row, row.previous);
      // Messages the suspension held go out now that the rental is active again.
      if (row.previous === 'suspended') await this.deps.room.releaseSuspended(row.row.id, row.row.tenantId);
    }
    return out;
  }

  private async renterOf(id: string): Promise<string> {
    return crossTenant(this.deps.db, 'rental trust monitor', async (tx) => (await repo.getRental(tx, id))!.tenantId);
  }
}
