/**
 * Policy evaluation records at their cost (contract §2.9 compliance; design §8.14): the trust
 * `compliance` dimension and the compliance report's outcome counts are the same whether every
 * evaluation is a `policy_evaluations` row (how allowed deliveries were stored by older versions,
 * still read for old rows) or the allowed ones are counted in `policy_allow_counts` by the real
 * decision path (`decideAll`: one row per non-allow item, one count per sender and kind).
 *
 * Property (fast-check): random decision calls (sender, time over ten days, outcomes) are written
 * both ways into two tenants; per agent and UTC day, `extractSignals` answers the same
 * `policyEvaluations` / `policyViolations` for both and for a reference computed in JavaScript from
 * the per-delivery list, `measureDimensions` the same compliance, and `policyOutcomesSince` (the
 * report) the same counts per outcome from a time in the middle of a day.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import type { PolicyAction } from '../../src/modules/policies/engine.js';
import type { DecideItem } from '../../src/modules/policies/types.js';
import { measureDimensions } from '../../src/modules/trust/dimensions.js';
import { policyOutcomesSince } from '../../src/modules/trust/query-repo.js';
import { extractSignals, type TrustAgent } from '../../src/modules/trust/repo.js';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const DAY = 86_400_000;
const NOW = new Date('2026-03-10T15:00:00Z');
const FROM_DAY = '2026-03-01';
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** One decision call: a sender's items at one time (one transaction), each with its outcome. */
interface Call {
  sender: number;
  at: Date;
  outcomes: PolicyAction[];
}

const callArb = fc.record({
  sender: fc.integer({ min: 0, max: 2 }),
  // Any second from FROM_DAY 00:00 to NOW - 1 s.
  at: fc.integer({ min: 0, max: (NOW.getTime() - Date.parse(`${FROM_DAY}T00:00:00Z`)) / 1000 - 1 }).map((s) => new Date(Date.parse(`${FROM_DAY}T00:00:00Z`) + s * 1000)),
  // Mostly allows, as in a room.
  outcomes: fc.array(fc.oneof({ weight: 6, arbitrary: fc.constant<PolicyAction>('allow') }, { weight: 1, arbitrary: fc.constantFrom<PolicyAction>('block', 'hold', 'notify') }), { minLength: 1, maxLength: 12 }),
});

