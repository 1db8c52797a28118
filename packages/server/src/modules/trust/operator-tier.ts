/**
 * Operator tier grants (design §8.25; contract §3.3; docs/decisions.md "Platform operators and
 * operator tier grants"): `POST /api/v1/hub/identities/{id}/tier {tier, reason, expires_at?}`.
 * A platform operator certifies an identity of ANY tenant after a review, so that a fresh install
 * can list an agent before 7 days of telemetry exist. How the trust engine and certify treat the
 * grant afterwards: tier-grant.ts.
 */
import { eq } from 'drizzle-orm';
import type { GrantTierRequest, HubIdentity } from '@parley/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/client.js';
import { hubIdentities } from '../../db/schema/index.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { ChangeListeners } from '../../lib/listeners.js';
import { appendAudit } from '../audit/index.js';
import { asTier } from '@parley/protocol';
import { applyTierChange, type TierSourceColumns } from './certify.js';
import { getHubIdentity, toHubIdentity, updateHubIdentity } from '../hub/index.js';

/** `expires_at` of a grant as a Date in the future of `now`, or null when absent. @throws 400 otherwise. */
function grantExpiry(expiresAt: string | undefined, now: Date): Date | null {
  if (expiresAt === undefined) return null;
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) throw badRequest('expires_at must be an ISO 8601 date-time');
  if (at.getTime() <= now.getTime()) throw badRequest('expires_at must be in the future');
  return at;
}

/**
 * Grant `body.tier` to the hub identity `identityId` of any tenant, as the platform operator
 * `operator` (its `sub`). In ONE transaction of the identity's tenant, with the identity locked
 * FOR UPDATE: `tier_source = 'operator'` with the grant's reason and expiry; when the tier
 * changes, the side effects of every tier change (certify.ts `applyTierChange`: `trust_tier`,
 * `certified_at` on a rise, a `hub_tier_changes` row with reason `operator_grant`, capabilities,
 * SPTs above a lowered tier revoked, the `svc.trust` `tier_change` span on the bound device); and,
 * whether or not it changed, the audit event `hub.tier_granted {from, to, reason, expires_at,
 * revoked_grants}` (actor the operator) in the identity's tenant chain. A new grant replaces the
 * previous one. Answers the identity (with `tier_source: "operator"`).
 * @throws 400 blank reason, `expires_at` not in the future; 404 unknown identity; 409 the
 *   identity is suspended.
 */
export async function grantTier(db: Db, operator: string, identityId: string, body: GrantTierRequest, now: Date = new Date()): Promise<HubIdentity> {
  const reason = body.reason.trim();
  if (reason === '') throw badRequest('reason must not be blank');
  const expiresAt = grantExpiry(body.expires_at, now);
  const [found] = await crossTenant(db, "platform operators grant tiers to any tenant's identities (design §8.25)", (tx) =>
    tx.select({ tenantId: hubIdentities.tenantId }).from(hubIdentities).where(eq(hubIdentities.id, identityId)),
  );
  if (!found) throw notFound('hub identity');
  const { tenantId } = found;
  return withTenant(db, tenantId, async (tx) => {
    const h = await getHubIdentity(tx, identityId, true);
    if (!h) throw notFound('hub identity');
    if (h.status !== 'active') throw conflict(`hub identity is ${h.status}`);
    const from = asTier(h.trustTier);
    const to = body.tier;
    const source: TierSourceColumns = { tierSource: 'operator', tierGrantReason: reason, tierGrantExpiresAt: expiresAt };
    let revoked: string[] = [];
    if (from !== to) {
      revoked = await applyTierChange(tx, { tenantId, identity: h, from, to, score: h.trustScore, reason: 'operator_grant', actor: operator, checks: [], now, source, audit: false });
    } else {
      await updateHubIdentity(tx, h.id, { ...source, updatedAt: now });
      Object.assign(h, source);
    }
    await appendAudit(tx, tenantId, {
      type: 'hub.tier_granted',
      actor: operator,
      subject: h.id,
      data: { from, to, reason, expires_at: expiresAt?.toISOString() ?? null, revoked_grants: revoked },
    });
    return toHubIdentity(h);
  });
}

/** Operator tier grants as a service (the route's dependency; {@link grantTier}). */
export class OperatorTierService {
  private readonly granted: ChangeListeners;

  constructor(
    private readonly db: Db,
    log: Pick<FastifyBaseLogger, 'error'>,
  ) {
    this.granted = new ChangeListeners(log, 'an operator tier grant');
  }

  /**
   * Call `fn` after every committed grant, before the route answers: the tier may have changed, so
   * whoever acts on tiers (the marketplace's rental monitor, contract §4.16) looks at once.
   * Errors are logged, never thrown.
   */
  onGranted(fn: () => Promise<void>): void {
    this.granted.add(fn);
  }

  /** {@link grantTier} as the operator `operator` (its `sub`), then the listeners of {@link onGranted}. */
  async grant(operator: string, identityId: string, body: GrantTierRequest): Promise<HubIdentity> {
    const identity = await grantTier(this.db, operator, identityId, body);
    await this.granted.run();
    return identity;
  }
}
