/**
 * Federation agreements (SPEC §2.12, §4.13; docs/decisions.md "Federation agreements"). A tenant
 * (the proposer, `tenant_id`) proposes an agreement to another tenant (the partner); the partner
 * accepts it; either party renews or revokes it. Stored status is pending | active | revoked;
 * `expired` is derived from `expires_at` (a pending or active agreement whose expiry has passed).
 * At most one live (pending or active, unexpired) agreement exists per tenant pair. Federated A2A
 * channels need an active agreement ({@link FederationService.activeAgreementBetween}).
 *
 * Audit (docs/decisions.md "Audit coverage"): every transition records `federation.proposed |
 * accepted | renewed | revoked` (subject: the agreement id) in BOTH tenants' chains, in the
 * transaction of the transition: the acting tenant's chain names the owner (`sub`), the other
 * tenant's chain names the acting tenant (`tenant:<id>`).
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import type { AuditEventType } from '../audit/events.js';
import { appendAuditToParties, twoPartyEvents } from '../audit/parties.js';
import * as repo from './repo.js';
import type { FederationAgreement, FederationStatus, ProposeFederationRequest } from '@parley/protocol';

export type { FederationStatus as AgreementStatus } from '@parley/protocol';

/** The terms of an active agreement, as A2A needs them. */
export interface ActiveAgreement {
  id: string;
  trust_floor: number;
  allowed_capabilities: string[];
  expires_at: string;
}

/** Effective status at `now`: revoked stays revoked; pending/active past `expires_at` is expired. */
export function statusOf(a: repo.AgreementRow, now = new Date()): FederationStatus {
  if (a.status === 'revoked') return 'revoked';
  if (a.expiresAt.getTime() <= now.getTime()) return 'expired';
  return a.status as FederationStatus;
}

const toOut = (a: repo.AgreementRow, callerTenantId: string, now: Date): FederationAgreement => ({
  id: a.id,
  tenant_id: a.tenantId,
  partner_tenant_id: a.partnerTenantId,
  trust_floor: a.trustFloor,
  allowed_capabilities: a.allowedCapabilities as string[],
  audit_sharing: a.auditSharing,
  expires_at: a.expiresAt.toISOString(),
  status: statusOf(a, now),
  role: a.tenantId === callerTenantId ? 'proposer' : 'partner',
  created_at: a.createdAt.toISOString(),
  accepted_at: a.acceptedAt?.toISOString() ?? null,
});

/** A future expiry from an ISO 8601 string. @throws 400 unparseable or not in the future. */
function futureExpiry(iso: string, now: Date): Date {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw badRequest('expires_at must be an ISO 8601 timestamp');
  if (at.getTime() <= now.getTime()) throw badRequest('expires_at must be in the future');
  return at;
}

export class FederationService {
  constructor(private readonly db: Db) {}

  /**
   * Propose an agreement to `partner_tenant_id` (status pending, the caller is the proposer).
   * @throws 400 partner is the caller's own tenant, expiry not in the future; 404 partner tenant
   *   unknown; 409 a live (pending or active) agreement with that tenant already exists.
   */
  async propose(tenantId: string, createdBy: string, input: ProposeFederationRequest): Promise<FederationAgreement> {
    const now = new Date();
    const partner = input.partner_tenant_id.toLowerCase();
    if (partner === tenantId) throw badRequest('partner_tenant_id must be another tenant');
    const expiresAt = futureExpiry(input.expires_at, now);
    const exists = await crossTenant(this.db, 'federation: the partner is another tenant', (tx) => repo.tenantExists(tx, partner));
    if (!exists) throw notFound('partner tenant');
    return withTenant(this.db, tenantId, async (tx) => {
      await this.refuseLive(tx, tenantId, partner, now);
      const [row] = await repo.insertAgreement(tx, {
        id: randomUUID(),
        tenantId,
        partnerTenantId: partner,
        trustFloor: input.trust_floor,
        allowedCapabilities: [...new Set(input.allowed_capabilities ?? [])],
        auditSharing: input.audit_sharing ?? false,
        status: 'pending',
        expiresAt,
        createdBy,
      });
      await appendAuditToParties(
        tx,
        tenantId,
        twoPartyEvents(tenantId, partner, createdBy, {
          type: 'federation.proposed',
          subject: row!.id,
          data: { tenant_id: tenantId, partner_tenant_id: partner, trust_floor: row!.trustFloor, audit_sharing: row!.auditSharing, expires_at: expiresAt.toISOString() },
        }),
      );
      return toOut(row!, tenantId, now);
    });
  }

  /** Agreements the tenant proposed or was proposed, oldest first. */
  list(tenantId: string): Promise<FederationAgreement[]> {
    const now = new Date();
    return withTenant(this.db, tenantId, async (tx) => (await repo.listAgreements(tx)).map((a) => toOut(a, tenantId, now)));
  }

