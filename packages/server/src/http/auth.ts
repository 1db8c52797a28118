/**
 * Authentication hook (contract §5). Each route declares `config.auth`; an `onRoute` hook registered
 * after the rate limiter appends the check to the route's `onRequest` hooks, so the order is
 * rate limit -> token verification -> tenant extraction (contract §5 rule 1), all before validation.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { ApiKeyPrincipal, Authenticator, DevicePrincipal, OwnerPrincipal, Principal } from '../auth/authenticator.js';
import { badRequest, forbidden, unauthorized } from '../lib/errors.js';
import { asUuid } from '../lib/ids.js';

/**
 * - `none`: public.
 * - `owner`: owner JWT with a resolved tenant (403 when the user has none).
 * - `owner-any`: owner JWT, tenant optional (`POST /tenants`, platform operator routes: those check
 *   {@link operatorOf}).
 * - `device`: device JWT of an ACTIVE device.
 * - `owner-or-device`: either.
 * - `owner-or-apikey`: owner JWT or `X-API-Key` (+ optional `X-Workspace-Id`), contract §4.13.
 * - `device-or-apikey`: device JWT or API key (an agent acting as itself).
 * - `any`: owner JWT, device JWT or API key (reads open to owners and to member agents).
 * - `public`: no credential needed; one that is sent (bearer token or `X-API-Key`) is verified
 *   (401 when invalid, design §8.15) and the route sees the principal (fuller answers, higher limits).
 */
export type AuthMode = 'none' | 'owner' | 'owner-any' | 'device' | 'owner-or-device' | 'owner-or-apikey' | 'device-or-apikey' | 'any' | 'public';

const ACCEPTS: Record<Exclude<AuthMode, 'none' | 'public'>, readonly Principal['kind'][]> = {
  owner: ['owner'],
  'owner-any': ['owner'],
  device: ['device'],
  'owner-or-device': ['owner', 'device'],
  'owner-or-apikey': ['owner', 'apikey'],
  'device-or-apikey': ['device', 'apikey'],
  any: ['owner', 'device', 'apikey'],
};
const NEEDS: Record<Principal['kind'], string> = { owner: 'an owner token', device: 'a device token', apikey: 'an API key' };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /**
     * A read-only discovery route contract §4.13 opens to API keys (workspaces, team rooms, A2A
     * channels) that a key may call before its client registered key material: such a key has
     * no device yet, so it belongs to nothing and the route answers an empty list
     * ({@link unregisteredKeyOnOpenRoute}). Other routes keep answering 403 for it.
     */
    allowUnregisteredKey?: boolean;
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

/**
 * The authenticated platform operator of a request (design §8.25): an owner principal whose
 * `operator` flag is set (its `sub` is listed in `PLATFORM_OPERATOR_SUBS`, or a dev-provider
 * operator token); no tenant membership needed (operator routes use the `owner-any` mode).
 * @throws 401 without an owner principal; 403 `{detail}` for an owner who is not an operator.
 */
export function operatorOf(request: FastifyRequest): OwnerPrincipal & { operator: true } {
  const p = request.principal;
  if (p?.kind !== 'owner') throw unauthorized();
  if (!p.operator) throw forbidden('this route is for platform operators (PLATFORM_OPERATOR_SUBS)');
  return p as OwnerPrincipal & { operator: true };
}

/**
 * The `X-Device-Id` header as a UUID; 400 when required and missing or malformed. The device it
 * names is resolved and checked by `actingDevice` (modules/devices).
 */
export function deviceIdHeader(req: FastifyRequest, required: true): string;
export function deviceIdHeader(req: FastifyRequest, required: false): string | undefined;
export function deviceIdHeader(req: FastifyRequest, required: boolean): string | undefined {
  const v = req.headers['x-device-id'];
  const id = asUuid(v);
  if (id) return id;
  if (v !== undefined || required) throw badRequest('header X-Device-Id must name your owner device (a UUID)');
  return undefined;
}

/** The API-key principal of a request (401 for other principals). */
export function apiKeyOf(request: FastifyRequest): ApiKeyPrincipal {
  const p = request.principal;
  if (p?.kind !== 'apikey') throw unauthorized();
  return p;
}

/** The authenticated device of a request. */
export function deviceOf(request: FastifyRequest): DevicePrincipal {
  const p = request.principal;
  if (p?.kind !== 'device') throw unauthorized();
  return p;
}

/** Tenant of any authenticated principal (owner with a tenant, device or API key). */
export function tenantOf(request: FastifyRequest): string {
  const p = request.principal;
  if (p?.kind === 'device' || p?.kind === 'apikey') return p.tenantId;
  return ownerOf(request).tenantId;
}

/**
 * The agent device a device JWT or an API key acts as. 403 for an API key whose client has not
 * registered key material yet (trust on first use, contract §5 rule 4); 401 for other principals.
 */
export function agentDeviceOf(request: FastifyRequest): { tenantId: string; deviceId: string; kind: 'owner' | 'agent' } {
  const p = request.principal;
  if (p?.kind === 'device') return { tenantId: p.tenantId, deviceId: p.deviceId, kind: p.deviceKind };
  if (p?.kind === 'apikey') {
    if (!p.deviceId) throw forbidden('this API key has no registered key material yet: connect the WebSocket and send client_key_register first');
    return { tenantId: p.tenantId, deviceId: p.deviceId, kind: 'agent' };
  }
  throw unauthorized();
}

/**
 * True when the caller is an API key without registered key material on a route flagged
 * `config.allowUnregisteredKey`: the route answers its empty list instead of the 403 of
 * {@link agentDeviceOf}.
 */
export function unregisteredKeyOnOpenRoute(request: FastifyRequest): boolean {
  const p = request.principal;
  return p?.kind === 'apikey' && !p.deviceId && request.routeOptions.config.allowUnregisteredKey === true;
}

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { authenticator: Authenticator; onSeen?: (p: Principal) => void }) => {
    app.decorateRequest('principal', undefined);
    const check =
      (mode: Exclude<AuthMode, 'none'>): onRequestHookHandler =>
      async (request) => {
        const bearer = bearerToken(request);
        const apiKey = header(request, 'x-api-key');
        if (mode === 'public') {
          if (!bearer && apiKey === undefined) return;
          request.principal = bearer ? await opts.authenticator.authenticate(bearer, header(request, 'x-tenant-id')) : await opts.authenticator.apiKey(apiKey!, header(request, 'x-workspace-id'));
          return;
        }
        const principal: Principal =
          !bearer && apiKey !== undefined
            ? await opts.authenticator.apiKey(apiKey, header(request, 'x-workspace-id'))
            : await opts.authenticator.authenticate(bearer, header(request, 'x-tenant-id'));
        const accepts = ACCEPTS[mode];
        if (!accepts.includes(principal.kind)) throw forbidden(`this route needs ${accepts.map((k) => NEEDS[k]).join(' or ')}`);
        if (principal.kind === 'owner' && mode !== 'owner-any' && !principal.tenantId) throw forbidden(NO_TENANT);
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

/**
 * A device principal may act only on its own device (`/devices/{id}/…` routes a device token calls).
 * @throws 403 when `id` is another device.
 */
export function ownDeviceOnly(principalDevice: string, id: string): void {
  if (principalDevice !== id) throw forbidden('a device token may only act on its own device');
}
