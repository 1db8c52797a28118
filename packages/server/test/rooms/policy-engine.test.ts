/**
 * The pure policy engine (contract §2.7, §4.9; design §8.5): a table-driven matrix of every condition
 * key (and scope) × matching / non-matching contexts × every action, several policies at once,
 * defaults, midnight-wrapping hours, two tenants combined with `stricter`, and a fast-check
 * property: the outcome is the most restrictive action among the matched policies.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicies,
  compilePolicy,
  evaluate,
  inHours,
  PolicyBatch,
  POLICY_ACTIONS,
  stricter,
  TIERS,
  type EvaluationContext,
  type PolicyAction,
  type PolicyConditions,
  type PolicyRule,
} from '../../src/modules/policies/engine.js';

const ROOM = randomUUID();
const OTHER_ROOM = randomUUID();
const SENDER = randomUUID();
const RECIPIENT = randomUUID();
const STRANGER = randomUUID();

/** 12:00 UTC, an agent in ROOM sending a normal text to an owner, same tenant, unverified tier. */
const BASE: EvaluationContext = {
  roomId: ROOM,
  skill: null,
  messageType: 'text',
  priority: 'normal',
  senderKind: 'agent',
  recipientKind: 'owner',
  senderDeviceId: SENDER,
  recipientDeviceId: RECIPIENT,
  senderHubAddress: 'alpha-bot',
  senderTier: 'unverified',
  crossTenant: false,
  now: new Date('2025-03-01T12:00:00Z'),
  senderRatePerMinute: 5,
};
const at = (hhmm: string) => ({ now: new Date(`2025-03-01T${hhmm}:00Z`) });
const ctx = (over: Partial<EvaluationContext> = {}): EvaluationContext => ({ ...BASE, ...over });

const rule = (action: PolicyAction, conditions: PolicyConditions = {}, extra: Partial<PolicyRule> = {}): PolicyRule => ({
  id: randomUUID(),
  action,
  conditions,
  scopeRoomId: null,
  scopeSkill: null,
  enabled: true,
  ...extra,
});

interface Case {
  name: string;
  conditions?: PolicyConditions;
  scope?: Pick<PolicyRule, 'scopeRoomId' | 'scopeSkill'>;
  match: Partial<EvaluationContext>[];
  miss: Partial<EvaluationContext>[];
}

/** Every condition key (and both scopes), each with contexts it must and must not match. */
const CASES: Case[] = [
  { name: 'no conditions (tenant-wide)', conditions: {}, match: [{}, { roomId: null }, { crossTenant: true }], miss: [] },
  { name: 'message_types', conditions: { message_types: ['text', 'artifact'] }, match: [{}, { messageType: 'artifact' }], miss: [{ messageType: 'status_alert' }] },
  { name: 'priorities', conditions: { priorities: ['high', 'urgent'] }, match: [{ priority: 'urgent' }, { priority: 'high' }], miss: [{}, { priority: 'low' }] },
  { name: 'sender_kinds', conditions: { sender_kinds: ['agent'] }, match: [{}], miss: [{ senderKind: 'owner' }] },
  { name: 'recipient_kinds', conditions: { recipient_kinds: ['agent'] }, match: [{ recipientKind: 'agent' }], miss: [{}] },
  { name: 'sender_device_ids (case-insensitive)', conditions: { sender_device_ids: [SENDER.toUpperCase(), STRANGER] }, match: [{}], miss: [{ senderDeviceId: randomUUID() }] },
  { name: 'recipient_device_ids', conditions: { recipient_device_ids: [RECIPIENT] }, match: [{}], miss: [{ recipientDeviceId: STRANGER }, { recipientDeviceId: null }] },
  { name: 'sender_hub_addresses (case-insensitive)', conditions: { sender_hub_addresses: ['Alpha-Bot'] }, match: [{}], miss: [{ senderHubAddress: 'beta-bot' }, { senderHubAddress: null }] },
  { name: 'sender_tier_below certified', conditions: { sender_tier_below: 'certified' }, match: [{}], miss: [{ senderTier: 'certified' }, { senderTier: 'enterprise' }] },
  { name: 'sender_tier_below enterprise', conditions: { sender_tier_below: 'enterprise' }, match: [{}, { senderTier: 'certified' }], miss: [{ senderTier: 'enterprise' }] },
  { name: 'hours_utc 09-17', conditions: { hours_utc: { from: 9, to: 17 } }, match: [{}, at('09:00'), at('16:59')], miss: [at('17:00'), at('08:59'), at('23:30')] },
  { name: 'hours_utc 22-06 (wraps midnight)', conditions: { hours_utc: { from: 22, to: 6 } }, match: [at('22:00'), at('23:59'), at('00:00'), at('05:59')], miss: [{}, at('06:00'), at('21:59')] },
  { name: 'hours_utc from == to (all day)', conditions: { hours_utc: { from: 7, to: 7 } }, match: [{}, at('07:00'), at('06:59')], miss: [] },
  { name: 'rate_per_minute_over', conditions: { rate_per_minute_over: 10 }, match: [{ senderRatePerMinute: 11 }], miss: [{ senderRatePerMinute: 10 }, {}, { senderRatePerMinute: undefined }] },
  { name: 'rate_per_minute_over 0', conditions: { rate_per_minute_over: 0 }, match: [{ senderRatePerMinute: 1 }], miss: [{ senderRatePerMinute: 0 }] },
  { name: 'cross_tenant true', conditions: { cross_tenant: true }, match: [{ crossTenant: true }], miss: [{}] },
  { name: 'cross_tenant false', conditions: { cross_tenant: false }, match: [{}], miss: [{ crossTenant: true }] },
  { name: 'scope room', scope: { scopeRoomId: ROOM, scopeSkill: null }, match: [{}], miss: [{ roomId: OTHER_ROOM }, { roomId: null }] },
  { name: 'scope skill', scope: { scopeRoomId: null, scopeSkill: 'deploy' }, match: [{ skill: 'deploy' }], miss: [{}, { skill: 'review' }] },
  {
    name: 'several keys are AND-ed',
    conditions: { message_types: ['text'], sender_kinds: ['agent'], priorities: ['normal'] },
    match: [{}],
    miss: [{ messageType: 'artifact' }, { senderKind: 'owner' }, { priority: 'urgent' }],
  },
];

