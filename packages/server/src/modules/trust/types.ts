/**
 * Shared vocabulary of the trust engine (contract §2.9, §3.3, §3.9, §4.12; design §8.14;
 * docs/trust-scoring.md): dimension keys and weights, windows, tier thresholds, and the per-day
 * signal record that the repository extracts from the database and the pure scoring functions
 * (dimensions.ts, fallbacks.ts, fleet.ts, psi.ts, tiers.ts) consume.
 */

import { asTier, NEUTRAL_SCORE, TIER_HOLD_DAYS, TIER_THRESHOLDS, tierRank, TRUST_DIMENSIONS, TRUST_TIERS, TRUST_WINDOWS, type TrustDimension, type TrustScoreSource, type TrustTier, type TrustWindow } from '@parley/protocol';

/** Windows, dimensions, tiers and their rules are on the wire: they live in the contract (`@parley/protocol`). */
export { asTier, NEUTRAL_SCORE, TIER_HOLD_DAYS, TIER_THRESHOLDS, tierRank, TRUST_DIMENSIONS, TRUST_WINDOWS, type TrustDimension, type TrustWindow };

/** Length of each window in days. */
export const WINDOW_DAYS: Record<TrustWindow, number> = { '7d': 7, '30d': 30, '90d': 90 };

/** contract §2.9 weights; they sum to 1.00. */
export const DIMENSION_WEIGHTS: Record<TrustDimension, number> = {
  uptime: 0.1,
  responsiveness: 0.12,
  reliability: 0.08,
  task_success: 0.1,
  efficiency: 0.08,
  volume: 0.07,
  tool_accuracy: 0.08,
  error_discipline: 0.05,
  compliance: 0.07,
  token_efficiency: 0.1,
  behavioral_consistency: 0.1,
  version_health: 0.05,
};

/** contract §3.9: the warm-up during which every dimension scores {@link NEUTRAL_SCORE}. */
export const WARMUP_HOURS = 48;

/** Trust tiers, lowest first (contract §3.3; lowercase on the wire, design §8.21): the contract's `TRUST_TIERS`. */
export const TIERS = TRUST_TIERS;
export type Tier = TrustTier;

/** Where a dimension's value came from (contract §3.9). */
export type DimensionSource = TrustScoreSource;

/** The 12 values, each 0.0-1.0. */
export type DimensionScores = Record<TrustDimension, number>;

/**
 * Everything the engine knows about one agent on one UTC day (`day` = `YYYY-MM-DD`). Counters are
 * additive, so a window is the concatenation of its days. Extracted by trust/repo.ts.
 */
export interface DailySignals {
  day: string;
  /** Distinct UTC hours of the day in which the device was seen (device_presence), 0-24. */
  presenceHours: number;
  /** Hours of the day during which the agent existed (after activation, before now), 0-24. */
  observedHours: number;
  /** Resolution latencies (seconds) of the agent's decisions resolved this day (created → resolved). */
  decisionLatenciesSec: number[];
  /** The agent's decisions that expired unanswered this day. */
  decisionsExpired: number;
  /** All spans started this day, and those that failed (status ERROR or `error.type`: lib/span-attrs.ts `SPAN_FAILED`). */
  spans: number;
  errorSpans: number;
  /** Error spans followed, in the same trace, by a later span of the same name that did not fail. */
  recoveredErrors: number;
  /** Task spans (`svc.task`, GenAI `invoke_agent`), and those that did not fail (lib/span-attrs.ts `SPAN_FAILED`). */
  tasks: number;
  tasksOk: number;
  /** Tool-call spans (`svc.tool`, GenAI `execute_tool`), and those that did not fail. */
  tools: number;
  toolsOk: number;
  /**
   * Task tokens (gen_ai.usage.input_tokens + output_tokens, or svc.tokens): per day the larger of the
   * tokens on task spans and on GenAI model-call spans, all and those of spans that did not fail (trust/rollups.ts).
   */
  taskTokens: number;
  taskTokensOk: number;
  /** Messages the agent sent (direct, room and A2A). */
  messages: number;
  /** `svc.policy.evaluate` records where the agent was the sender, and those that blocked or held. */
  policyEvaluations: number;
  policyViolations: number;
  /** Span count per span name (the behavioural mix). */
  spanNames: Record<string, number>;
  /** Per `service.version` resource attribute: spans, error spans, first start time (ISO 8601) seen this day. */
  versions: Record<string, { spans: number; errors: number; firstSeen: string }>;
}

/** An all-zero DailySignals record of `day`. */
export function emptySignals(day: string, observedHours = 0): DailySignals {
  return {
    day,
    presenceHours: 0,
    observedHours,
    decisionLatenciesSec: [],
    decisionsExpired: 0,
    spans: 0,
    errorSpans: 0,
    recoveredErrors: 0,
    tasks: 0,
    tasksOk: 0,
    tools: 0,
    toolsOk: 0,
    taskTokens: 0,
    taskTokensOk: 0,
    messages: 0,
    policyEvaluations: 0,
    policyViolations: 0,
    spanNames: {},
    versions: {},
  };
}

/** One 7-day score in the tier history (ascending by `at`). */
export interface ScorePoint {
  at: Date;
  composite: number;
}
