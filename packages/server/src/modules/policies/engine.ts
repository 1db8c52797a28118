/**
 * The policy engine (contract §2.7, §4.9; design §8.5), pure and synchronous: compiled policies are
 * evaluated against the metadata of one (message, recipient) pair. Conditions never see content
 * (the service has none). Every key of a condition object is optional; keys are AND-ed; a list
 * means "any of". All enabled matching policies apply and the most restrictive action wins:
 * block > hold > notify > allow; with no match the caller's default applies (allow, or hold for
 * agent-sent messages in a `strict` room).
 */
import { POLICY_ACTIONS, type PolicyAction, type PolicyConditions } from '@parley/protocol';
import { NEUTRAL_SCORE, TRUST_TIERS as TIERS, tierRank, type TrustTier as Tier } from '@parley/protocol';

/** Policy actions from least to most restrictive (design §8.5): the protocol's list, re-exported for existing importers. */
export { POLICY_ACTIONS, type PolicyAction, type PolicyConditions };

/** Trust tiers, lowest first: the one list of trust/types.ts, re-exported for existing importers. */
export { TIERS, type Tier };

/** What a policy needs from its stored row. */
export interface PolicyRule {
  id: string;
  action: PolicyAction;
  conditions: PolicyConditions;
  scopeRoomId: string | null;
  scopeSkill: string | null;
  enabled: boolean;
}

/** The metadata of one (message, recipient) pair. `senderRatePerMinute` is read only when a policy uses it. */
export interface EvaluationContext {
  roomId: string | null;
  skill?: string | null;
  messageType: string;
  priority: string;
  senderKind: 'owner' | 'agent';
  recipientKind: 'owner' | 'agent';
  senderDeviceId: string;
  recipientDeviceId: string | null;
  senderHubAddress: string | null;
  senderTier: Tier;
  /**
   * The sender's trust score 0.0-1.0 (`hub_identities.trust_score`); null (no score yet) and
   * undefined (not known to the caller) count as {@link NEUTRAL_SCORE}. Read only when a
   * policy has `trust_score_below`; PolicyService.decide fills it in place when it is undefined.
   */
  senderTrustScore?: number | null;
  crossTenant: boolean;
  now: Date;
  senderRatePerMinute?: number;
}

export interface Evaluation {
  outcome: PolicyAction;
  /** The policy whose action won; null when the default decided. */
  policyId: string | null;
  /** Every enabled policy that matched. */
  matched: string[];
}

/** A policy compiled to one predicate. */
export interface CompiledPolicy {
  id: string;
  action: PolicyAction;
  rank: number;
  usesRate: boolean;
  /** The policy has `trust_score_below` (its callers need the sender's trust score). */
  usesTrustScore: boolean;
  /** The policy is a trust floor: it has `trust_score_below` or `sender_tier_below` (design §8.6). */
  trustFloor: boolean;
  applies(ctx: EvaluationContext): boolean;
  /** The tests that do not read the recipient (scope and every condition but the two below). */
  appliesToMessage(ctx: EvaluationContext): boolean;
  /** `recipient_kinds` as a set; null when the policy has none. */
  recipientKinds: ReadonlySet<string> | null;
  /** `recipient_device_ids` (lower case) as a set; null when the policy has none. */
  recipientDevices: ReadonlySet<string> | null;
}

/** contract §3.9: the trust score of an agent without one yet: trust/types.ts NEUTRAL_SCORE (0.5), under the name existing importers use. */
export const NEUTRAL_TRUST_SCORE = NEUTRAL_SCORE;

const rank = (a: PolicyAction) => POLICY_ACTIONS.indexOf(a);

/** The stricter of two outcomes (block > hold > notify > allow), e.g. across two tenants (contract §4.16). */
export function stricter(a: PolicyAction, b: PolicyAction): PolicyAction {
  return rank(a) >= rank(b) ? a : b;
}

/** True when hour `h` lies in [from, to), wrapping midnight when from > to; from == to is all day. */
export function inHours(h: number, from: number, to: number): boolean {
  if (from === to) return true;
  return from < to ? h >= from && h < to : h >= from || h < to;
}

/** Compile one policy's scope and conditions into a predicate (each key becomes one test). */
export function compilePolicy(p: PolicyRule): CompiledPolicy {
  const c = p.conditions;
  const tests: ((x: EvaluationContext) => boolean)[] = [];
  const anyOf = <T>(list: readonly T[] | undefined, get: (x: EvaluationContext) => T | null | undefined) => {
    if (!list) return;
    const set = new Set<T>(list);
    tests.push((x) => {
      const v = get(x);
      return v !== null && v !== undefined && set.has(v);
    });
  };
  if (p.scopeRoomId) {
    const room = p.scopeRoomId;
    tests.push((x) => x.roomId === room);
  }
  if (p.scopeSkill) {
    const skill = p.scopeSkill;
    tests.push((x) => x.skill === skill);
  }
  anyOf(c.message_types, (x) => x.messageType);
  anyOf(c.priorities, (x) => x.priority as never);
  anyOf(c.sender_kinds, (x) => x.senderKind);
  anyOf(c.sender_device_ids?.map((d) => d.toLowerCase()), (x) => x.senderDeviceId);
  anyOf(c.sender_hub_addresses?.map((a) => a.toLowerCase()), (x) => x.senderHubAddress);
  if (c.sender_tier_below) {
    const floor = tierRank(c.sender_tier_below);
    tests.push((x) => tierRank(x.senderTier) < floor);
  }
  if (c.trust_score_below !== undefined) {
    const floor = c.trust_score_below;
    tests.push((x) => (x.senderTrustScore ?? NEUTRAL_SCORE) < floor);
  }
  if (c.hours_utc) {
    const { from, to } = c.hours_utc;
    tests.push((x) => inHours(x.now.getUTCHours(), from, to));
  }
  if (c.rate_per_minute_over !== undefined) {
    const n = c.rate_per_minute_over;
    tests.push((x) => (x.senderRatePerMinute ?? 0) > n);
  }
  if (c.cross_tenant !== undefined) {
    const want = c.cross_tenant;
    tests.push((x) => x.crossTenant === want);
  }
  const recipientKinds = c.recipient_kinds ? new Set<string>(c.recipient_kinds) : null;
  const recipientDevices = c.recipient_device_ids ? new Set(c.recipient_device_ids.map((d) => d.toLowerCase())) : null;
  const appliesToMessage = (x: EvaluationContext) => {
    for (const t of tests) if (!t(x)) return false;
    return true;
  };
  return {
    id: p.id,
    action: p.action,
    rank: rank(p.action),
    usesRate: c.rate_per_minute_over !== undefined,
    usesTrustScore: c.trust_score_below !== undefined,
    trustFloor: c.trust_score_below !== undefined || c.sender_tier_below !== undefined,
    appliesToMessage,
    recipientKinds,
    recipientDevices,
    applies: (x) => appliesToRecipient(recipientKinds, recipientDevices, x) && appliesToMessage(x),
  };
}

