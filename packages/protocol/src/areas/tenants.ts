/**
 * Tenants and invites (contract §2.2, §3.2, §4.2): schemas, route rows and frames.
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

/**
 * `GET /api/v1/me` answer: the signed-in owner as the service sees it. `sub` the identity
 * provider's subject; `tenant_id` and `role` the owner's tenant (the first one) and role there,
 * null before the owner has a tenant; `operator` true for a platform operator (the subject is
 * listed in `PLATFORM_OPERATOR_SUBS`, or a development operator token; docs/decisions.md
 * "Platform operators and operator tier grants").
 */
export const OwnerMe = Type.Object({
  sub: Type.String(),
  tenant_id: Nullable(Uuid),
  role: Nullable(Type.String()),
  operator: Type.Boolean({ description: 'a platform operator (PLATFORM_OPERATOR_SUBS)' }),
});
export type OwnerMe = Static<typeof OwnerMe>;

/** Invite states (contract §2.2, §3.2); an `active` invite past its expiry reads as `expired`. */
export const INVITE_STATUSES = ['active', 'revoked', 'consumed', 'expired'] as const;
export const InviteStatus = lit(INVITE_STATUSES);
export type InviteStatus = Static<typeof InviteStatus>;

/** `POST /api/v1/invites` body; `label` is optional (at most 200 characters). */
export const CreateInviteRequest = Type.Object({ label: Type.Optional(Type.String({ maxLength: 200 })) });
export type CreateInviteRequest = Static<typeof CreateInviteRequest>;

/** An invite as listed (contract §2.2). `expires_at` is 10 minutes after creation. */
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
    description:
      'Creates a tenant named by `name` (1 to 200 characters, trimmed) and makes the caller its `OWNER_ADMIN` in the same transaction; answers 201 with the tenant id, name and role. An owner may create several tenants and picks one per request with `X-Tenant-Id`.',
    body: CreateTenantRequest,
    responses: { 201: Tenant },
    errors: [400, 401, 403, 429],
  }),
  getMe: defineRoute({
    method: 'GET',
    path: '/api/v1/me',
    auth: 'owner-any',
    tags: ['tenants'],
    summary: 'The signed-in owner: subject, tenant and role (null before the first tenant), platform operator or not',
    description:
      'The signed-in owner: subject, current tenant and role (both null before the first tenant is created) and whether the owner is a platform operator. Answers 200 whether or not the owner has a tenant, so a client can create the tenant on first sign-in and learn whether to offer the operator screens.',
    responses: { 200: OwnerMe },
    errors: [401, 403],
  }),
  // The body is optional (design §7: "an optional {label}"): the server reads a missing body as {}.
  createInvite: defineRoute({
    method: 'POST',
    path: '/api/v1/invites',
    auth: 'owner',
    tags,
    summary: 'Create a single-use invite; the raw token is returned once',
    description:
      'Creates a single-use invite for enrolling one agent device, with an optional `label` (at most 200 characters; the enrolled agent takes it as its name). Answers 201 with the invite and its raw `svc_tok_…` token, shown this once: only its hash is stored. The invite expires 10 minutes after creation (configurable); a missing body reads as `{}`.',
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
    description:
      'Every invite of the tenant that is not deleted, newest first, with its state (`active`, `revoked`, `consumed`, or `expired` once an active invite is past its expiry) and, once consumed, the device it enrolled. Tokens are never listed.',
    responses: { 200: InviteList },
    errors: [401, 403],
  }),
  revokeInvite: defineRoute({
    method: 'POST',
    path: '/api/v1/invites/{id}/revoke',
    auth: 'owner',
    tags,
    summary: 'Revoke an active invite (409 unless active)',
    description:
      'Revokes an active invite so its token no longer enrolls a device, and records `invite.revoked` in the audit log; answers the updated invite. 404 when no invite of the tenant has this id (or it is deleted); 409 when the invite is not active (consumed, expired or already revoked).',
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
    description:
      'Soft-deletes an ended invite (revoked, consumed or expired): it disappears from the list; the device it enrolled is unaffected. Answers 204. 404 when no invite of the tenant has this id (or it is already deleted); 409 while the invite is active (revoke it first).',
    params: IdParams,
    responses: { 204: null },
    errors: [400, 401, 403, 404, 409],
  }),
};