  /**
   * The partner accepts: pending -> active.
   * @throws 404 not a party; 403 the caller is the proposer; 409 active, expired or revoked.
   */
  accept(tenantId: string, acceptedBy: string, id: string): Promise<FederationAgreement> {
    return this.transition(tenantId, id, acceptedBy, 'federation.accepted', async (tx, a, now) => {
      if (a.partnerTenantId !== tenantId) throw forbidden('only the partner tenant can accept an agreement');
      const status = statusOf(a, now);
      if (status !== 'pending') throw conflict(`agreement is ${status}`);
      return repo.updateAgreement(tx, a.id, { status: 'active', acceptedAt: now, acceptedBy });
    });
  }

  /**
   * Either party sets a later expiry. Pending and active agreements keep their status; an expired
   * one returns to pending (accepted_at cleared) and needs the partner's accept again.
   * @throws 400 expiry not in the future or not later than the current one; 404 not a party;
   *   409 revoked, or (for an expired one) another live agreement with the same tenant exists.
   */
  renew(tenantId: string, id: string, expiresAtIso: string, actor = 'owner'): Promise<FederationAgreement> {
    return this.transition(tenantId, id, actor, 'federation.renewed', async (tx, a, now) => {
      const expiresAt = futureExpiry(expiresAtIso, now);
      const status = statusOf(a, now);
      if (status === 'revoked') throw conflict('agreement is revoked');
      if (status === 'expired') {
        await this.refuseLive(tx, a.tenantId, a.partnerTenantId, now);
        return repo.updateAgreement(tx, a.id, { status: 'pending', expiresAt, acceptedAt: null, acceptedBy: null });
      }
      if (expiresAt.getTime() <= a.expiresAt.getTime()) throw badRequest('expires_at must be later than the current expiry');
      return repo.updateAgreement(tx, a.id, { expiresAt });
    });
  }

  /** Either party ends the agreement for good (revoked is terminal). @throws 404 not a party; 409 already revoked. */
  revoke(tenantId: string, id: string, actor = 'owner'): Promise<FederationAgreement> {
    return this.transition(tenantId, id, actor, 'federation.revoked', async (tx, a, now) => {
      if (a.status === 'revoked') throw conflict('agreement is already revoked');
      return repo.updateAgreement(tx, a.id, { status: 'revoked', revokedAt: now });
    });
  }

  /**
   * The accepted, unexpired agreement between two tenants (either direction), or null. Runs in
   * `tenantA`'s scope (RLS shows it both directions); with several, the one expiring last.
   */
  async activeAgreementBetween(tenantA: string, tenantB: string): Promise<ActiveAgreement | null> {
    const [a] = await withTenant(this.db, tenantA, (tx) => repo.unexpiredBetween(tx, tenantA, tenantB, ['active'], new Date()));
    if (!a) return null;
    return { id: a.id, trust_floor: a.trustFloor, allowed_capabilities: a.allowedCapabilities as string[], expires_at: a.expiresAt.toISOString() };
  }

  /**
   * Lock the agreement (404 when the scope cannot see it), apply `fn`, record `type` by `actor`
   * in both parties' chains (data: the status before and after, and the expiry), answer the updated row.
   */
  private transition(
    tenantId: string,
    id: string,
    actor: string,
    type: AuditEventType,
    fn: (tx: Tx, a: repo.AgreementRow, now: Date) => Promise<repo.AgreementRow[]>,
  ): Promise<FederationAgreement> {
    return withTenant(this.db, tenantId, async (tx) => {
      const now = new Date();
      const a = await repo.getAgreementForUpdate(tx, id);
      if (!a) throw notFound('federation agreement');
      const [row] = await fn(tx, a, now);
      const other = a.tenantId === tenantId ? a.partnerTenantId : a.tenantId;
      await appendAuditToParties(
        tx,
        tenantId,
        twoPartyEvents(tenantId, other, actor, {
          type,
          subject: a.id,
          data: { from: statusOf(a, now), to: statusOf(row!, now), expires_at: row!.expiresAt.toISOString() },
        }),
      );
      return toOut(row!, tenantId, now);
    });
  }

  /** 409 when the pair already has a live (pending or active, unexpired) agreement; holds the pair lock. */
  private async refuseLive(tx: Tx, a: string, b: string, now: Date): Promise<void> {
    await repo.lockPair(tx, a, b);
    const [live] = await repo.unexpiredBetween(tx, a, b, ['pending', 'active'], now);
    if (live) throw conflict(`a ${live.status} agreement with this tenant already exists (${live.id}); renew or revoke it instead`);
  }
}
