/**
 * Trust scores (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.18, §8.21; docs/trust-scoring.md):
 * the vocabulary of the trust engine that is on the wire (windows, dimensions, tiers, score
 * sources, drift statuses) and the owner's routes: fleet overview, recompute, an agent's current
 * score, history, compliance report (JSON or HTML), drift and its recalibration. `{agent_id}` is
 * the agent's device id or hub address; answers carry the device id.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { lit, Nullable, Timestamp, Uuid } from '../common.js';

/** Trust-score windows (contract §2.9, §3.9); `7d` is the default and the tier input. */
export const TRUST_WINDOWS = ['7d', '30d', '90d'] as const;
/** Trust-score windows (contract §2.9, §3.9). */
export const TrustWindow = lit(TRUST_WINDOWS);
export type TrustWindow = Static<typeof TrustWindow>;

/** The 12 trust dimensions of contract §2.9, in table order. */
export const TRUST_DIMENSIONS = [
  'uptime',
  'responsiveness',
  'reliability',
  'task_success',
  'efficiency',
  'volume',
  'tool_accuracy',
  'error_discipline',
  'compliance',
  'token_efficiency',
  'behavioral_consistency',
  'version_health',
] as const;
/** The 12 trust dimensions of contract §2.9. */
export type TrustDimension = (typeof TRUST_DIMENSIONS)[number];
/** One value per trust dimension (contract §2.9). */
export type TrustDimensionMap<T> = Record<TrustDimension, T>;

/** Trust tiers, lowest first (contract §3.3; lowercase on the wire, design §8.21). */
export const TRUST_TIERS = ['unverified', 'certified', 'enterprise'] as const;
/** Trust tier (contract §3.3), lowercase on the wire (design §8.21). */
export const TrustTier = lit(TRUST_TIERS);
export type TrustTier = Static<typeof TrustTier>;
/** A stored tier string as a {@link TrustTier}; anything unknown (or null) reads as `unverified`. */
export const asTier = (t: string | null | undefined): TrustTier => ((TRUST_TIERS as readonly string[]).includes(t ?? '') ? (t as TrustTier) : 'unverified');
/** The tier's rank, 0 (unverified) to 2 (enterprise). */
export const tierRank = (t: string | null | undefined): number => TRUST_TIERS.indexOf(asTier(t));
/** Minimum composite trust score per tier (contract §3.3). */
export const TIER_THRESHOLDS: Record<TrustTier, number> = { unverified: 0, certified: 0.6, enterprise: 0.8 };
/** The upgrade hold in days: the score must stay at or above the threshold this long (contract §3.3). */
export const TIER_HOLD_DAYS = 7;
/** The score of every dimension during the warm-up, and of an agent not scored yet (contract §3.9). */
export const NEUTRAL_SCORE = 0.5;

/** Where a dimension score came from (contract §3.9): the agent's telemetry, the fleet median fallback, or the 48-hour warm-up neutral score. */
export const TRUST_SCORE_SOURCES = ['telemetry', 'fleet_median', 'warmup'] as const;
export type TrustScoreSource = (typeof TRUST_SCORE_SOURCES)[number];

/** PSI drift status of a dimension (< 0.1 stable, 0.1-0.25 moderate, > 0.25 significant). */
export const DRIFT_STATUSES = ['stable', 'moderate', 'significant'] as const;
export type DriftStatus = (typeof DRIFT_STATUSES)[number];

/** `GET /trust-scores/{agent_id}/history` `days`: default and bounds (inclusive). */
export const TRUST_HISTORY_DAYS = { default: 30, min: 1, max: 365 } as const;

/** An object with one `s` per trust dimension. */
const dims = <T extends TSchema>(s: T) => Type.Object(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, s])) as Record<TrustDimension, T>);
/** A nullable number; `{type: [number, null]}` so that Ajv's coercion never turns 0 into null. */
const NullableNumber = Type.Unsafe<number | null>({ type: ['number', 'null'] });

const Score = Type.Number({ minimum: 0, maximum: 1 });
const Tier = lit(TRUST_TIERS, { description: 'lowercase (design §8.21)' });
const Window = TrustWindow;
const WindowWithDefault = (dflt: TrustWindow) => Type.Union(TRUST_WINDOWS.map((w) => Type.Literal(w)), { default: dflt });
const Percentile = Type.Integer({ minimum: 0, maximum: 100, description: 'percentile rank in the tenant fleet (design §8.21)' });
const Dimensions = dims(Score);
const Sources = dims(lit(TRUST_SCORE_SOURCES));

