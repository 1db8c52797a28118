/**
 * Spend caps per agent (docs/decisions.md "Spend caps").
 *
 * - Caps (`GET/PUT /agents/{hub_id}/spend-cap`, owner): a daily and a monthly limit per agent, in
 *   tokens or in cents; a PUT replaces both and appends `spend.cap_set` in the same transaction.
 * - Spend (`GET /agents/{hub_id}/spend`, `GET /spend`): today's and this month's usage (UTC) per
 *   model from the span roll-ups and today's raw spans (spend/rollups.ts), priced with the
 *   tenant's `model_prices` setting, against the caps.
 * - The skill pipeline's `budget` stage ({@link SpendService.budget}, design §8.6 as extended):
 *   fails when the calling agent is at or over a cap, naming the cap.
 * - Alerts: when a period's spend reaches 80 % or 100 % of its cap, ONE `spend_alert` per (agent,
 *   period, period start, threshold): the `agent_spend_alerts` key decides which transaction fires
 *   it (across instances); that transaction also appends `spend.alert` and enqueues the webhook
 *   `spend.alert` (outbox, in the transaction); the owner sockets get the event after commit
 *   ({@link SpendService.publish}). Alerts are checked by the budget stage and by the periodic
 *   sweep (jobs/spend-alerts.ts), never by the read routes.
 */
import type { AgentSpend, FleetSpend, SetSpendCapRequest, SkillStageOutcome, SpendAlertEvent, SpendCap, SpendTotals } from '@parley/protocol';
import { SPEND_PERIODS } from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import type { Notifier } from '../../realtime/notifier.js';
import { appendAudit, lockChain } from '../audit/index.js';
import { resolveAgent } from '../hub/index.js';
import type { SettingsService } from '../settings/index.js';
import { utcDay } from '../../lib/days.js';
import { enqueueInTx } from '../webhooks/index.js';
import { capDetail, fmt, judgePeriod, NO_CAPS, periodOf, priceUsage, reachedThresholds, type Caps } from './periods.js';
import * as repo from './repo.js';
import { readUsage } from './rollups.js';

/** The socket event (and, via webhooks/events.ts, the webhook `spend.alert`) of a spend alert. */
export const SPEND_ALERT_EVENT = 'spend_alert';

/** What the service needs. */
export interface SpendServiceDeps {
  db: Db;
  /** The tenant's `model_prices` (read in the caller's transaction). */
  settings: Pick<SettingsService, 'read'>;
  /** Owner sockets after commit. */
  notifier: Pick<Notifier, 'toOwners'>;
  /** Clock (tests). */
  now?: () => Date;
}

/** The budget stage's outcome and the alerts it fired (to {@link SpendService.publish} after commit). */
export interface BudgetResult {
  outcome: SkillStageOutcome;
  alerts: SpendAlertEvent[];
}

const capsOf = (row: repo.SpendCapRow | undefined): Caps => (row ? { unit: row.unit as Caps['unit'], dailyLimit: row.dailyLimit, monthlyLimit: row.monthlyLimit } : NO_CAPS);

const capOut = (deviceId: string, row: repo.SpendCapRow | undefined): SpendCap => {
  const c = capsOf(row);
  return { agent_id: deviceId, unit: c.unit, daily_limit: c.dailyLimit, monthly_limit: c.monthlyLimit, updated_by: row?.updatedBy ?? null, updated_at: row?.updatedAt.toISOString() ?? null };
};