function appliesToRecipient(kinds: ReadonlySet<string> | null, devices: ReadonlySet<string> | null, x: EvaluationContext): boolean {
  return (!kinds || kinds.has(x.recipientKind)) && (!devices || (x.recipientDeviceId !== null && devices.has(x.recipientDeviceId)));
}

/** Compile the enabled policies of a set (disabled ones never apply). */
export function compilePolicies(rules: readonly PolicyRule[]): CompiledPolicy[] {
  return rules.filter((r) => r.enabled).map(compilePolicy);
}

/**
 * Evaluate compiled policies for one (message, recipient): every matching policy applies, the
 * most restrictive action wins (ties: the first in list order), `defaultOutcome` when none match.
 */
export function evaluate(policies: readonly CompiledPolicy[], ctx: EvaluationContext, defaultOutcome: PolicyAction = 'allow'): Evaluation {
  let best: CompiledPolicy | undefined;
  const matched: string[] = [];
  for (const p of policies) {
    if (!p.applies(ctx)) continue;
    matched.push(p.id);
    if (!best || p.rank > best.rank) best = p;
  }
  return decided(best, matched, defaultOutcome);
}

// The default is what happens when nothing matched: an explicit allow in a strict room lets an
// agent's message through (the owner's own rule beats the room's default).
const decided = (best: CompiledPolicy | undefined, matched: string[], defaultOutcome: PolicyAction): Evaluation =>
  best ? { outcome: best.action, policyId: best.id, matched } : { outcome: defaultOutcome, policyId: null, matched };

/** True when `a` and `b` agree on every field a policy reads, the recipient's two apart. */
function sameMessage(a: EvaluationContext, b: EvaluationContext): boolean {
  return (
    a.roomId === b.roomId &&
    a.skill === b.skill &&
    a.messageType === b.messageType &&
    a.priority === b.priority &&
    a.senderKind === b.senderKind &&
    a.senderDeviceId === b.senderDeviceId &&
    a.senderHubAddress === b.senderHubAddress &&
    a.senderTier === b.senderTier &&
    a.senderTrustScore === b.senderTrustScore &&
    a.crossTenant === b.crossTenant &&
    a.senderRatePerMinute === b.senderRatePerMinute &&
    a.now.getTime() === b.now.getTime()
  );
}

/**
 * {@link evaluate} for many pairs in a row, with the same answers, at the cost of what changes
 * between them: the pairs of one message (a room message's envelopes: one per recipient) run the
 * recipient-independent tests of every policy once, those of `recipient_kinds` once per kind, and
 * only the `recipient_device_ids` sets per pair. Consecutive pairs are compared field by field
 * (no key strings), so any order of pairs is correct; grouping a message's pairs is what is fast.
 */
export class PolicyBatch {
  private last: EvaluationContext | undefined;
  /** The policies whose message tests passed for `last`, in list order. */
  private passing: readonly CompiledPolicy[] = [];
  /** `passing` narrowed to one recipient kind. */
  private readonly byKind = new Map<string, readonly CompiledPolicy[]>();

  constructor(private readonly policies: readonly CompiledPolicy[]) {}

  /** The evaluation of one pair (see {@link evaluate}). */
  evaluate(ctx: EvaluationContext, defaultOutcome: PolicyAction = 'allow'): Evaluation {
    if (this.policies.length === 0) return decided(undefined, [], defaultOutcome);
    if (!this.last || !sameMessage(this.last, ctx)) {
      this.last = ctx;
      this.passing = this.policies.filter((p) => p.appliesToMessage(ctx));
      this.byKind.clear();
    }
    let candidates = this.byKind.get(ctx.recipientKind);
    if (!candidates) this.byKind.set(ctx.recipientKind, (candidates = this.passing.filter((p) => !p.recipientKinds || p.recipientKinds.has(ctx.recipientKind))));
    let best: CompiledPolicy | undefined;
    const matched: string[] = [];
    for (const p of candidates) {
      if (p.recipientDevices && (ctx.recipientDeviceId === null || !p.recipientDevices.has(ctx.recipientDeviceId))) continue;
      matched.push(p.id);
      if (!best || p.rank > best.rank) best = p;
    }
    return decided(best, matched, defaultOutcome);
  }
}
