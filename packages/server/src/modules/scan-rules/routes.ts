/**
 * Scan rule routes (contract §4.14; docs/decisions.md "Scan rules"):
 * - `GET /scan-rules` (auth `any`: the contract's device JWT or API key, plus the owner who edits it)
 *   answers the current set `{version, rules, updated_at, enabled}`;
 * - `POST /scan-rules` (owner) saves `{rules}` as a new version (201);
 * - `GET /scan-rules/versions` (owner) lists the saved versions.
 */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { ownerOf, tenantOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import type { ScanRuleService } from './service.js';

export const scanRuleRoutes: FastifyPluginAsync<{ scanRules: ScanRuleService }> = async (app, { scanRules }) => {
  serve(app, ROUTES.getScanRules, async (req) => scanRules.current(tenantOf(req)));

  serve(app, ROUTES.updateScanRules, async (req, reply) => {
    const o = ownerOf(req);
    return reply.status(201).send(await scanRules.replace(o.tenantId, o.sub, req.body.rules));
  });

  serve(app, ROUTES.listScanRuleVersions, async (req) => ({ versions: await scanRules.versions(ownerOf(req).tenantId) }));
};