export class SpendService {
  constructor(private readonly deps: SpendServiceDeps) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /** An agent's caps. @throws 404 not one of the tenant's agents. */
  getCap(tenantId: string, hubId: string): Promise<SpendCap> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const { device } = await resolveAgent(tx, hubId);
      return capOut(device.id, await repo.getCap(tx, device.id));
    });
  }

  /**
   * Replace an agent's caps (absent or null limit = no cap for that period; both null deletes the
   * row) and append `spend.cap_set` {unit, daily_limit, monthly_limit}, in one transaction.
   * @throws 404 not one of the tenant's agents (limits and unit are checked by the route schema).
   */
  setCap(tenantId: string, actor: string, hubId: string, body: SetSpendCapRequest): Promise<SpendCap> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const { device } = await resolveAgent(tx, hubId);
      const dailyLimit = body.daily_limit ?? null;
      const monthlyLimit = body.monthly_limit ?? null;
      let row: repo.SpendCapRow | undefined;
      if (dailyLimit === null && monthlyLimit === null) await repo.deleteCap(tx, device.id);
      else row = await repo.upsertCap(tx, { tenantId, deviceId: device.id, unit: body.unit, dailyLimit, monthlyLimit, updatedBy: actor, updatedAt: this.now() });
      await appendAudit(tx, tenantId, { type: 'spend.cap_set', actor, subject: device.id, data: { unit: body.unit, daily_limit: dailyLimit, monthly_limit: monthlyLimit } });
      return capOut(device.id, row);
    });
  }

  /** An agent's spend today and this month against its caps. @throws 404 not one of the tenant's agents. */
  agentSpend(tenantId: string, hubId: string): Promise<AgentSpend> {
    const now = this.now();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const { device, identity } = await resolveAgent(tx, hubId);
      const [out] = await this.spendOf(tx, tenantId, [{ deviceId: device.id, hubAddress: identity?.hubAddress ?? null }], now);
      return out!;
    });
  }

  /** Every agent's spend (by device id) and the fleet totals of today and this month. */
  fleetSpend(tenantId: string): Promise<FleetSpend> {
    const now = this.now();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const agents = await this.spendOf(tx, tenantId, await repo.listAgents(tx), now);
      const total = (period: 'day' | 'month'): SpendTotals => {
        const ps = agents.map((a) => a[period]);
        return {
          tokens: ps.reduce((n, p) => n + p.tokens, 0),
          cents: Math.round(ps.reduce((n, p) => n + p.cents, 0) * 10_000) / 10_000,
          unpriced_tokens: ps.reduce((n, p) => n + p.unpriced_tokens, 0),
          agents_over: ps.filter((p) => p.over).length,
        };
      };
      return { as_of: now.toISOString(), agents, totals: { day: total('day'), month: total('month') } };
    });
  }

  /**
   * The `budget` stage of the skill pipeline for the calling agent `deviceId` (named `agent` in the
   * detail), inside the pipeline's transaction `tx` (scoped to `tenantId`): fails when today's or
   * this month's spend is at or over its cap (the daily cap is named first), and fires the alerts
   * the spend reached. Passes with "no spend cap" for an agent without caps (nothing is read).
   */
  async budget(tx: Tx, tenantId: string, deviceId: string, agent: string, now: Date): Promise<BudgetResult> {
    const caps = capsOf(await repo.getCap(tx, deviceId));
    if (caps.dailyLimit === null && caps.monthlyLimit === null) return { outcome: { stage: 'budget', passed: true, detail: `${agent} has no spend cap` }, alerts: [] };
    const [spend] = await this.spendOf(tx, tenantId, [{ deviceId, hubAddress: null }], now, caps);
    const alerts = await this.fireAlerts(tx, tenantId, spend!);
    const over = SPEND_PERIODS.map((p) => spend![p]).find((p) => p.over);
    if (over) return { outcome: { stage: 'budget', passed: false, detail: capDetail(agent, over, caps.unit) }, alerts };
    const parts = SPEND_PERIODS.map((p) => spend![p])
      .filter((p) => p.limit !== null)
      .map((p) => `${p.period === 'day' ? 'today' : 'this month'} ${fmt(p.used, caps.unit)} of ${fmt(p.limit!, caps.unit)}`);
    return { outcome: { stage: 'budget', passed: true, detail: `within the spend caps of ${agent}: ${parts.join(', ')}` }, alerts };
  }

  /** Send fired alerts to the owner sockets (after the commit that fired them; the webhooks are already enqueued). */
  async publish(tenantId: string, alerts: readonly SpendAlertEvent[]): Promise<void> {
    for (const a of alerts) await this.deps.notifier.toOwners(tenantId, SPEND_ALERT_EVENT, a);
  }

  /** Check every capped agent of the tenant for alerts due (the periodic sweep), then publish them. Answers how many fired. */
  async sweepAlerts(tenantId: string): Promise<number> {
    const now = this.now();
    const alerts = await withTenant(this.deps.db, tenantId, async (tx) => {
      const capped = new Set((await repo.listCaps(tx)).map((c) => c.deviceId));
      const agents = (await repo.listAgents(tx)).filter((a) => capped.has(a.deviceId));
      const fired: SpendAlertEvent[] = [];
      for (const s of await this.spendOf(tx, tenantId, agents, now)) fired.push(...(await this.fireAlerts(tx, tenantId, s)));
      return fired;
    });
    await this.publish(tenantId, alerts);
    return alerts.length;
  }

  /**
   * Spend of `agents` today and this month (one usage read for all), priced with the tenant's
   * `model_prices`, against their caps (`caps` when given for a single agent, else read).
   */
  private async spendOf(tx: Tx, tenantId: string, agents: readonly { deviceId: string; hubAddress: string | null }[], now: Date, caps?: Caps): Promise<AgentSpend[]> {
    const day = periodOf('day', now);
    const month = periodOf('month', now);
    const prices = (await this.deps.settings.read(tx, tenantId)).model_prices;
    const capRows = caps ? undefined : new Map((await repo.listCaps(tx)).map((c) => [c.deviceId, c]));
    const usage = await readUsage(
      tx,
      tenantId,
      agents.map((a) => a.deviceId),
      month.start,
      utcDay(now),
      now,
    );
    return agents.map((a) => {
      const mine = usage.filter((u) => u.deviceId === a.deviceId);
      const c = caps ?? capsOf(capRows!.get(a.deviceId));
      return {
        agent_id: a.deviceId,
        hub_address: a.hubAddress,
        unit: c.unit,
        day: judgePeriod(day, priceUsage(mergeModels(mine.filter((u) => u.today)), prices), c),
        month: judgePeriod(month, priceUsage(mergeModels(mine), prices), c),
        as_of: now.toISOString(),
      };
    });
  }

  /**
   * Claim, audit and enqueue (webhook) every alert `s` reached that has not fired yet; answers the
   * newly fired ones. Reads first (no lock when every reached alert already fired: the common case
   * of a check above 80 %); otherwise takes the tenant's audit-chain lock BEFORE the first claim,
   * so the budget stage and the sweep always lock in the same order (chain, then alert keys) and
   * cannot deadlock.
   */
  private async fireAlerts(tx: Tx, tenantId: string, s: AgentSpend): Promise<SpendAlertEvent[]> {
    const reached = SPEND_PERIODS.flatMap((period) => reachedThresholds(s[period]).map((threshold) => ({ period, threshold, p: s[period] })));
    if (reached.length === 0) return [];
    const fired = await repo.firedAlerts(tx, s.agent_id, SPEND_PERIODS.map((period) => ({ period, start: s[period].start })));
    const pending = reached.filter((r) => !fired.has(`${r.period}:${r.p.start}:${r.threshold}`));
    if (pending.length === 0) return [];
    await lockChain(tx, tenantId);
    const out: SpendAlertEvent[] = [];
    for (const { period, threshold, p } of pending) {
      if (!(await repo.claimAlert(tx, { tenantId, deviceId: s.agent_id, period, periodStart: p.start, threshold, firedAt: new Date(s.as_of) }))) continue;
      const name = period === 'day' ? 'daily' : 'monthly';
      const event: SpendAlertEvent = {
        agent_id: s.agent_id,
        period,
        period_start: p.start,
        threshold,
        unit: s.unit,
        limit: p.limit!,
        used: p.used,
        severity: threshold >= 100 ? 'critical' : 'warning',
        category: 'performance',
        title: `Agent ${s.hub_address ?? s.agent_id} reached ${threshold}% of its ${name} spend cap`,
        message: `${fmt(p.used, s.unit)} of ${fmt(p.limit!, s.unit)} spent since ${p.start} (UTC)${threshold >= 100 ? '; skill checks and delegations are refused until the cap resets' : ''}`,
      };
      await appendAudit(tx, tenantId, { type: 'spend.alert', actor: 'system', subject: s.agent_id, data: { period, period_start: p.start, threshold, unit: s.unit, limit: p.limit, used: p.used } });
      await enqueueInTx(tx, tenantId, { ownersOfTenant: tenantId }, SPEND_ALERT_EVENT, event);
      out.push(event);
    }
    return out;
  }
}

/** Usage rows of one device summed per model (closed days and today together). */
function mergeModels(rows: readonly { model: string; inputTokens: number; outputTokens: number }[]) {
  const by = new Map<string, { model: string; inputTokens: number; outputTokens: number }>();
  for (const r of rows) {
    const m = by.get(r.model) ?? { model: r.model, inputTokens: 0, outputTokens: 0 };
    m.inputTokens += r.inputTokens;
    m.outputTokens += r.outputTokens;
    by.set(r.model, m);
  }
  return [...by.values()];
}

