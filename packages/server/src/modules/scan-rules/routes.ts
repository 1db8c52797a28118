/**
 * Scan rule routes (SPEC §4.14; docs/decisions.md "Scan rules"):
 * - `GET /scan-rules` (auth `any`: the SPEC's device JWT or API key, plus the owner who edits it)
 *   answers the current set `{version, rules, updated_at, enabled}`;
 * - `POST /scan-rules` (owner) saves `{rules}` as a new version (201);
 * - `GET /scan-rules/versions` (owner) lists the saved versions.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf, tenantOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp, refuseUnknownKeys } from '../../http/schemas.js';
import { SCAN_ACTIONS, SCAN_LIMITS, SCAN_SEVERITIES, type ScanRuleService } from './service.js';

const Rule = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$', description: 'unique within the set; lowercase letters, digits, _ . -' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    pattern: Type.String({ minLength: 1, maxLength: SCAN_LIMITS.maxPatternLength, description: 'JavaScript regular expression source' }),
    flags: Type.Optional(Type.String({ pattern: '^[imsuv]{0,5}$', description: 'RegExp flags among i, m, s, u, v' })),
    action: Type.Union(SCAN_ACTIONS.map((a) => Type.Literal(a)), { description: 'block stops the send; warn reports and sends' }),
    severity: Type.Union(SCAN_SEVERITIES.map((s) => Type.Literal(s))),
  },
  { additionalProperties: false },
);
const RuleSetOut = Type.Object({
  version: Type.Integer({ description: '0 = the built-in set' }),
  rules: Type.Array(Rule),
  updated_at: Nullable(Timestamp),
  enabled: Type.Boolean({ description: 'false when the scan_rules_enabled setting is off (rules empty)' }),
});
const RuleSetIn = refuseUnknownKeys(Type.Object({ rules: Type.Array(Rule, { maxItems: SCAN_LIMITS.maxRules }) }, { additionalProperties: false }));
const VersionOut = Type.Object({ version: Type.Integer(), rule_count: Type.Integer(), created_by: Type.String(), created_at: Timestamp });

const tags = ['scan-rules'];
const ownerSecurity = [{ ownerJwt: [] }];

export const scanRuleRoutes: FastifyPluginAsyncTypebox<{ scanRules: ScanRuleService }> = async (app, { scanRules }) => {
  app.get(
    '/scan-rules',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        security: [{ deviceJwt: [] }, { apiKey: [] }, { ownerJwt: [] }],
        summary: 'The current client-side scan rule set (built-in version 0 until the owner saves one)',
        response: { 200: RuleSetOut, ...errorResponses(401, 403) },
      },
    },
    async (req) => scanRules.current(tenantOf(req)),
  );

  app.post(
    '/scan-rules',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Save a new version of the scan rule set (version + 1; older versions are kept)',
        body: RuleSetIn,
        response: { 201: RuleSetOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await scanRules.replace(o.tenantId, o.sub, req.body.rules));
    },
  );

  app.get(
    '/scan-rules/versions',
    {
      config: { auth: 'owner' },
      schema: { tags, security: ownerSecurity, summary: 'Saved scan rule set versions, newest first', response: { 200: Type.Object({ versions: Type.Array(VersionOut) }), ...errorResponses(401, 403) } },
    },
    async (req) => ({ versions: await scanRules.versions(ownerOf(req).tenantId) }),
  );
};
