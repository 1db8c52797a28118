/**
 * Federation agreements (contract §2.12, §4.13; docs/decisions.md "Federation agreements"). A tenant
 * (the proposer, `tenant_id`) proposes an agreement to another tenant (the partner); the partner
 * accepts it; either party revokes it. A renewal needs both parties: one asks for a later expiry
 * (`renew`), the other accepts it (`accept`); until then the agreement keeps its term. Every
 * expiry lies at most {@link MAX_TERM_DAYS} days ahead. Stored status is pending | active | revoked;
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
import { appendAuditToParties, type AuditEventType, twoPartyEvents } from '../audit/index.js';
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

/** The longest term of an agreement: an expiry (proposed or renewed) lies at most this many days ahead. */
export const MAX_TERM_DAYS = 365;

const sideOf = (a: repo.AgreementRow, tenantId: string) => (a.tenantId === tenantId ? 'proposer' : 'partner');

const toOut = (a: repo.AgreementRow, callerTenantId: string, now: Date): FederationAgreement => ({
  id: a.id,
  tenant_id: a.tenantId,
  partner_tenant_id: a.partnerTenantId,
  trust_floor: a.trustFloor,
  allowed_capabilities: a.allowedCapabilities as string[],
  audit_sharing: a.auditSharing,
  expires_at: a.expiresAt.toISOString(),
  status: statusOf(a, now),
  role: sideOf(a, callerTenantId),
  created_at: a.createdAt.toISOString(),
  accepted_at: a.acceptedAt?.toISOString() ?? null,
  renewal: a.renewalExpiresAt && a.renewalBy ? { expires_at: a.renewalExpiresAt.toISOString(), proposed_by: sideOf(a, a.renewalBy) } : null,
});

/**
 * A future expiry from an ISO 8601 string, at most {@link MAX_TERM_DAYS} days after `now`.
 * @throws 400 unparseable, not in the future, or beyond the longest term.
 */
function futureExpiry(iso: string, now: Date): Date {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw badRequest('expires_at must be an ISO 8601 timestamp');
  if (at.getTime() <= now.getTime()) throw badRequest('expires_at must be in the future');
  if (at.getTime() > now.getTime() + MAX_TERM_DAYS * 86_400_000) throw badRequest(`expires_at must be at most ${MAX_TERM_DAYS} days ahead; renew the agreement before it ends`);
  return at;
}

export class FederationService {
  constructor(private readonly db: Db) {}

  /**
   * Propose an agreement to `partner_tenant_id` (status pending, the caller is the proposer).
   * @throws 400 partner is the caller's own tenant, expiry not in the future or beyond
   *   {@link MAX_TERM_DAYS}; 404 partner tenant
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
   * Accept what the other side asked for: the partner accepts a pending agreement (-> active), or
   * either party accepts the renewal the OTHER party asked for ({@link renew}): the agreement takes
   * the renewal's expiry and is active (an expired one again, accepted now by the caller).
   * @throws 404 not a party; 403 the caller is the proposer of a pending agreement, or asked for the
   *   renewal itself; 409 active or expired with no renewal to accept, a renewal whose expiry has
   *   passed, revoked, or (reviving an expired one) another live agreement with the same tenant.
   */
  accept(tenantId: string, acceptedBy: string, id: string): Promise<FederationAgreement> {
    return this.transition(tenantId, id, acceptedBy, 'federation.accepted', async (tx, a, now) => {
      const status = statusOf(a, now);
      if (status === 'pending') {
        if (a.partnerTenantId !== tenantId) throw forbidden('only the partner tenant can accept an agreement');
        return repo.updateAgreement(tx, a.id, { status: 'active', acceptedAt: now, acceptedBy });
      }
      if (status === 'revoked' || !a.renewalExpiresAt) throw conflict(`agreement is ${status}`);
      if (a.renewalBy === tenantId) throw forbidden('your tenant asked for this renewal: the other party accepts it');
      if (a.renewalExpiresAt.getTime() <= now.getTime()) throw conflict('the renewal asked for has lapsed (its expiry has passed): ask for a new one');
      const renewed = { expiresAt: a.renewalExpiresAt, renewalExpiresAt: null, renewalBy: null };
      if (status === 'active') return repo.updateAgreement(tx, a.id, renewed);
      await this.refuseLive(tx, a.tenantId, a.partnerTenantId, now);
      return repo.updateAgreement(tx, a.id, { ...renewed, status: 'active', acceptedAt: now, acceptedBy });
    });
  }

  /**
   * Ask for a later expiry (contract §2.12 "agreements are renewable"). A renewal binds both parties,
   * so one party's request of an active or expired agreement is recorded as `renewal` and applies
   * only when the other party accepts it ({@link accept}); the agreement keeps its term meanwhile,
   * and a later request (by either party) replaces it. The proposer changes the expiry of its own
   * still pending proposal directly (the partner's accept covers it).
   * @throws 400 expiry not in the future, beyond {@link MAX_TERM_DAYS}, or (active, pending) not
   *   later than the current one; 403 the partner of a pending agreement (it accepts or revokes);
   *   404 not a party; 409 revoked.
   */
  renew(tenantId: string, id: string, expiresAtIso: string, actor = 'owner'): Promise<FederationAgreement> {
    return this.transition(tenantId, id, actor, 'federation.renewed', async (tx, a, now) => {
      const expiresAt = futureExpiry(expiresAtIso, now);
      const status = statusOf(a, now);
      if (status === 'revoked') throw conflict('agreement is revoked');
      if (status !== 'expired' && expiresAt.getTime() <= a.expiresAt.getTime()) throw badRequest('expires_at must be later than the current expiry');
      if (status === 'pending') {
        if (a.tenantId !== tenantId) throw forbidden('only the proposer changes a pending proposal; accept or revoke it');
        return repo.updateAgreement(tx, a.id, { expiresAt });
      }
      return repo.updateAgreement(tx, a.id, { renewalExpiresAt: expiresAt, renewalBy: tenantId });
    });
  }

  /** Either party ends the agreement for good (revoked is terminal; a renewal asked for lapses). @throws 404 not a party; 409 already revoked. */
  revoke(tenantId: string, id: string, actor = 'owner'): Promise<FederationAgreement> {
    return this.transition(tenantId, id, actor, 'federation.revoked', async (tx, a, now) => {
      if (a.status === 'revoked') throw conflict('agreement is already revoked');
      return repo.updateAgreement(tx, a.id, { status: 'revoked', revokedAt: now, renewalExpiresAt: null, renewalBy: null });
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
   * in both parties' chains (data: the status before and after, the expiry, and the expiry of a
   * renewal still waiting for the other party's accept, or null), answer the updated row.
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
          data: { from: statusOf(a, now), to: statusOf(row!, now), expires_at: row!.expiresAt.toISOString(), renewal_expires_at: row!.renewalExpiresAt?.toISOString() ?? null },
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