describe('compliance from counted allows equals compliance from one row per evaluation', () => {
  let t: TestApp;
  let legacy: Owner;
  let counted: Owner;

  beforeAll(async () => {
    t = await startApp();
    legacy = await newOwner(t, 'Per-row');
    counted = await newOwner(t, 'Counted');
  });
  afterAll(() => t.close());

  const db = () => t.app.parley.database.db;

  /** The pre-issue-21 shape: one policy_evaluations row per evaluated delivery, `allow` included. */
  async function writeRows(tenantId: string, senders: string[], calls: Call[]) {
    await withTenant(db(), tenantId, async (tx) => {
      for (const c of calls) {
        for (const outcome of c.outcomes) {
          await tx.execute(sql`
            insert into policy_evaluations (id, tenant_id, subject_kind, subject_id, sender_device_id, outcome, duration_us, created_at)
            values (${randomUUID()}, ${tenantId}, 'room_envelope', ${randomUUID()}, ${senders[c.sender]!}, ${outcome}, 1, ${c.at.toISOString()}::timestamptz)`);
        }
      }
    });
  }

  /**
   * The real decision path: one `decideAll` per call in its own transaction (the tenant has no
   * policy, so each item's default outcome decides), then that transaction's records moved to the
   * call's time (they carry the transaction's `now()`, which a test cannot choose).
   */
  async function writeDecided(tenantId: string, senders: string[], calls: Call[]) {
    for (const c of calls) {
      await withTenant(db(), tenantId, async (tx) => {
        const sender = senders[c.sender]!;
        const items: DecideItem[] = c.outcomes.map((outcome) => ({
          subjectKind: 'room_envelope',
          subjectId: randomUUID(),
          defaultOutcome: outcome,
          ctx: { roomId: null, messageType: 'text', priority: 'normal', senderKind: 'agent', recipientKind: 'agent', senderDeviceId: sender, recipientDeviceId: randomUUID(), senderHubAddress: null, senderTier: 'unverified', crossTenant: false, now: c.at },
        }));
        await t.app.parley.policies.decide(tx, tenantId, items);
        const at = c.at.toISOString();
        await tx.execute(sql`update policy_evaluations set created_at = ${at}::timestamptz where sender_device_id = ${sender} and created_at = now()`);
        await tx.execute(sql`update policy_allow_counts set created_at = ${at}::timestamptz where sender_device_id = ${sender} and created_at = now()`);
      });
    }
  }

  /** Per agent: day -> [evaluations, violations], from the per-delivery list. */
  function reference(senders: string[], calls: Call[]): Map<string, Map<string, [number, number]>> {
    const out = new Map(senders.map((s) => [s, new Map<string, [number, number]>()]));
    for (const c of calls) {
      const days = out.get(senders[c.sender]!)!;
      const cell = days.get(dayOf(c.at)) ?? [0, 0];
      for (const o of c.outcomes) {
        cell[0]++;
        if (o === 'block' || o === 'hold') cell[1]++;
      }
      days.set(dayOf(c.at), cell);
    }
    return out;
  }

  it('per agent and day, for the compliance dimension and for the report', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 9 * 24 - 1 }), async (calls, hoursBack) => {
        runs++;
        // Fresh senders per run: the tenants accumulate runs without mixing them.
        const senders = [randomUUID(), randomUUID(), randomUUID()];
        const agents: TrustAgent[] = senders.map((deviceId) => ({ deviceId, since: new Date(Date.parse(`${FROM_DAY}T00:00:00Z`) - DAY), identityId: null }));
        await writeRows(legacy.tenantId, senders, calls);
        await writeDecided(counted.tenantId, senders, calls);
        const signals = (tenantId: string) => withTenant(db(), tenantId, (tx) => extractSignals(tx, tenantId, agents, FROM_DAY, NOW));
        const [perRow, perCount] = [await signals(legacy.tenantId), await signals(counted.tenantId)];
        const expected = reference(senders, calls);
        for (const s of senders) {
          const pick = (m: typeof perRow) => m.get(s)!.filter((d) => d.policyEvaluations > 0).map((d) => [d.day, d.policyEvaluations, d.policyViolations]);
          const want = [...expected.get(s)!].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, [n, v]]) => [day, n, v]);
          expect(pick(perRow)).toEqual(want);
          expect(pick(perCount)).toEqual(want);
          const compliance = (m: typeof perRow) => measureDimensions(m.get(s)!, { fleetMedianTokensPerSuccess: null }).compliance;
          expect(compliance(perCount)).toBe(compliance(perRow));
          // The report's outcome counts from a time that cuts a day in two.
          const since = new Date(NOW.getTime() - hoursBack * 3_600_000 - 1_800_000);
          const outcomes = (tenantId: string) => withTenant(db(), tenantId, (tx) => policyOutcomesSince(tx, s, since));
          const byOutcome: Record<string, number> = {};
          for (const c of calls) if (senders[c.sender] === s && c.at >= since) for (const o of c.outcomes) byOutcome[o] = (byOutcome[o] ?? 0) + 1;
          expect(await outcomes(legacy.tenantId)).toEqual(byOutcome);
          expect(await outcomes(counted.tenantId)).toEqual(byOutcome);
        }
      }),
      { numRuns: 15 },
    );
    expect(runs).toBe(15);
    // The counted tenant stored far fewer rows for the same evaluations: allows are counts.
    const count = async (tenantId: string, table: string) =>
      Number(((await withTenant(db(), tenantId, (tx) => tx.execute(sql`select count(*)::int as n from ${sql.raw(table)}`))) as unknown as { rows: { n: number }[] }).rows[0]!.n);
    expect(await count(counted.tenantId, 'policy_evaluations')).toBeLessThan(await count(legacy.tenantId, 'policy_evaluations'));
    expect(await count(counted.tenantId, 'policy_allow_counts')).toBeGreaterThan(0);
  });
});
