/**
 * Decision routes (SPEC §4.15; DESIGN §8.19, §8.22): `POST /decisions` (the agent, or the owner
 * on its behalf), `GET /decisions` (owner: awaiting ones, oldest first, paginated),
 * `POST /decisions/{id}/resolve` (owner: approve, deny or defer).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { agentDeviceOf, ownerOf } from '../../http/auth.js';
import { auditActor } from '../audit/parties.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { DECISION_STATUSES, RESOLUTIONS, RISK_LEVELS, type DecisionCreator, type DecisionService } from './service.js';

const lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const OptionId = Type.String({ minLength: 1, maxLength: 64 });
const DecisionOption = Type.Object(
  {
    option_id: OptionId,
    label: Type.String({ minLength: 1, maxLength: 200 }),
    risk_level: lit(RISK_LEVELS),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const AutoAction = Type.Object(
  { resolution: lit(['approve', 'deny'] as const), option_id: Type.Optional(OptionId) },
  { additionalProperties: false, description: 'fired when the deadline passes while the decision still awaits (DESIGN §8.19)' },
);
const DecisionOut = Type.Object({
  decision_id: Uuid,
  device_id: Uuid,
  title: Type.String(),
  description: Nullable(Type.String()),
  options: Type.Array(DecisionOption),
  deadline: Nullable(Timestamp),
  auto_action: Nullable(AutoAction),
  status: lit(DECISION_STATUSES),
  option_id: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_by: Type.String({ description: 'owner subject, or device:<device_id> when the agent created it' }),
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
  resolved_by: Nullable(Type.String({ description: 'owner subject, or system:deadline on expiry' })),
});
const CreateBody = Type.Object({
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'the agent device; required when an owner creates the decision on its behalf' })),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  options: Type.Array(DecisionOption, { minItems: 1, maxItems: 20 }),
  deadline: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, in the future' })),
  auto_action: Type.Optional(AutoAction),
});
const ResolveBody = Type.Object({
  resolution: lit(RESOLUTIONS),
  option_id: Type.Optional(OptionId),
  note: Type.Optional(Type.String({ maxLength: 2000 })),
});
const tags = ['decisions'];
const ownerSecurity = [{ ownerJwt: [] }];

export const decisionRoutes: FastifyPluginAsyncTypebox<{ decisions: DecisionService }> = async (app, { decisions }) => {
  app.post(
    '/decisions',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        security: [{ ownerJwt: [] }, { deviceJwt: [] }, { apiKey: [] }],
        summary: 'Create a decision request: by the agent (device JWT or API key) or by the owner on its behalf (device_id)',
        body: CreateBody,
        response: { 201: DecisionOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const p = req.principal;
      let tenantId: string;
      let creator: DecisionCreator;
      if (p?.kind === 'owner') {
        const o = ownerOf(req);
        tenantId = o.tenantId;
        creator = { kind: 'owner', sub: o.sub, deviceId: req.body.device_id };
      } else {
        const a = agentDeviceOf(req);
        tenantId = a.tenantId;
        creator = { kind: 'agent', deviceId: a.deviceId, deviceKind: a.kind, bodyDeviceId: req.body.device_id, actor: auditActor(p!) };
      }
      return reply.status(201).send(await decisions.create(tenantId, creator, req.body));
    },
  );

  app.get(
    '/decisions',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'List decisions awaiting the owner (pending and deferred), oldest first',
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the previous answer’s next_cursor' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Type.Object({ decisions: Type.Array(DecisionOut), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => decisions.list(ownerOf(req).tenantId, req.query),
  );

  app.post(
    '/decisions/:id/resolve',
    {
      config: { auth: 'owner' },
      schema: {
        tags,
        security: ownerSecurity,
        summary: 'Resolve a decision: approve, deny or defer (a deferred one stays open); sends decision_response to the agent',
        params: IdParams,
        body: ResolveBody,
        response: { 200: DecisionOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return decisions.resolve(o.tenantId, o.sub, req.params.id, req.body);
    },
  );
};
