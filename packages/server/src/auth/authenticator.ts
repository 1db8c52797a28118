/**
 * Resolves a credential to a principal (contract §5, design §5), shared by the HTTP auth hook and the
 * WebSocket gateway. Order (contract §5 rule 1): token verification, then tenant extraction.
 *
 * Errors: 401 for a missing/invalid/expired token; 403 for a revoked device, a device that is no
 * longer usable, or a tenant the owner does not belong to.
 */
import { and, asc, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Db } from '../db/client.js';
import { devices, memberships, workspaceMembers } from '../db/schema/index.js';
import { crossTenant, withTenant } from '../db/tenant.js';
import { badRequest, deviceRevoked, forbidden, unauthorized } from '../lib/errors.js';
import { asUuid } from '../lib/ids.js';
import type { DeviceTokenService } from './device-tokens.js';
import type { OwnerTokenVerifier } from './owner-tokens.js';

/**
 * An authenticated owner user; `tenantId` is null only before the user has any tenant.
 * `operator`: a platform operator (design §8.25): the token's `sub` is listed in
 * `PLATFORM_OPERATOR_SUBS`, or the built-in development provider minted it with its operator
 * claim (owner-tokens.ts `devOperator`). Operator routes need no tenant membership.
 */
export interface OwnerPrincipal {
  kind: 'owner';
  sub: string;
  tenantId: string | null;
  role: string | null;
  operator: boolean;
}

/** An authenticated device (device JWT). */
export interface DevicePrincipal {
  kind: 'device';
  deviceId: string;
  tenantId: string;
  deviceKind: 'owner' | 'agent';
}

/**
 * A third-party agent on an API key (contract §5: `X-API-Key`, optional `X-Workspace-Id`). `deviceId`
 * is the device bound by trust on first use, null before the client registered key material;
 * `workspaceId` is the validated `X-Workspace-Id` (the device is a member), if sent.
 */
export interface ApiKeyPrincipal {
  kind: 'apikey';
  apiKeyId: string;
  tenantId: string;
  deviceId: string | null;
  workspaceId: string | null;
}

export type Principal = OwnerPrincipal | DevicePrincipal | ApiKeyPrincipal;

/** Resolves a raw API key (ApiKeyService.resolve): 401 when unknown, malformed or revoked. */
/** Finds an active API key by its raw value, with its bound device's status (api-keys/service.ts `resolve`). */
export type ApiKeyResolver = (rawKey: string) => Promise<{ apiKeyId: string; tenantId: string; deviceId: string | null; device: { status: string; deletedAt: Date | null } | null }>;

export interface AuthenticatorDeps {
  db: Db;
  deviceTokens: DeviceTokenService;
  ownerTokens: OwnerTokenVerifier;
  tenantClaim: string;
  resolveApiKey: ApiKeyResolver;
  /** Subjects of the platform operators (config `platformOperatorSubs`, design §8.25). */
  operatorSubs: readonly string[];
}

export class Authenticator {
  private readonly operatorSubs: ReadonlySet<string>;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.operatorSubs = new Set(deps.operatorSubs);
  }

  /**
   * Authenticate a bearer token (owner JWT or device JWT).
   * @param requestedTenant the `X-Tenant-Id` header, if any (owners only).
   * @throws AppError 401 / 403 as described above.
   */
  async authenticate(token: string | undefined, requestedTenant?: string): Promise<OwnerPrincipal | DevicePrincipal> {
    if (!token) throw unauthorized();
    let typ: unknown;
    try {
      typ = decodeJwt(token).typ;
    } catch {
      throw unauthorized('invalid token');
    }
    return typ === 'device' ? this.device(token) : this.owner(token, requestedTenant);
  }

  /**
   * Authenticate an `X-API-Key` (contract §5). The bound device, when there is one, must be ACTIVE
   * (403 otherwise); `X-Workspace-Id` must name a workspace the device belongs to (403).
   */
  async apiKey(rawKey: string, workspaceHeader?: string): Promise<ApiKeyPrincipal> {
    const key = await this.deps.resolveApiKey(rawKey);
    let workspaceId: string | null = null;
    if (workspaceHeader !== undefined) {
      workspaceId = asUuid(workspaceHeader) ?? null;
      if (!workspaceId) throw badRequest('header X-Workspace-Id must be a workspace id (a UUID)');
    }
    const deviceId = key.deviceId;
    // The bound device's status came with the key (one statement); only a workspace check needs another.
    if (deviceId) {
      if (!key.device || key.device.status === 'REVOKED' || key.device.deletedAt) throw deviceRevoked();
      if (key.device.status !== 'ACTIVE') throw forbidden('device is not active');
    }
    if (workspaceId) {
      const member = deviceId
        ? await withTenant(this.deps.db, key.tenantId, (tx) =>
            tx
              .select({ id: workspaceMembers.workspaceId })
              .from(workspaceMembers)
              .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.deviceId, deviceId))),
          )
        : [];
      if (member.length === 0) throw forbidden('this API key is not a member of the workspace named by X-Workspace-Id');
    }
    return { kind: 'apikey', apiKeyId: key.apiKeyId, tenantId: key.tenantId, deviceId, workspaceId };
  }

  private async device(token: string): Promise<DevicePrincipal> {
    const claims = await this.deps.deviceTokens.verify(token);
    if (!claims) throw unauthorized('invalid or expired device token');
    const [row] = await crossTenant(this.deps.db, 'authenticate a device token before the tenant is known', (tx) =>
      tx
        .select({ tenantId: devices.tenantId, status: devices.status, kind: devices.kind, deletedAt: devices.deletedAt })
        .from(devices)
        .where(eq(devices.id, claims.deviceId)),
    );
    if (!row || row.tenantId !== claims.tenantId) throw unauthorized('unknown device');
    if (row.status === 'REVOKED' || row.deletedAt) throw deviceRevoked();
    if (row.status !== 'ACTIVE') throw forbidden('device is not active');
    return { kind: 'device', deviceId: claims.deviceId, tenantId: row.tenantId, deviceKind: row.kind as 'owner' | 'agent' };
  }

  private async owner(token: string, requestedTenant?: string): Promise<OwnerPrincipal> {
    const claims = await this.deps.ownerTokens.verify(token);
    if (!claims) throw unauthorized(this.deps.ownerTokens.refusalDetail(token));
    const rows = await crossTenant(this.deps.db, "resolve the owner's tenant memberships", (tx) =>
      tx
        .select({ tenantId: memberships.tenantId, role: memberships.role })
        .from(memberships)
        .where(eq(memberships.userSub, claims.sub))
        .orderBy(asc(memberships.createdAt)),
    );
    const operator = this.operatorSubs.has(claims.sub) || claims.devOperator;
    const claimed = claims.payload[this.deps.tenantClaim];
    const wanted = requestedTenant ?? (typeof claimed === 'string' ? claimed : undefined);
    if (wanted !== undefined) {
      const m = rows.find((r) => r.tenantId === wanted);
      if (!m) throw forbidden('not a member of the requested tenant');
      return { kind: 'owner', sub: claims.sub, tenantId: m.tenantId, role: m.role, operator };
    }
    const first = rows[0];
    return { kind: 'owner', sub: claims.sub, tenantId: first?.tenantId ?? null, role: first?.role ?? null, operator };
  }

}
