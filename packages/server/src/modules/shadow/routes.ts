/**
 * Shadow-session routes (SPEC §4.17; DESIGN §8.8, §8.20), all owner JWT:
 * `POST /shadow/sessions` (201), `GET /shadow/sessions` (?device_id, ?level, cursor/limit),
 * `GET /shadow/sessions/{session_id}`, `POST …/record-human-decision` (201),
 * `GET …/graduation-check`, `POST …/graduate`, `POST …/demote` (200 with the session).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Nullable, refuseUnknownKeys, Timestamp, Uuid } from '../../http/schemas.js';
import { DEFAULT_CONFIG, SHADOW_LEVELS } from './gates.js';
import type { ShadowService } from './service.js';

const Level = Type.Union(SHADOW_LEVELS.map((l) => Type.Literal(l)));
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Action = Type.String({ minLength: 1, maxLength: 200, description: 'compared with the other side after trimming, case-insensitively' });

const ConfigIn = refuseUnknownKeys(
  Type.Object(
    {
      min_observations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: `default ${DEFAULT_CONFIG.min_observations}` })),
      agreement_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: `default ${DEFAULT_CONFIG.agreement_threshold}` })),
      critical_miss_window_hours: Type.Optional(
        Type.Number({ exclusiveMinimum: 0, maximum: 87_600, description: `hours, default ${DEFAULT_CONFIG.critical_miss_window_hours}` }),
      ),
    },
    { additionalProperties: false },
  ),
);
const ConfigOut = Type.Object({ min_observations: Type.Integer(), agreement_threshold: Type.Number(), critical_miss_window_hours: Type.Number() });
const Stats = Type.Object(
  { observations: Type.Integer(), agreed: Type.Integer(), agreement_rate: Type.Number(), critical_misses: Type.Integer() },
  { description: 'evidence of the current level: observations recorded at it since level_since' },
);
const SessionOut = Type.Object({
  session_id: Uuid,
  device_id: Uuid,
  skill_name: Type.String(),
  decision_class: Type.String(),
  config: ConfigOut,
  level: Level,
  level_since: Timestamp,
  created_at: Timestamp,
  stats: Stats,
});
const CreateBody = Type.Object({
  device_id: Uuid,
  skill_name: Name('the capability evaluated'),
  decision_class: Name('the type of decision'),
  config: Type.Optional(ConfigIn),
});
const RecordBody = Type.Object({
  observation_id: Type.String({ minLength: 1, maxLength: 200, description: 'unique within the session' }),
  agent_recommendation: Type.Object({
    action: Action,
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    reasoning: Type.Optional(Type.String({ maxLength: 4000 })),
  }),
  human_decision: Type.Object({ action: Action, notes: Type.Optional(Type.String({ maxLength: 4000 })) }),
  critical_miss: Type.Optional(Type.Boolean({ description: 'the reviewer marks a disagreement as a critical miss (DESIGN §8.8); 400 on an agreement' })),
});
const RecordOut = Type.Object({
  observation_id: Type.String(),
  agreed: Type.Boolean(),
  critical_miss: Type.Boolean(),
  level: Level,
  recorded_at: Timestamp,
  stats: Stats,
});
const Gate = (fields: Parameters<typeof Type.Object>[0]) => Type.Object({ ...fields, met: Type.Boolean() });
const GraduationCheckOut = Type.Object({
  eligible: Type.Boolean(),
  current_level: Level,
  next_level: Nullable(Level),
  gates: Type.Object({
    min_observations: Gate({ required: Type.Integer(), actual: Type.Integer() }),
    agreement_threshold: Gate({ required: Type.Number(), actual: Type.Number() }),
    critical_miss_window: Gate({ window_hours: Type.Number(), misses: Type.Integer() }),
  }),
});
const DemoteBody = Type.Object({ level: Level, reason: Type.String({ minLength: 1, maxLength: 500 }) });
const SessionParams = Type.Object({ session_id: Uuid });

const tags = ['shadow'];
const security = [{ ownerJwt: [] }];
const auth = { auth: 'owner' as const };

export const shadowRoutes: FastifyPluginAsyncTypebox<{ shadow: ShadowService }> = async (app, { shadow }) => {
  app.post(
    '/shadow/sessions',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'Start a shadow session for one agent, skill and decision class (level shadow)',
        body: CreateBody,
        response: { 201: SessionOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await shadow.create(o.tenantId, o.sub, req.body));
    },
  );

  app.get(
    '/shadow/sessions',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'List shadow sessions, oldest first',
        querystring: Type.Object({
          device_id: Type.Optional(Uuid),
          level: Type.Optional(Level),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the previous answer’s next_cursor' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Type.Object({ sessions: Type.Array(SessionOut), next_cursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => shadow.list(ownerOf(req).tenantId, req.query),
  );

  app.get(
    '/shadow/sessions/:session_id',
    {
      config: auth,
      schema: { tags, security, summary: 'One shadow session with its current-level stats', params: SessionParams, response: { 200: SessionOut, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => shadow.get(ownerOf(req).tenantId, req.params.session_id),
  );

  app.post(
    '/shadow/sessions/:session_id/record-human-decision',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'Record a human decision next to the agent recommendation; the platform compares the actions',
        params: SessionParams,
        body: RecordBody,
        response: { 201: RecordOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await shadow.record(o.tenantId, o.sub, req.params.session_id, req.body));
    },
  );

  app.get(
    '/shadow/sessions/:session_id/graduation-check',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'The three graduation gates against the evidence of the current level',
        params: SessionParams,
        response: { 200: GraduationCheckOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => shadow.graduationCheck(ownerOf(req).tenantId, req.params.session_id),
  );

  app.post(
    '/shadow/sessions/:session_id/graduate',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'Promote one level when all gates are met (owner only, never automatic)',
        params: SessionParams,
        response: { 200: SessionOut, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return shadow.graduate(o.tenantId, o.sub, req.params.session_id);
    },
  );

  app.post(
    '/shadow/sessions/:session_id/demote',
    {
      config: auth,
      schema: {
        tags,
        security,
        summary: 'Demote to a lower level (resets the evidence)',
        params: SessionParams,
        body: DemoteBody,
        response: { 200: SessionOut, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const o = ownerOf(req);
      return shadow.demote(o.tenantId, o.sub, req.params.session_id, req.body);
    },
  );
};
