/**
 * Trust score routes (contract §2.9, §3.3, §3.9, §4.12; design §8.14, §8.18, §8.21), owner JWT only:
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
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { routeLimits } from '../../http/rate-limit.js';
import type { TrustDriftService } from './drift.js';
import type { TrustEngine } from './engine.js';
import { HISTORY_DAYS, type TrustQueryService } from './query.js';
import { renderReportHtml, reportFileName } from './report-html.js';
import type { TrustReportService } from './report.js';

/** The engine operation `POST /trust-scores/recompute` runs (trust/engine.ts `TrustEngine`). */
export type TenantRecompute = Pick<TrustEngine, 'recomputeTenant'>;

export const trustRoutes: FastifyPluginAsync<{ scores: TrustQueryService; drift: TrustDriftService; reports: TrustReportService; engine: TenantRecompute }> = async (
  app,
  { scores, drift, reports, engine },
) => {
  const limits = routeLimits(app.parley.config.rateLimits);

  serve(app, ROUTES.getTrustFleet, async (req) => scores.fleet(ownerOf(req).tenantId, req.query.window ?? '7d'));

  serve(
    app,
    ROUTES.recomputeTrust,
    async (req) => {
      const computedAt = new Date();
      const s = await engine.recomputeTenant(ownerOf(req).tenantId, computedAt);
      return { computed_at: computedAt.toISOString(), agents: s.agents, snapshots: s.snapshots, daily_scores: s.dailyScores, baselines: s.baselines, tier_changes: s.tierChanges, duration_ms: s.durationMs };
    },
    { config: { rateLimit: limits.trustRecompute } },
  );

  serve(app, ROUTES.getTrustScore, async (req) => scores.score(ownerOf(req).tenantId, req.params.agent_id, req.query.window ?? '7d'));

  serve(app, ROUTES.getTrustHistory, async (req) => scores.history(ownerOf(req).tenantId, req.params.agent_id, req.query.days ?? HISTORY_DAYS.default));

  serve(app, ROUTES.getTrustReport, async (req, reply) => {
    const report = await reports.report(ownerOf(req).tenantId, req.params.agent_id);
    const html = req.query.format === 'html' || (req.query.format === undefined && (req.headers.accept ?? '').includes('text/html'));
    if (!html) return reply.type('application/json; charset=utf-8').send(report);
    return reply
      .type('text/html; charset=utf-8')
      .header('content-disposition', `attachment; filename="${reportFileName(report)}"`)
      .send(renderReportHtml(report));
  });

  serve(app, ROUTES.getTrustDrift, async (req) => drift.drift(ownerOf(req).tenantId, req.params.agent_id, req.query.window ?? '30d'));

  serve(app, ROUTES.recalibrateTrustDrift, async (req) => {
    const o = ownerOf(req);
    return drift.recalibrate(o.tenantId, o.sub, req.params.agent_id);
  });
};