/** `{agent_id}`: the agent's device id or hub address (design §8.18). */
export const TrustAgentParams = Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 255, description: 'agent device_id or hub address (design §8.18)' }) });
export type TrustAgentParams = Static<typeof TrustAgentParams>;

/** Query of `GET /trust-scores/fleet` and `/trust-scores/{agent_id}` (design §8.14): the window (default `7d`). */
export const TrustWindowQuery = Type.Object({ window: Type.Optional(WindowWithDefault('7d')) });
/** Query of `GET /trust-scores/fleet`, `/trust-scores/{agent_id}` and `…/drift` (design §8.14): the window (default `7d`; `30d` for drift). */
export type TrustWindowQuery = Static<typeof TrustWindowQuery>;
/** Query of `GET /trust-scores/{agent_id}/drift`: the window (default `30d`). */
export const TrustDriftQuery = Type.Object({ window: Type.Optional(WindowWithDefault('30d')) });
export type TrustDriftQuery = Static<typeof TrustDriftQuery>;
/** Query of `GET /trust-scores/{agent_id}/history`: `days` (1-365, default 30). */
export const TrustHistoryQuery = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: TRUST_HISTORY_DAYS.min, maximum: TRUST_HISTORY_DAYS.max, default: TRUST_HISTORY_DAYS.default })),
});
export type TrustHistoryQuery = Static<typeof TrustHistoryQuery>;
/** Query of `GET /trust-scores/{agent_id}/report`: `json` (default) or `html`. */
export const TrustReportQuery = Type.Object({ format: Type.Optional(lit(['json', 'html'] as const, { description: 'json (default) or html' })) });
export type TrustReportQuery = Static<typeof TrustReportQuery>;

/**
 * `GET /api/v1/trust-scores/{agent_id}` (contract §2.9, §4.12; design §8.21): an agent's current score
 * for a window. Scores are 0..1; `percentile` is the 0..100 rank in the tenant fleet; `agent_id`
 * is always the device id (the route also accepts the hub address). `tier` is the agent's current
 * tier; `computed_at` is now for contract §3.9's warm-up answer.
 */
export const TrustScore = Type.Object({
  agent_id: Uuid,
  hub_address: Nullable(Type.String()),
  window: Window,
  composite_score: Score,
  tier: Tier,
  dimensions: Dimensions,
  percentile: Percentile,
  computed_at: Timestamp,
  sources: Sources,
});
export type TrustScore = Static<typeof TrustScore>;

/** A tier change of an agent (contract §3.3; tiers lowercase, design §8.21). */
export const TrustTierChange = Type.Object({ from_tier: Type.String(), to_tier: Type.String(), reason: Type.String(), changed_at: Timestamp });
export type TrustTierChange = Static<typeof TrustTierChange>;

/** One agent of the fleet overview. */
export const TrustFleetAgent = Type.Object({ agent_id: Uuid, hub_address: Nullable(Type.String()), composite_score: Score, tier: Tier, percentile: Percentile });
export type TrustFleetAgent = Static<typeof TrustFleetAgent>;

/** `GET /api/v1/trust-scores/fleet` (design §8.14): each agent's latest score and per-dimension statistics (null without scored agents); `computed_at` is the latest recompute, null before the first one. */
export const TrustFleet = Type.Object({
  window: Window,
  computed_at: Nullable(Timestamp),
  count: Type.Integer({ minimum: 0 }),
  agents: Type.Array(TrustFleetAgent),
  dimensions: dims(Type.Object({ median: NullableNumber, stddev: NullableNumber, mean: NullableNumber })),
});
export type TrustFleet = Static<typeof TrustFleet>;

/** `GET /api/v1/trust-scores/{agent_id}/history` (contract §4.12): the agent's 7-day scores over `days` days, oldest first, with its tier changes. */
export const TrustHistory = Type.Object({
  agent_id: Uuid,
  days: Type.Integer(),
  history: Type.Array(Type.Object({ computed_at: Timestamp, composite_score: Score, tier: Tier, dimensions: Dimensions })),
  tier_changes: Type.Array(TrustTierChange),
});
export type TrustHistory = Static<typeof TrustHistory>;

/** A drift baseline period (contract §4.12): dates `YYYY-MM-DD` (UTC); `reason` is `initial` or `recalibrated`. */
export const TrustDriftBaseline = Type.Object({
  window_start: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
  window_end: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
  established_at: Timestamp,
  reason: Type.String({ description: 'initial | recalibrated' }),
});
export type TrustDriftBaseline = Static<typeof TrustDriftBaseline>;