const matrix = CASES.flatMap((c) => POLICY_ACTIONS.map((action) => ({ ...c, action })));

describe('policy engine: condition matrix', () => {
  it.each(matrix)('$name -> $action', ({ conditions, scope, match, miss, action }) => {
    const p = rule(action, conditions ?? {}, scope ?? {});
    const compiled = compilePolicies([p]);
    for (const over of match) {
      expect(evaluate(compiled, ctx(over)), `should match ${JSON.stringify(over)}`).toEqual({ outcome: action, policyId: p.id, matched: [p.id] });
    }
    for (const over of miss) {
      expect(evaluate(compiled, ctx(over)), `should not match ${JSON.stringify(over)}`).toEqual({ outcome: 'allow', policyId: null, matched: [] });
    }
  });

  it('flags policies that read the sender rate', () => {
    expect(compilePolicy(rule('hold', { rate_per_minute_over: 3 })).usesRate).toBe(true);
    expect(compilePolicy(rule('hold', { message_types: ['text'] })).usesRate).toBe(false);
  });
});

describe('policy engine: several policies', () => {
  it('applies every matching policy; the most restrictive wins and every match is listed', () => {
    const [allow, notify, hold, block] = POLICY_ACTIONS.map((a) => rule(a));
    for (const order of [
      [allow!, notify!, hold!, block!],
      [block!, hold!, notify!, allow!],
      [notify!, block!, allow!, hold!],
    ]) {
      const ev = evaluate(compilePolicies(order), ctx());
      expect(ev.outcome).toBe('block');
      expect(ev.policyId).toBe(block!.id);
      expect(ev.matched).toEqual(order.map((p) => p.id));
    }
  });

  it('counts only the matching ones', () => {
    const hold = rule('hold', { priorities: ['urgent'] });
    const notify = rule('notify', { message_types: ['text'] });
    const block = rule('block', { cross_tenant: true });
    const compiled = compilePolicies([hold, notify, block]);
    expect(evaluate(compiled, ctx())).toEqual({ outcome: 'notify', policyId: notify.id, matched: [notify.id] });
    expect(evaluate(compiled, ctx({ priority: 'urgent' }))).toEqual({ outcome: 'hold', policyId: hold.id, matched: [hold.id, notify.id] });
    expect(evaluate(compiled, ctx({ priority: 'urgent', crossTenant: true })).outcome).toBe('block');
  });

  it('gives a tie between equally restrictive policies to the first in list order', () => {
    const first = rule('hold');
    const second = rule('hold');
    expect(evaluate(compilePolicies([first, second]), ctx())).toEqual({ outcome: 'hold', policyId: first.id, matched: [first.id, second.id] });
  });

  it('ignores disabled policies', () => {
    const off = rule('block', {}, { enabled: false });
    const on = rule('notify');
    const compiled = compilePolicies([off, on]);
    expect(compiled.map((c) => c.id)).toEqual([on.id]);
    expect(evaluate(compiled, ctx())).toEqual({ outcome: 'notify', policyId: on.id, matched: [on.id] });
    expect(evaluate(compilePolicies([off]), ctx())).toEqual({ outcome: 'allow', policyId: null, matched: [] });
  });
});

