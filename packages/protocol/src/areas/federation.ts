/**
 * Federation agreements (contract §2.12, §4.13): schemas, route rows and frames.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';

/** Status of a federation agreement (contract §2.12). */
export const FEDERATION_STATUSES = ['pending', 'active', 'expired', 'revoked'] as const;
/** Status of a federation agreement (contract §2.12). */
export type FederationStatus = (typeof FEDERATION_STATUSES)[number];

/** A federation agreement (contract §2.12, §4.13); `role` is the caller's side. */
export const FederationAgreement = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  partner_tenant_id: Uuid,
  trust_floor: Type.Number(),
  allowed_capabilities: Type.Array(Type.String()),
  audit_sharing: Type.Boolean(),
  expires_at: Timestamp,
  status: lit(FEDERATION_STATUSES),
  role: Type.Union([Type.Literal('proposer'), Type.Literal('partner')], { description: "the caller's side" }),
  created_at: Timestamp,
  accepted_at: Nullable(Timestamp),
  renewal: Nullable(
    Type.Object(
      {
        expires_at: Timestamp,
        proposed_by: Type.Union([Type.Literal('proposer'), Type.Literal('partner')], { description: 'the side that asked for it' }),
      },
      { description: 'a renewal one side asked for: it applies when the other side accepts (POST …/accept)' },
    ),
  ),
});
export type FederationAgreement = Static<typeof FederationAgreement>;

/** `POST /api/v1/federation/agreements` body (contract §4.13): `trust_floor` 0..1; empty or absent `allowed_capabilities` = all; `expires_at` ISO 8601 in the future, at most 365 days ahead. */
export const ProposeFederationRequest = Type.Object({
  partner_tenant_id: Type.String({ format: 'uuid', description: 'the other tenant' }),
  trust_floor: Type.Number({ minimum: 0, maximum: 1, description: 'minimum trust score of federated agents' }),
  allowed_capabilities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'empty or absent = all' })),
  audit_sharing: Type.Optional(Type.Boolean({ default: false })),
  expires_at: Type.String({ format: 'date-time', description: 'ISO 8601, in the future, at most 365 days ahead' }),
});
export type ProposeFederationRequest = Static<typeof ProposeFederationRequest>;

/** `POST /api/v1/federation/agreements/{id}/renew` body: a later expiry, at most 365 days ahead. */
export const RenewFederationRequest = Type.Object({
  expires_at: Type.String({ format: 'date-time', description: 'ISO 8601, in the future, later than the current expiry and at most 365 days ahead' }),
});
export type RenewFederationRequest = Static<typeof RenewFederationRequest>;

export const FederationAgreementList = Type.Object({ agreements: Type.Array(FederationAgreement) });
export type FederationAgreementList = Static<typeof FederationAgreementList>;

const tags = ['federation'];
const transitionErrors = [400, 401, 403, 404, 409];

export const federationRoutes = {
  proposeFederation: defineRoute({
    method: 'POST',
    path: '/api/v1/federation/agreements',
    auth: 'owner',
    tags,
    summary: 'Propose a federation agreement to another tenant',
    description:
      'Proposes a federation agreement to another tenant (its id), with a trust floor, the capabilities its agents may use across, audit sharing and an expiry at most 365 days ahead. The agreement is `pending` until the partner accepts; federated A2A channels need an active one. Audited in both tenants\' logs; answers 201. 400 when the partner is the caller\'s own tenant, or the expiry is not in the future or too far ahead. 404 when the partner tenant does not exist. 409 when a pending or active agreement with that tenant already exists (renew or revoke it).',
    body: ProposeFederationRequest,
    responses: { 201: FederationAgreement },
    errors: [400, 401, 403, 404, 409],
  }),
  listFederationAgreements: defineRoute({
    method: 'GET',
    path: '/api/v1/federation/agreements',
    auth: 'owner',
    tags,
    summary: 'Agreements the tenant proposed or was proposed',
    description:
      'Every agreement the tenant proposed or was proposed, oldest first, with its role in it, status (`pending`, `active`, `expired`, `revoked`), terms, expiry and any renewal asked for.',
    responses: { 200: FederationAgreementList },
    errors: [401, 403],
  }),
  acceptFederation: defineRoute({
    method: 'POST',
    path: '/api/v1/federation/agreements/{id}/accept',
    auth: 'owner',
    tags,
    summary: 'The partner tenant accepts: pending -> active; or the other party accepts a renewal one side asked for',
    description:
      'Accepts what the other side asked for: the partner accepts a pending agreement (it becomes `active`), or a party accepts the later expiry the other party asked for with renew (an expired agreement becomes active again). Audited in both tenants\' logs; answers the agreement. 403 when the caller proposed the pending agreement, or asked for the renewal itself. 404 when the tenant is not a party to the agreement. 409 when there is nothing to accept (active or expired without a renewal, revoked), the renewal\'s expiry has passed, or reviving it would make a second live agreement with the same tenant.',
    params: IdParams,
    responses: { 200: FederationAgreement },
    errors: transitionErrors,
  }),
  renewFederation: defineRoute({
    method: 'POST',
    path: '/api/v1/federation/agreements/{id}/renew',
    auth: 'owner',
    tags,
    summary: 'Either party asks for a later expiry (the other accepts it); the proposer changes a pending proposal directly',
    description:
      'Asks for a later expiry (at most 365 days ahead). For an active or expired agreement the request is recorded and applies once the other party accepts it, the agreement keeping its term meanwhile; the proposer changes a pending proposal\'s expiry directly. Audited in both tenants\' logs; answers the agreement. 400 when the expiry is not in the future, too far ahead, or not later than the current one. 403 when the partner tries to change a pending proposal (it accepts or revokes). 404 when the tenant is not a party. 409 when the agreement is revoked.',
    params: IdParams,
    body: RenewFederationRequest,
    responses: { 200: FederationAgreement },
    errors: transitionErrors,
  }),
  revokeFederation: defineRoute({
    method: 'POST',
    path: '/api/v1/federation/agreements/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Either party revokes (terminal)',
    description:
      'Either party ends the agreement for good (`revoked` is terminal; a pending renewal lapses); federated A2A channels need an active agreement. Audited in both tenants\' logs; answers the agreement. 404 when the tenant is not a party. 409 when it is already revoked.',
    params: IdParams,
    responses: { 200: FederationAgreement },
    errors: transitionErrors,
  }),
};
