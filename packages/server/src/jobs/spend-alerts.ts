/**
 * Scheduled job: the spend alert sweep (docs/decisions.md "Spend caps"). One
 * instance per interval (`SPEND_ALERT_INTERVAL_MINUTES`, default 5; jobs/cluster-schedule.ts)
 * visits every tenant that caps an agent and fires the 80 % / 100 % alerts its agents' spend
 * reached (SpendService.sweepAlerts): agents that never call the skill pipeline are alerted too.
 * Each alert still fires once: the `agent_spend_alerts` key decides.
 */
import { sql } from 'drizzle-orm';
import { crossTenant } from '../db/tenant.js';
import type { SpendService } from '../modules/spend/service.js';
import { schedulePeriodic, type PeriodicJobOptions } from './cluster-schedule.js';

/** `scheduled_jobs.name` of the sweep. */
export const SPEND_ALERTS_JOB = 'spend_alerts';

/** Options of {@link scheduleSpendAlerts} (`intervalMs` = config.spendAlertIntervalMs). */
export interface SpendAlertsJobOptions extends PeriodicJobOptions {
  spend: Pick<SpendService, 'sweepAlerts'>;
}

/** Start the cluster-wide sweep; returns `stop()` (resolves after a run in progress). */
export function scheduleSpendAlerts(o: SpendAlertsJobOptions): () => Promise<void> {
  return schedulePeriodic(o, SPEND_ALERTS_JOB, async () => {
    const ids = await crossTenant(o.db, 'the spend alert sweep visits every tenant that caps an agent', async (tx) =>
      ((await tx.execute(sql`select distinct tenant_id from agent_spend_caps order by 1`)) as unknown as { rows: { tenant_id: string }[] }).rows.map((r) => r.tenant_id),
    );
    let alerts = 0;
    for (const id of ids) alerts += await o.spend.sweepAlerts(id);
    return { tenants: ids.length, alerts };
  });
}
