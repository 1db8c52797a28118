/**
 * Tenants and invites (SPEC §2.2, §3.2, §4.2): schemas, route rows and frames.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { IdParams, lit, Nullable, Timestamp, Uuid } from '../common.js';

/** `POST /api/v1/tenants` body. `name`: 1–200 characters. */
export const CreateTenantRequest = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
export type CreateTenantRequest = Static<typeof CreateTenantRequest>;

/** `POST /api/v1/tenants` answer (201); the caller becomes `OWNER_ADMIN`. */
export const Tenant = Type.Object({ tenant_id: Type.String({ format: 'uuid' }), name: Type.String(), role: Type.String() });
export type Tenant = Static<typeof Tenant>;

/** Invite states (SPEC §2.2, §3.2); an `active` invite past its expiry reads as `expired`. */
export const INVITE_STATUSES = ['active', 'revoked', 'consumed', 'expired'] as const;
export const InviteStatus = lit(INVITE_STATUSES);
export type InviteStatus = Static<typeof InviteStatus>;

/** `POST /api/v1/invites` body; `label` is optional (at most 200 characters). */
export const CreateInviteRequest = Type.Object({ label: Type.Optional(Type.String({ maxLength: 200 })) });
export type CreateInviteRequest = Static<typeof CreateInviteRequest>;

/** An invite as listed (SPEC §2.2). `expires_at` is 10 minutes after creation. */
export const Invite = Type.Object({
  id: Uuid,
  status: InviteStatus,
  label: Nullable(Type.String()),
  created_at: Timestamp,
  expires_at: Timestamp,
  consumed_at: Nullable(Timestamp),
  device_id: Nullable(Uuid),
});
export type Invite = Static<typeof Invite>;

/** `POST /api/v1/invites` answer (201): the raw `svc_tok_…` token appears here only, once. */
export const CreatedInvite = Type.Intersect([Invite, Type.Object({ token: Type.String() })]);
export type CreatedInvite = Static<typeof CreatedInvite>;

/** `GET /api/v1/invites`. */
export const InviteList = Type.Object({ invites: Type.Array(Invite) });
export type InviteList = Static<typeof InviteList>;

const tags = ['invites'];

/** Route rows of this area. */
export const tenantsRoutes = {
  createTenant: defineRoute({
    method: 'POST',
    path: '/api/v1/tenants',
    auth: 'owner-any',
    tags: ['tenants'],
    summary: 'Create a tenant; the caller becomes OWNER_ADMIN',
    body: CreateTenantRequest,
    responses: { 201: Tenant },
    errors: [400, 401, 403, 429],
  }),
  // The body is optional (DESIGN §7: "an optional {label}"): the server reads a missing body as {}.
  createInvite: defineRoute({
    method: 'POST',
    path: '/api/v1/invites',
    auth: 'owner',
    tags,
    summary: 'Create a single-use invite; the raw token is returned once',
    body: CreateInviteRequest,
    responses: { 201: CreatedInvite },
    errors: [400, 401, 403, 429],
  }),
  listInvites: defineRoute({
    method: 'GET',
    path: '/api/v1/invites',
    auth: 'owner',
    tags,
    summary: 'List tenant invites',
    responses: { 200: InviteList },
    errors: [401, 403],
  }),
  revokeInvite: defineRoute({
    method: 'POST',
    path: '/api/v1/invites/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke an active invite (409 unless active)',
    params: IdParams,
    responses: { 200: Invite },
    errors: [400, 401, 403, 404, 409],
  }),
  deleteInvite: defineRoute({
    method: 'DELETE',
    path: '/api/v1/invites/{id}',
    auth: 'owner',
    tags,
    summary: 'Soft-delete a revoked, consumed or expired invite',
    params: IdParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404, 409],
  }),
};
