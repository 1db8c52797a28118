/**
 * Authentication hook (SPEC §5). Each route declares `config.auth`; an `onRoute` hook registered
 * after the rate limiter appends the check to the route's `onRequest` hooks, so the order is
 * rate limit -> token verification -> tenant extraction (SPEC §5 rule 1), all before validation.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Authenticator, DevicePrincipal, OwnerPrincipal, Principal } from '../auth/authenticator.js';
import { badRequest, forbidden, unauthorized } from '../lib/errors.js';
import { asUuid } from '../lib/ids.js';

/**
 * - `none`: public.
 * - `owner`: owner JWT with a resolved tenant (403 when the user has none).
 * - `owner-any`: owner JWT, tenant optional (`POST /tenants`).
 * - `device`: device JWT of an ACTIVE device.
 * - `owner-or-device`: either.
 */
export type AuthMode = 'none' | 'owner' | 'owner-any' | 'device' | 'owner-or-device';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

const NO_TENANT = 'the user belongs to no tenant; create one with POST /api/v1/tenants';

/** The bearer token of a request, if any. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  return m?.[1];
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The authenticated owner of a request, with its tenant (throws 403 when the user has none). */
export function ownerOf(request: FastifyRequest): OwnerPrincipal & { tenantId: string } {
  const p = request.principal;
  if (p?.kind !== 'owner') throw unauthorized();
  if (!p.tenantId) throw forbidden(NO_TENANT);
  return p as OwnerPrincipal & { tenantId: string };
}

/** The `X-Device-Id` header as a UUID; 400 when required and missing or malformed. */
export function actingDevice(req: FastifyRequest, required: true): string;
export function actingDevice(req: FastifyRequest, required: false): string | undefined;
export function actingDevice(req: FastifyRequest, required: boolean): string | undefined {
  const v = req.headers['x-device-id'];
  const id = asUuid(v);
  if (id) return id;
  if (v !== undefined || required) throw badRequest('header X-Device-Id must name your owner device (a UUID)');
  return undefined;
}

/** The authenticated device of a request. */
export function deviceOf(request: FastifyRequest): DevicePrincipal {
  const p = request.principal;
  if (p?.kind !== 'device') throw unauthorized();
  return p;
}

/** Tenant of any authenticated principal (owner with a tenant, or device). */
export function tenantOf(request: FastifyRequest): string {
  const p = request.principal;
  if (p?.kind === 'device') return p.tenantId;
  return ownerOf(request).tenantId;
}

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { authenticator: Authenticator; onSeen?: (p: Principal) => void }) => {
    app.decorateRequest('principal', undefined);
    const check =
      (mode: AuthMode): onRequestHookHandler =>
      async (request) => {
        const principal = await opts.authenticator.authenticate(bearerToken(request), header(request, 'x-tenant-id'));
        if (mode === 'owner' || mode === 'owner-any') {
          if (principal.kind !== 'owner') throw forbidden('this route needs an owner token');
          if (mode === 'owner' && !principal.tenantId) throw forbidden(NO_TENANT);
        }
        if (mode === 'device' && principal.kind !== 'device') throw forbidden('this route needs a device token');
        request.principal = principal;
        opts.onSeen?.(principal);
      };
    app.addHook('onRoute', (route) => {
      const mode = route.config?.auth ?? 'none';
      if (mode === 'none') return;
      const hook = check(mode);
      const existing = route.onRequest;
      route.onRequest = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
    });
  },
  { name: 'parley-auth' },
);