describe('policy engine: defaults', () => {
  it('allows by default', () => {
    expect(evaluate([], ctx())).toEqual({ outcome: 'allow', policyId: null, matched: [] });
  });

  it('uses the given default (hold for agents in a strict room) when nothing matches', () => {
    const other = rule('block', { cross_tenant: true });
    expect(evaluate(compilePolicies([other]), ctx(), 'hold')).toEqual({ outcome: 'hold', policyId: null, matched: [] });
  });

  it("lets an explicit matching policy override the default, an allow included", () => {
    const allow = rule('allow', { sender_device_ids: [SENDER] });
    expect(evaluate(compilePolicies([allow]), ctx(), 'hold')).toEqual({ outcome: 'allow', policyId: allow.id, matched: [allow.id] });
    const block = rule('block');
    expect(evaluate(compilePolicies([allow, block]), ctx(), 'hold').outcome).toBe('block');
  });
});

describe('policy engine: helpers', () => {
  it('orders actions block > hold > notify > allow, symmetrically', () => {
    for (const [i, a] of POLICY_ACTIONS.entries()) {
      for (const [j, b] of POLICY_ACTIONS.entries()) {
        expect(stricter(a, b)).toBe(POLICY_ACTIONS[Math.max(i, j)]);
        expect(stricter(a, b)).toBe(stricter(b, a));
      }
    }
  });

  it('reads hour windows as [from, to), wrapping midnight', () => {
    const hours = (from: number, to: number) => Array.from({ length: 24 }, (_, h) => h).filter((h) => inHours(h, from, to));
    expect(hours(9, 12)).toEqual([9, 10, 11]);
    expect(hours(22, 2)).toEqual([0, 1, 22, 23]);
    expect(hours(5, 5)).toHaveLength(24);
    expect(hours(23, 0)).toEqual([23]);
    expect(hours(0, 1)).toEqual([0]);
  });
});

describe('policy engine: two tenants', () => {
  const pairs = POLICY_ACTIONS.flatMap((a) => POLICY_ACTIONS.map((b) => ({ a, b })));

  it.each(pairs)('tenant A $a, tenant B $b: the stricter outcome wins', ({ a, b }) => {
    const x = ctx({ crossTenant: true });
    const tenantA = compilePolicies([rule(a, { cross_tenant: true }), rule('allow')]);
    const tenantB = compilePolicies([rule(b, { sender_tier_below: 'certified' })]);
    const combined = stricter(evaluate(tenantA, x).outcome, evaluate(tenantB, x).outcome);
    const expected = POLICY_ACTIONS[Math.max(POLICY_ACTIONS.indexOf(a), POLICY_ACTIONS.indexOf(b))];
    expect(combined).toBe(expected);
    // A tenant whose policies do not match contributes its default (allow) and never loosens the other.
    const unmatched = compilePolicies([rule('block', { cross_tenant: false })]);
    expect(stricter(evaluate(tenantA, x).outcome, evaluate(unmatched, x).outcome)).toBe(stricter(a, 'allow'));
  });
});

