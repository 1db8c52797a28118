/**
 * Resolves a credential to a principal (SPEC §5, DESIGN §5), shared by the HTTP auth hook and the
 * WebSocket gateway. Order (SPEC §5 rule 1): token verification, then tenant extraction.
 *
 * Errors: 401 for a missing/invalid/expired token; 403 for a revoked device, a device that is no
 * longer usable, or a tenant the owner does not belong to.
 */
import { asc, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Db } from '../db/client.js';
import { devices, memberships } from '../db/schema.js';
import { crossTenant } from '../db/tenant.js';
import { deviceRevoked, forbidden, unauthorized } from '../lib/errors.js';
import type { DeviceTokenService } from './device-tokens.js';
import type { OwnerTokenVerifier } from './owner-tokens.js';

/** An authenticated owner user; `tenantId` is null only before the user has any tenant. */
export interface OwnerPrincipal {
  kind: 'owner';
  sub: string;
  tenantId: string | null;
  role: string | null;
}

/** An authenticated device (device JWT). */
export interface DevicePrincipal {
  kind: 'device';
  deviceId: string;
  tenantId: string;
  deviceKind: 'owner' | 'agent';
}

export type Principal = OwnerPrincipal | DevicePrincipal;

export interface AuthenticatorDeps {
  db: Db;
  deviceTokens: DeviceTokenService;
  ownerTokens: OwnerTokenVerifier;
  tenantClaim: string;
}

export class Authenticator {
  constructor(private readonly deps: AuthenticatorDeps) {}

  /**
   * Authenticate a bearer token (owner JWT or device JWT).
   * @param requestedTenant the `X-Tenant-Id` header, if any (owners only).
   * @throws AppError 401 / 403 as described above.
   */
  async authenticate(token: string | undefined, requestedTenant?: string): Promise<Principal> {
    if (!token) throw unauthorized();
    let typ: unknown;
    try {
      typ = decodeJwt(token).typ;
    } catch {
      throw unauthorized('invalid token');
    }
    return typ === 'device' ? this.device(token) : this.owner(token, requestedTenant);
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
    if (!claims) throw unauthorized('invalid or expired token');
    const rows = await crossTenant(this.deps.db, "resolve the owner's tenant memberships", (tx) =>
      tx
        .select({ tenantId: memberships.tenantId, role: memberships.role })
        .from(memberships)
        .where(eq(memberships.userSub, claims.sub))
        .orderBy(asc(memberships.createdAt)),
    );
    const claimed = claims.payload[this.deps.tenantClaim];
    const wanted = requestedTenant ?? (typeof claimed === 'string' ? claimed : undefined);
    if (wanted !== undefined) {
      const m = rows.find((r) => r.tenantId === wanted);
      if (!m) throw forbidden('not a member of the requested tenant');
      return { kind: 'owner', sub: claims.sub, tenantId: m.tenantId, role: m.role };
    }
    const first = rows[0];
    return { kind: 'owner', sub: claims.sub, tenantId: first?.tenantId ?? null, role: first?.role ?? null };
  }

}
