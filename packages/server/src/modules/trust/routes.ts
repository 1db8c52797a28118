/**
 * Trust score routes (SPEC §2.9, §3.3, §3.9, §4.12; DESIGN §8.14, §8.18, §8.21), owner JWT only:
 * - `GET /trust-scores/fleet?window=` fleet overview (registered before `{agent_id}`; the router
 *   prefers the static segment anyway, so an agent whose hub address is `fleet` is reached by its
 *   device id);
 * - `POST /trust-scores/recompute` runs the trust engine for the caller's tenant now (rate limit
 *   `RATE_LIMIT_TRUST_RECOMPUTE_PER_MIN` per tenant, default 2/min → 429; 409 while another
 *   recompute of the tenant — the scheduled job or another request — is running);
 * - `GET /trust-scores/{agent_id}?window=` current score; `…/history?days=`; `…/report?format=`
 *   (JSON, or a standalone HTML download with `format=html` or `Accept: text/html`);
 *   `…/drift?window=`; `POST …/drift/recalibrate`.
 * `{agent_id}` is the agent's device id or hub address; answers carry the device id.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { routeLimits } from '../../http/rate-limit.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import type { TrustDriftService } from './drift.js';
import type { TrustEngine } from './engine.js';
import { HISTORY_DAYS, type TrustQueryService } from './query.js';
import { renderReportHtml, reportFileName } from './report-html.js';
import type { TrustReportService } from './report.js';
import { TIERS, TRUST_DIMENSIONS, TRUST_WINDOWS } from './types.js';

/** The engine operation `POST /trust-scores/recompute` runs (trust/engine.ts `TrustEngine`). */
export type TenantRecompute = Pick<TrustEngine, 'recomputeTenant'>;

const lit = <T extends string>(values: readonly T[], opts: Record<string, unknown> = {}) => Type.Union(values.map((v) => Type.Literal(v)), opts);
const dims = <T extends import('@sinclair/typebox').TSchema>(s: T) => Type.Object(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, s])) as Record<(typeof TRUST_DIMENSIONS)[number], T>);
/** A nullable number; `{type: [number, null]}` so that Ajv's coercion never turns 0 into null. */
const NullableNumber = Type.Unsafe<number | null>({ type: ['number', 'null'] });

const Score = Type.Number({ minimum: 0, maximum: 1 });
const Tier = lit(TIERS, { description: 'lowercase (DESIGN §8.21)' });
const Window = lit(TRUST_WINDOWS);
const Percentile = Type.Integer({ minimum: 0, maximum: 100, description: 'percentile rank in the tenant fleet (DESIGN §8.21)' });
const Dimensions = dims(Score);
const Sources = dims(lit(['telemetry', 'fleet_median', 'warmup'] as const));
const AgentParams = Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 255, description: 'agent device_id or hub address (DESIGN §8.18)' }) });
const WindowQuery = (dflt: string) => Type.Object({ window: Type.Optional(lit(TRUST_WINDOWS, { default: dflt })) });