/** One dimension's drift: PSI ≥ 0 and its status; sample counts are days with a value. */
export const TrustDimensionDrift = Type.Object({ psi: Type.Number({ minimum: 0 }), status: lit(DRIFT_STATUSES), baseline_samples: Type.Integer(), current_samples: Type.Integer() });
export type TrustDimensionDrift = Static<typeof TrustDimensionDrift>;

/**
 * `GET /api/v1/trust-scores/{agent_id}/drift` (contract §4.12; design §8.14): per-dimension PSI of the
 * window against the baseline (null for a dimension without baseline); `alert` when some dimension
 * drifted significantly (PSI > 0.25).
 */
export const TrustDrift = Type.Object({
  agent_id: Uuid,
  window: Window,
  baseline: Nullable(TrustDriftBaseline),
  dimensions: dims(Nullable(TrustDimensionDrift)),
  alert: Type.Boolean({ description: 'true when some dimension drifted significantly (PSI > 0.25)' }),
  computed_at: Timestamp,
});
export type TrustDrift = Static<typeof TrustDrift>;

/** `POST /api/v1/trust-scores/{agent_id}/drift/recalibrate` (contract §4.12): the new baseline (the most recent 30 days) with its per-dimension histogram bins (null: no values in the window). */
export const TrustDriftRecalibration = Type.Object({
  agent_id: Uuid,
  baseline: TrustDriftBaseline,
  dimensions: dims(Nullable(Type.Object({ bins: Type.Array(Type.Number()), samples: Type.Integer() }))),
});
export type TrustDriftRecalibration = Static<typeof TrustDriftRecalibration>;

/** `POST /api/v1/trust-scores/recompute` (contract §4.12; design §8.14): the trust engine run summary (counts; `duration_ms` in milliseconds). */
export const TrustRecomputeSummary = Type.Object(
  {
    computed_at: Timestamp,
    agents: Type.Integer({ description: 'agents scored' }),
    snapshots: Type.Integer({ description: 'trust_snapshots rows written (one per agent and window)' }),
    daily_scores: Type.Integer({ description: 'per-day dimension rows upserted' }),
    baselines: Type.Integer({ description: 'drift baselines established by this run' }),
    tier_changes: Type.Integer({ description: 'tier changes applied by this run' }),
    duration_ms: Type.Number(),
  },
  { description: 'the trust engine run summary' },
);
export type TrustRecomputeSummary = Static<typeof TrustRecomputeSummary>;

/** One window's score in a {@link TrustReport} (the score answer without the agent fields). */
export const TrustReportScore = Type.Object({ composite_score: Score, dimensions: Dimensions, percentile: Percentile, computed_at: Timestamp, sources: Sources });
export type TrustReportScore = Static<typeof TrustReportScore>;

/** `GET /api/v1/trust-scores/{agent_id}/report` (contract §4.12; design §8.14): the compliance report (JSON form); every time is ISO 8601. */
export const TrustReport = Type.Object({
  report_id: Uuid,
  generated_at: Timestamp,
  agent: Type.Object({
    agent_id: Uuid,
    hub_address: Nullable(Type.String()),
    did: Nullable(Type.String()),
    display_name: Nullable(Type.String()),
    tier: Tier,
    enrolled_at: Timestamp,
  }),
  scores: Type.Object(Object.fromEntries(TRUST_WINDOWS.map((w) => [w, TrustReportScore])) as Record<TrustWindow, typeof TrustReportScore>),
  tier_changes: Type.Array(TrustTierChange),
  policy: Type.Object({ period_days: Type.Integer(), evaluations: Type.Integer(), violations: Type.Integer(), by_outcome: Type.Record(Type.String(), Type.Integer()) }),
  drift: TrustDrift,
  active_grants: Type.Integer({ minimum: 0 }),
  audit: Type.Object({ period_days: Type.Integer(), events_30d: Type.Integer(), chain_valid: Type.Boolean() }),
});
export type TrustReport = Static<typeof TrustReport>;

/**
 * The report route's 200: JSON ({@link TrustReport}) or, with `format=html` or `Accept: text/html`,
 * a standalone HTML document (an attachment). Typed as the JSON form (what `getTrustReport` answers).
 */
const TrustReportAnswer = Type.Unsafe<TrustReport>({
  description: 'the report',
  content: { 'application/json': { schema: TrustReport }, 'text/html': { schema: Type.String() } },
});

const tags = ['trust'];

