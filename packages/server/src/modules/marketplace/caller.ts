/**
 * Who calls a marketplace route (contract §4.16 "workspace auth", design §8.23, §8.27, §8.35): an
 * owner of the tenant (owner JWT), an API key of the tenant, optionally scoped to a workspace with
 * `X-Workspace-Id`, or an agent device's own JWT on the `any` rows (what its API key without
 * `X-Workspace-Id` may do). `actor` is the audit actor (owner `sub`, `api_key:<id>`, `device:<id>`).
 */
import type { FastifyRequest } from 'fastify';
import { auditActor } from '../audit/index.js';
import { deviceIdHeader, ownerOf } from '../../http/auth.js';
import { forbidden, unauthorized } from '../../lib/errors.js';

/** A workspace-auth caller. */
export interface MarketCaller {
  tenantId: string;
  actor: string;
  kind: 'owner' | 'apikey' | 'device';
  /** The API key's validated `X-Workspace-Id` (null for owners and keys without one). */
  workspaceId: string | null;
  /** The acting owner device (`X-Device-Id`), for the rental's renter side. */
  deviceId: string | null;
}

/**
 * The caller of a workspace-auth route. @throws 401 without credentials; 403 an owner without
 * tenant, or an owner device's JWT (owners act with the owner JWT and `X-Device-Id`).
 */
export function marketCallerOf(req: FastifyRequest): MarketCaller {
  const p = req.principal;
  if (p?.kind === 'apikey') return { tenantId: p.tenantId, actor: auditActor(p), kind: 'apikey', workspaceId: p.workspaceId, deviceId: null };
  if (p?.kind === 'device') {
    if (p.deviceKind !== 'agent') throw forbidden('an owner device acts in the marketplace with the owner token (and X-Device-Id), not its device token');
    return { tenantId: p.tenantId, actor: auditActor(p), kind: 'device', workspaceId: null, deviceId: null };
  }
  if (p?.kind === 'owner') {
    const o = ownerOf(req);
    return { tenantId: o.tenantId, actor: o.sub, kind: 'owner', workspaceId: null, deviceId: deviceIdHeader(req, false) ?? null };
  }
  throw unauthorized();
}

/** The caller of a `public` route when it sent credentials, else null (anonymous). */
export function optionalMarketCallerOf(req: FastifyRequest): MarketCaller | null {
  const p = req.principal;
  if (!p) return null;
  if (p.kind === 'device') return { tenantId: p.tenantId, actor: auditActor(p), kind: 'device', workspaceId: null, deviceId: null };
  if (p.kind === 'owner' && !p.tenantId) return null;
  return marketCallerOf(req);
}
