/** Federation agreement routes (SPEC §2.12, §4.13; renew and revoke: docs/decisions.md). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ownerOf } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams, Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { ownerTransition } from '../../http/transition.js';
import type { FederationService } from './service.js';

const Status = Type.Union(['pending', 'active', 'expired', 'revoked'].map((s) => Type.Literal(s)));
const AgreementOut = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  partner_tenant_id: Uuid,
  trust_floor: Type.Number(),
  allowed_capabilities: Type.Array(Type.String()),
  audit_sharing: Type.Boolean(),
  expires_at: Timestamp,
  status: Status,
  role: Type.Union([Type.Literal('proposer'), Type.Literal('partner')], { description: "the caller's side" }),
  created_at: Timestamp,
  accepted_at: Nullable(Timestamp),
});
const Proposal = Type.Object({
  partner_tenant_id: Type.String({ format: 'uuid', description: 'the other tenant' }),
  trust_floor: Type.Number({ minimum: 0, maximum: 1, description: 'minimum trust score of federated agents' }),
  allowed_capabilities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'empty or absent = all' })),
  audit_sharing: Type.Optional(Type.Boolean({ default: false })),
  expires_at: Type.String({ format: 'date-time', description: 'ISO 8601, in the future' }),
});
const Renewal = Type.Object({ expires_at: Type.String({ format: 'date-time', description: 'ISO 8601, in the future and later than the current expiry' }) });
const tags = ['federation'];
const security = [{ ownerJwt: [] }];
const owner = { auth: 'owner' as const };
const transitionErrors = errorResponses(400, 401, 403, 404, 409);

export const federationRoutes: FastifyPluginAsyncTypebox<{ federation: FederationService }> = async (app, { federation }) => {
  app.post(
    '/federation/agreements',
    {
      config: owner,
      schema: { tags, security, summary: 'Propose a federation agreement to another tenant', body: Proposal, response: { 201: AgreementOut, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (req, reply) => {
      const o = ownerOf(req);
      return reply.status(201).send(await federation.propose(o.tenantId, o.sub, req.body));
    },
  );

  app.get(
    '/federation/agreements',
    {
      config: owner,
      schema: { tags, security, summary: 'Agreements the tenant proposed or was proposed', response: { 200: Type.Object({ agreements: Type.Array(AgreementOut) }), ...errorResponses(401, 403) } },
    },
    async (req) => ({ agreements: await federation.list(ownerOf(req).tenantId) }),
  );

  ownerTransition(app, '/federation/agreements/:id/accept', { tags, summary: 'The partner tenant accepts: pending -> active', response: AgreementOut }, (o, id) =>
    federation.accept(o.tenantId, o.sub, id),
  );

  app.post(
    '/federation/agreements/:id/renew',
    {
      config: owner,
      schema: {
        tags,
        security,
        summary: 'Either party sets a later expiry; an expired agreement returns to pending',
        params: IdParams,
        body: Renewal,
        response: { 200: AgreementOut, ...transitionErrors },
      },
    },
    async (req) => federation.renew(ownerOf(req).tenantId, req.params.id, req.body.expires_at, ownerOf(req).sub),
  );

  ownerTransition(app, '/federation/agreements/:id/revoke', { tags, summary: 'Either party revokes (terminal)', response: AgreementOut }, (o, id) => federation.revoke(o.tenantId, id, o.sub));
};