/** Route rows of this area (owner JWT only). */
export const trustRoutes = {
  getTrustFleet: defineRoute({
    method: 'GET',
    path: '/api/v1/trust-scores/fleet',
    auth: 'owner',
    tags,
    summary: "Fleet overview: each agent's latest score and per-dimension median, standard deviation and mean",
    description:
      'Overview of every agent of the tenant for a `window` (`7d` by default, `30d`, `90d`): each agent\'s latest composite score and tier, and per dimension the fleet\'s median, standard deviation and mean.',
    query: TrustWindowQuery,
    responses: { 200: TrustFleet },
    errors: [400, 401, 403],
  }),
  recomputeTrust: defineRoute({
    method: 'POST',
    path: '/api/v1/trust-scores/recompute',
    auth: 'owner',
    tags,
    summary: "Recompute the trust scores of the caller's tenant now (normally every 6 hours); 409 while another recompute of the tenant runs, 2 per minute per tenant",
    description:
      'Runs the trust engine for the caller\'s tenant now instead of waiting for the scheduled run (every 6 hours): scores, daily scores, drift baselines and tier changes. Answers what it computed and how long it took. 409 while another recompute of the tenant (the scheduled job or another request) is running. 429 also beyond 2 requests per minute per tenant (`RATE_LIMIT_TRUST_RECOMPUTE_PER_MIN`), shared by every owner of the tenant.',
    responses: { 200: TrustRecomputeSummary },
    errors: [401, 403, 409, 429],
  }),
  getTrustScore: defineRoute({
    method: 'GET',
    path: '/api/v1/trust-scores/{agent_id}',
    auth: 'owner',
    tags,
    summary: "An agent's current trust score for a window (contract §2.9; contract §3.9 warm-up answer before the first recompute)",
    description:
      'An agent\'s current trust score for a `window` (`7d` by default): composite score, tier, the 12 dimensions and the percentile within the tenant. Before the engine first scored the window, the warm-up answer: composite and every dimension 0.5 (source `warmup`), percentile 50. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TrustAgentParams,
    query: TrustWindowQuery,
    responses: { 200: TrustScore },
    errors: [400, 401, 403, 404],
  }),
  getTrustHistory: defineRoute({
    method: 'GET',
    path: '/api/v1/trust-scores/{agent_id}/history',
    auth: 'owner',
    tags,
    summary: "An agent's 7-day scores over the last `days` days, oldest first, with its tier changes",
    description:
      'An agent\'s 7-day composite and dimension scores per day over the last `days` days (30 by default, 1 to 365), oldest first, with its tier changes in that period. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TrustAgentParams,
    query: TrustHistoryQuery,
    responses: { 200: TrustHistory },
    errors: [400, 401, 403, 404],
  }),
  getTrustReport: defineRoute({
    method: 'GET',
    path: '/api/v1/trust-scores/{agent_id}/report',
    auth: 'owner',
    tags,
    summary: 'Compliance report (enterprise tier): JSON, or a standalone HTML download with format=html or Accept: text/html',
    description:
      'A compliance report of an enterprise-tier agent: identity, scores of every window, tier changes of 90 days, policy outcomes and violations of 30 days, drift, active Skill Permission Tokens, audit events of 30 days and whether the tenant\'s audit chain verifies. JSON, or a standalone HTML download with `format=html` (or `Accept: text/html` without `format`). Not stored: every request builds a fresh report. 403 unless the agent\'s tier is `enterprise`. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TrustAgentParams,
    query: TrustReportQuery,
    responses: { 200: TrustReportAnswer },
    errors: [400, 401, 403, 404],
  }),
  getTrustDrift: defineRoute({
    method: 'GET',
    path: '/api/v1/trust-scores/{agent_id}/drift',
    auth: 'owner',
    tags,
    summary: 'Per-dimension PSI drift of the window against the baseline (contract §4.12)',
    description:
      'Per-dimension population stability index (PSI) of the agent\'s daily scores in the `window` (`30d` by default) against its baseline, with `alert` true when some dimension drifted significantly (PSI above 0.25), so a change in behaviour shows before the composite moves. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant.',
    params: TrustAgentParams,
    query: TrustDriftQuery,
    responses: { 200: TrustDrift },
    errors: [400, 401, 403, 404],
  }),
  recalibrateTrustDrift: defineRoute({
    method: 'POST',
    path: '/api/v1/trust-scores/{agent_id}/drift/recalibrate',
    auth: 'owner',
    tags,
    summary: "Replace the agent's drift baselines with its most recent 30 days",
    description:
      'Replaces the agent\'s drift baselines with its most recent 30 complete days of daily scores (after an intended change of behaviour); audited. Answers the new baselines per dimension. 404 when `{agent_id}` (a device id or hub address) names no agent of the tenant. 409 when those 30 days hold too few daily scores to form a baseline.',
    params: TrustAgentParams,
    responses: { 200: TrustDriftRecalibration },
    errors: [400, 401, 403, 404, 409],
  }),
};
