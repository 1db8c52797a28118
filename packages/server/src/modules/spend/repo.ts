/**
 * Queries of spend caps: `agent_spend_caps`, `agent_spend_alerts` and the
 * tenant's agent list. Every function runs in a tenant-scoped transaction (RLS).
 */
import { and, eq, or, sql } from 'drizzle-orm';
import type { SpendAlertThreshold, SpendPeriod, SpendUnit } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import { agentSpendAlerts, agentSpendCaps } from '../../db/schema/index.js';

/** A stored cap row. */
export type SpendCapRow = typeof agentSpendCaps.$inferSelect;

/** The agent's caps, if any. */
export async function getCap(tx: Tx, deviceId: string): Promise<SpendCapRow | undefined> {
  const [row] = await tx.select().from(agentSpendCaps).where(eq(agentSpendCaps.deviceId, deviceId));
  return row;
}

/** The caps of every agent of the tenant that has some. */
export function listCaps(tx: Tx): Promise<SpendCapRow[]> {
  return tx.select().from(agentSpendCaps);
}

/** Insert or replace the agent's caps; answers the row. */
export async function upsertCap(tx: Tx, row: { tenantId: string; deviceId: string; unit: SpendUnit; dailyLimit: number | null; monthlyLimit: number | null; updatedBy: string; updatedAt: Date }): Promise<SpendCapRow> {
  const [out] = await tx
    .insert(agentSpendCaps)
    .values(row)
    .onConflictDoUpdate({
      target: [agentSpendCaps.tenantId, agentSpendCaps.deviceId],
      set: { unit: row.unit, dailyLimit: row.dailyLimit, monthlyLimit: row.monthlyLimit, updatedBy: row.updatedBy, updatedAt: row.updatedAt },
    })
    .returning();
  return out!;
}

/** Remove the agent's caps (no row = no caps). */
export async function deleteCap(tx: Tx, deviceId: string): Promise<void> {
  await tx.delete(agentSpendCaps).where(eq(agentSpendCaps.deviceId, deviceId));
}

/**
 * Record that the alert (agent, period, its first day, threshold) fired; true only for the
 * transaction whose insert created the row (a concurrent one waits on the key and gets false).
 */
export async function claimAlert(tx: Tx, a: { tenantId: string; deviceId: string; period: SpendPeriod; periodStart: string; threshold: SpendAlertThreshold; firedAt: Date }): Promise<boolean> {
  const out = await tx.insert(agentSpendAlerts).values(a).onConflictDoNothing().returning({ d: agentSpendAlerts.deviceId });
  return out.length > 0;
}

/** The alerts of the agent already fired for these periods (`period:period_start:threshold` keys). */
export async function firedAlerts(tx: Tx, deviceId: string, periods: readonly { period: SpendPeriod; start: string }[]): Promise<Set<string>> {
  const rows = await tx
    .select({ period: agentSpendAlerts.period, start: agentSpendAlerts.periodStart, threshold: agentSpendAlerts.threshold })
    .from(agentSpendAlerts)
    .where(and(eq(agentSpendAlerts.deviceId, deviceId), or(...periods.map((p) => and(eq(agentSpendAlerts.period, p.period), eq(agentSpendAlerts.periodStart, p.start))))));
  return new Set(rows.map((r) => `${r.period}:${r.start}:${r.threshold}`));
}

/** The tenant's agent devices (not deleted) with the hub address bound to each, by device id. */
export async function listAgents(tx: Tx): Promise<{ deviceId: string; hubAddress: string | null }[]> {
  const res = (await tx.execute(sql`
    select d.id as device_id, h.hub_address from devices d left join hub_identities h on h.device_id = d.id
    where d.kind = 'agent' and d.deleted_at is null order by d.id`)) as unknown as { rows: { device_id: string; hub_address: string | null }[] };
  return res.rows.map((r) => ({ deviceId: r.device_id, hubAddress: r.hub_address }));
}