describe('policy engine: property', () => {
  const hour = fc.integer({ min: 0, max: 23 });
  const conditions: fc.Arbitrary<PolicyConditions> = fc.record(
    {
      message_types: fc.subarray(['text', 'artifact', 'status_alert'], { minLength: 1 }),
      priorities: fc.subarray(['low', 'normal', 'high', 'urgent'] as const, { minLength: 1 }),
      sender_kinds: fc.subarray(['owner', 'agent'] as const, { minLength: 1 }),
      recipient_kinds: fc.subarray(['owner', 'agent'] as const, { minLength: 1 }),
      sender_device_ids: fc.subarray([SENDER, STRANGER], { minLength: 1 }),
      recipient_device_ids: fc.subarray([RECIPIENT, STRANGER], { minLength: 1 }),
      sender_tier_below: fc.constantFrom('certified' as const, 'enterprise' as const),
      hours_utc: fc.record({ from: hour, to: hour }),
      rate_per_minute_over: fc.integer({ min: 0, max: 20 }),
      cross_tenant: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const policy: fc.Arbitrary<PolicyRule> = fc.record({
    id: fc.uuid(),
    action: fc.constantFrom(...POLICY_ACTIONS),
    conditions,
    scopeRoomId: fc.constantFrom(null, ROOM, OTHER_ROOM),
    scopeSkill: fc.constantFrom(null, null, 'deploy'),
    enabled: fc.boolean(),
  });
  const context: fc.Arbitrary<EvaluationContext> = fc.record({
    roomId: fc.constantFrom(ROOM, OTHER_ROOM, null),
    skill: fc.constantFrom(null, 'deploy'),
    messageType: fc.constantFrom('text', 'artifact', 'status_alert'),
    priority: fc.constantFrom('low', 'normal', 'high', 'urgent'),
    senderKind: fc.constantFrom('owner' as const, 'agent' as const),
    recipientKind: fc.constantFrom('owner' as const, 'agent' as const),
    senderDeviceId: fc.constantFrom(SENDER, STRANGER),
    recipientDeviceId: fc.constantFrom(RECIPIENT, null),
    senderHubAddress: fc.constantFrom('alpha-bot', null),
    senderTier: fc.constantFrom(...TIERS),
    crossTenant: fc.boolean(),
    now: fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2025-12-31T23:59:59Z'), noInvalidDate: true }),
    senderRatePerMinute: fc.integer({ min: 0, max: 25 }),
  });

  it('answers the most restrictive matched action (or the default), never less', () => {
    fc.assert(
      fc.property(fc.uniqueArray(policy, { maxLength: 8, selector: (p) => p.id }), context, fc.constantFrom<PolicyAction>('allow', 'hold'), (rules, x, dflt) => {
        const ev = evaluate(compilePolicies(rules), x, dflt);
        const byId = new Map(rules.map((r) => [r.id, r]));
        const rank = (a: PolicyAction) => POLICY_ACTIONS.indexOf(a);
        for (const id of ev.matched) {
          const r = byId.get(id)!;
          expect(r.enabled).toBe(true);
          expect(rank(ev.outcome)).toBeGreaterThanOrEqual(rank(r.action));
        }
        if (ev.matched.length === 0) {
          expect(ev).toEqual({ outcome: dflt, policyId: null, matched: [] });
        } else {
          const max = Math.max(...ev.matched.map((id) => rank(byId.get(id)!.action)));
          expect(rank(ev.outcome)).toBe(max);
          expect(ev.matched).toContain(ev.policyId);
          expect(byId.get(ev.policyId!)!.action).toBe(ev.outcome);
        }
      }),
      { numRuns: 500 },
    );
  });
  const MESSAGE_FIELDS = ['roomId', 'skill', 'messageType', 'priority', 'senderKind', 'senderDeviceId', 'senderHubAddress', 'senderTier', 'crossTenant', 'now', 'senderRatePerMinute'] as const;
  it('PolicyBatch answers what evaluate answers for every pair, whatever the grouping of pairs into messages', () => {
    const recipient = fc.record({ recipientKind: fc.constantFrom('owner' as const, 'agent' as const), recipientDeviceId: fc.constantFrom(RECIPIENT, STRANGER, null) });
    // Messages, each with several recipients; the pairs in message order, or shuffled (the batch must not rely on grouping).
    // Each message differs from the one before it in ONE field (a fresh context of which one field is taken), so the batch must notice each.
    const message = fc.record({ change: context, field: fc.constantFrom(...MESSAGE_FIELDS), to: fc.array(recipient, { minLength: 1, maxLength: 6 }), sameNow: fc.boolean() });
    fc.assert(
      fc.property(fc.uniqueArray(policy, { maxLength: 10, selector: (p) => p.id }), context, fc.array(message, { minLength: 1, maxLength: 6 }), fc.boolean(), fc.constantFrom<PolicyAction>('allow', 'hold'), (rules, first, changes, shuffle, dflt) => {
        const compiled = compilePolicies(rules);
        let x = first;
        const messages = changes.map(({ change, field, to, sameNow }) => {
          x = { ...x, [field]: change[field] };
          return { x, to, sameNow };
        });
        // Each pair is its own object, as callers build them (a copy of the message's fields; `now` a new Date of the same time or not).
        const pairs = messages.flatMap(({ x, to, sameNow }) => to.map((r) => ({ ...x, ...r, now: sameNow ? x.now : new Date(x.now.getTime()) })));
        if (shuffle) pairs.reverse().sort((a, b) => (a.recipientKind < b.recipientKind ? -1 : a.recipientKind > b.recipientKind ? 1 : 0));
        const batch = new PolicyBatch(compiled);
        for (const pair of pairs) expect(batch.evaluate(pair, dflt)).toEqual(evaluate(compiled, pair, dflt));
      }),
      { numRuns: 500 },
    );
  });
});