const ScoreOut = Type.Object({
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
const TierChange = Type.Object({ from_tier: Type.String(), to_tier: Type.String(), reason: Type.String(), changed_at: Timestamp });
const FleetOut = Type.Object({
  window: Window,
  computed_at: Nullable(Timestamp),
  count: Type.Integer({ minimum: 0 }),
  agents: Type.Array(Type.Object({ agent_id: Uuid, hub_address: Nullable(Type.String()), composite_score: Score, tier: Tier, percentile: Percentile })),
  dimensions: dims(Type.Object({ median: NullableNumber, stddev: NullableNumber, mean: NullableNumber })),
});
const HistoryOut = Type.Object({
  agent_id: Uuid,
  days: Type.Integer(),
  history: Type.Array(Type.Object({ computed_at: Timestamp, composite_score: Score, tier: Tier, dimensions: Dimensions })),
  tier_changes: Type.Array(TierChange),
});
const Baseline = Type.Object({ window_start: Type.String({ description: 'YYYY-MM-DD (UTC)' }), window_end: Type.String({ description: 'YYYY-MM-DD (UTC)' }), established_at: Timestamp, reason: Type.String({ description: 'initial | recalibrated' }) });
const DriftOut = Type.Object({
  agent_id: Uuid,
  window: Window,
  baseline: Nullable(Baseline),
  dimensions: dims(
    Nullable(Type.Object({ psi: Type.Number({ minimum: 0 }), status: lit(['stable', 'moderate', 'significant'] as const), baseline_samples: Type.Integer(), current_samples: Type.Integer() })),
  ),
  alert: Type.Boolean({ description: 'true when some dimension drifted significantly (PSI > 0.25)' }),
  computed_at: Timestamp,
});
const RecalibrateOut = Type.Object({
  agent_id: Uuid,
  baseline: Baseline,
  dimensions: dims(Nullable(Type.Object({ bins: Type.Array(Type.Number()), samples: Type.Integer() }))),
});
const RecomputeOut = Type.Object(
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
const ReportScore = Type.Object({ composite_score: Score, dimensions: Dimensions, percentile: Percentile, computed_at: Timestamp, sources: Sources });
const ReportOut = Type.Object({
  report_id: Uuid,
  generated_at: Timestamp,
  agent: Type.Object({ agent_id: Uuid, hub_address: Nullable(Type.String()), did: Nullable(Type.String()), display_name: Nullable(Type.String()), tier: Tier, enrolled_at: Timestamp }),
  scores: Type.Object(Object.fromEntries(TRUST_WINDOWS.map((w) => [w, ReportScore])) as Record<(typeof TRUST_WINDOWS)[number], typeof ReportScore>),
  tier_changes: Type.Array(TierChange),
  policy: Type.Object({ period_days: Type.Integer(), evaluations: Type.Integer(), violations: Type.Integer(), by_outcome: Type.Record(Type.String(), Type.Integer()) }),
  drift: DriftOut,
  active_grants: Type.Integer({ minimum: 0 }),
  audit: Type.Object({ period_days: Type.Integer(), events_30d: Type.Integer(), chain_valid: Type.Boolean() }),
});

const tags = ['trust'];
const security = [{ ownerJwt: [] }];
const config = { auth: 'owner' as const };

export const trustRoutes: FastifyPluginAsyncTypebox<{ scores: TrustQueryService; drift: TrustDriftService; reports: TrustReportService; engine: TenantRecompute }> = async (
  app,
  { scores, drift, reports, engine },
) => {
  const limits = routeLimits(app.parley.config.rateLimits);
  app.get(
    '/trust-scores/fleet',
    {
      config,
      schema: {
        tags,
        security,
        summary: "Fleet overview: each agent's latest score and per-dimension median, standard deviation and mean",
        querystring: WindowQuery('7d'),
        response: { 200: FleetOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => scores.fleet(ownerOf(req).tenantId, req.query.window ?? '7d'),
  );

  app.post(
    '/trust-scores/recompute',
    {
      config: { ...config, rateLimit: limits.trustRecompute },
      schema: {
        tags,
        security,
        summary: "Recompute the trust scores of the caller's tenant now (normally every 6 hours); 409 while another recompute of the tenant runs, 2 per minute per tenant",
        response: { 200: RecomputeOut, ...errorResponses(401, 403, 409, 429) },
      },
    },
    async (req) => {
      const computedAt = new Date();
      const s = await engine.recomputeTenant(ownerOf(req).tenantId, computedAt);
      return { computed_at: computedAt.toISOString(), agents: s.agents, snapshots: s.snapshots, daily_scores: s.dailyScores, baselines: s.baselines, tier_changes: s.tierChanges, duration_ms: s.durationMs };
    },
  );

  app.get(
    '/trust-scores/:agent_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: "An agent's current trust score for a window (SPEC §2.9; SPEC §3.9 warm-up answer before the first recompute)",
        params: AgentParams,
        querystring: WindowQuery('7d'),
        response: { 200: ScoreOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => scores.score(ownerOf(req).tenantId, req.params.agent_id, req.query.window ?? '7d'),
  );

  app.get(
    '/trust-scores/:agent_id/history',
    {
      config,
      schema: {
        tags,
        security,
        summary: "An agent's 7-day scores over the last `days` days, oldest first, with its tier changes",
        params: AgentParams,
        querystring: Type.Object({ days: Type.Optional(Type.Integer({ minimum: HISTORY_DAYS.min, maximum: HISTORY_DAYS.max, default: HISTORY_DAYS.default })) }),
        response: { 200: HistoryOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => scores.history(ownerOf(req).tenantId, req.params.agent_id, req.query.days ?? HISTORY_DAYS.default),
  );

  app.get(
    '/trust-scores/:agent_id/report',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Compliance report (enterprise tier): JSON, or a standalone HTML download with format=html or Accept: text/html',
        params: AgentParams,
        querystring: Type.Object({ format: Type.Optional(lit(['json', 'html'] as const, { description: 'json (default) or html' })) }),
        response: {
          200: { description: 'the report', content: { 'application/json': { schema: ReportOut }, 'text/html': { schema: Type.String() } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const report = await reports.report(ownerOf(req).tenantId, req.params.agent_id);
      const html = req.query.format === 'html' || (req.query.format === undefined && (req.headers.accept ?? '').includes('text/html'));
      if (!html) return reply.type('application/json; charset=utf-8').send(report);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-disposition', `attachment; filename="${reportFileName(report)}"`)
        .send(renderReportHtml(report));
    },
  );

  app.get(
    '/trust-scores/:agent_id/drift',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Per-dimension PSI drift of the window against the baseline (SPEC §4.12)',
        params: AgentParams,
        querystring: WindowQuery('30d'),
        response: { 200: DriftOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => drift.drift(ownerOf(req).tenantId, req.params.agent_id, req.query.window ?? '30d'),
  );

  app.post(
    '/trust-scores/:agent_id/drift/recalibrate',
    {
      config,
      schema: {
        tags,
        security,
        summary: "Replace the agent's drift baselines with its most recent 30 days",
        params: AgentParams,
        response: { 200: RecalibrateOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return drift.recalibrate(o.tenantId, o.sub, req.params.agent_id);
    },
  );
};
