/**
 * Compliance report of one agent (contract §3.3 "compliance reports" are an enterprise-tier feature,
 * §4.12 `GET /trust-scores/{agent_id}/report`; docs/decisions.md "Trust score routes"). Built in one
 * tenant-scoped transaction, so every section describes the same moment. Not stored: `report_id`
 * is a fresh UUID per generation. Sections:
 *
 * - `agent`: device id, hub address, DID, display name, current tier, enrolment time;
 * - `scores`: the current answer of each window (7d, 30d, 90d) as `GET /trust-scores/{agent_id}`
 *   gives it (contract §3.9 warm-up answer when the engine has not scored the window yet);
 * - `tier_changes`: the identity's tier changes of the last {@link REPORT_TIER_CHANGE_DAYS} days;
 * - `policy`: policy evaluations where the agent was the sender in the last
 *   {@link REPORT_PERIOD_DAYS} days, per outcome; violations = `block` + `hold` (as the
 *   `compliance` dimension counts them);
 * - `drift`: the 30-day drift answer (drift.ts);
 * - `active_grants`: active Skill Permission Tokens now;
 * - `audit`: audit events of the last 30 days that concern the agent (subject = its device or
 *   identity id, or actor = the device) and whether the tenant's whole hash chain verifies.
 *
 * 403 unless the agent's current tier is `enterprise` (an agent without a hub identity is
 * `unverified`); 404 for an unknown or other tenant's agent.
 */
import { randomUUID } from 'node:crypto';
import type { TrustReport, TrustReportScore } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { forbidden } from '../../lib/errors.js';
import { verifyTenantChain } from '../audit/index.js';
import { hubDid, resolveAgent } from '../hub/index.js';
import { countActiveGrants } from '../grants/index.js';
import { agentDrift } from './drift.js';
import { agentTier, currentScore, tierChangeOut } from './query.js';
import * as q from './query-repo.js';
import { TRUST_WINDOWS, type TrustWindow } from './types.js';

/** Period of the policy and audit sections, days. */
export const REPORT_PERIOD_DAYS = 30;
/** Period of the tier-change section, days (the longest score window). */
export const REPORT_TIER_CHANGE_DAYS = 90;
/** Policy outcomes that count as violations. */
export const VIOLATION_OUTCOMES = ['block', 'hold'] as const;
const DAY_MS = 24 * 3600_000;

export class TrustReportService {
  constructor(private readonly opts: { db: Db; now?: () => Date }) {}

  /** Build the report of `agentRef` (module comment). @throws 404 unknown agent; 403 below the enterprise tier. */
  report(tenantId: string, agentRef: string): Promise<TrustReport> {
    const now = this.opts.now?.() ?? new Date();
    const periodStart = new Date(now.getTime() - REPORT_PERIOD_DAYS * DAY_MS);
    return withTenant(this.opts.db, tenantId, async (tx) => {
      const agent = await resolveAgent(tx, agentRef);
      const tier = agentTier(agent);
      if (tier !== 'enterprise') throw forbidden(`compliance reports are reserved for the enterprise tier (contract §3.3); this agent's tier is ${tier}`);
      const deviceId = agent.device.id;
      const scores = {} as Record<TrustWindow, TrustReportScore>;
      for (const w of TRUST_WINDOWS) {
        const s = await currentScore(tx, agent, w, now);
        scores[w] = { composite_score: s.composite_score, dimensions: s.dimensions, percentile: s.percentile, computed_at: s.computed_at, sources: s.sources };
      }
      const identity = agent.identity;
      const changes = identity ? await q.tierChangesSince(tx, identity.id, new Date(now.getTime() - REPORT_TIER_CHANGE_DAYS * DAY_MS)) : [];
      const byOutcome = await q.policyOutcomesSince(tx, deviceId, periodStart);
      const evaluations = Object.values(byOutcome).reduce((a, b) => a + b, 0);
      const violations = VIOLATION_OUTCOMES.reduce((a, o) => a + (byOutcome[o] ?? 0), 0);
      const subjects = identity ? [deviceId, identity.id] : [deviceId];
      return {
        report_id: randomUUID(),
        generated_at: now.toISOString(),
        agent: {
          agent_id: deviceId,
          hub_address: identity?.hubAddress ?? null,
          did: identity ? hubDid(identity.hubAddress) : null,
          display_name: identity?.displayName ?? null,
          tier,
          enrolled_at: agent.device.enrolledAt.toISOString(),
        },
        scores,
        tier_changes: changes.map(tierChangeOut),
        policy: { period_days: REPORT_PERIOD_DAYS, evaluations, violations, by_outcome: byOutcome },
        drift: await agentDrift(tx, agent, '30d', now),
        active_grants: await countActiveGrants(tx, deviceId, now),
        audit: {
          period_days: REPORT_PERIOD_DAYS,
          events_30d: await q.countAgentAuditEvents(tx, subjects, `device:${deviceId}`, periodStart),
          chain_valid: (await verifyTenantChain(tx, tenantId)).valid,
        },
      };
    });
  }
}
