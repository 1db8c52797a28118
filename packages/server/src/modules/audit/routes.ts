/** Audit routes (SPEC §4.14; DESIGN §8.10, §8.22): query the tenant's trail and recompute its chain. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { AUDIT_EVENT_TYPES } from './events.js';
import type { AuditService } from './service.js';

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'BLAKE2b-256, hex' });
const AuditEventOut = Type.Object({
  event_id: Uuid,
  type: Type.String(),
  actor: Type.String(),
  subject: Nullable(Type.String()),
  data: Type.Unknown(),
  created_at: Timestamp,
  prev_hash: Hash,
  hash: Hash,
});
const Verdict = Type.Object({
  valid: Type.Boolean(),
  checked: Type.Integer({ minimum: 0 }),
  first_broken: Nullable(Type.Object({ seq: Type.Integer(), event_id: Uuid, reason: Type.String() })),
});
const Filter = Type.String({ minLength: 1, maxLength: 200 });
const AuditQuery = Type.Object({
  type: Type.Optional(Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t)))),
  actor: Type.Optional(Filter),
  subject: Type.Optional(Filter),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive lower bound on created_at' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive upper bound on created_at' })),
  cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'a previous next_cursor' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
});
const tags = ['audit'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/audit/events',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Query the hash-chained audit trail, newest first',
        querystring: AuditQuery,
        response: { 200: Type.Object({ events: Type.Array(AuditEventOut), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => audit.list(ownerOf(req).tenantId, req.query),
  );

  app.get(
    '/audit/verify',
    { config: owner, schema: { tags, security, summary: "Recompute the tenant's audit hash chain", response: { 200: Verdict, ...errorResponses(401, 403) } } },
    async (req) => audit.verify(ownerOf(req).tenantId),
  );
};
