/**
 * Test fixtures of the trust routes (trust-routes.test.ts, trust-report.test.ts, verify.test.ts):
 * rows the trust engine would write (snapshots, daily scores, baselines) and the rows the report
 * summarises (tier changes, policy evaluations, skill grants), inserted directly with the
 * connection's own privileges, plus hub identity registration through the API.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { hubIdentities, hubTierChanges, policyEvaluations, skillGrants, trustBaselines, trustDailyScores, trustSnapshots } from '../src/db/schema/index.js';
import { TRUST_DIMENSIONS, type DimensionSource, type TrustDimension, type TrustWindow } from '../src/modules/trust/types.js';
import type { Owner } from './flows.js';
import type { TestApp } from './harness.js';
import { eq } from 'drizzle-orm';
import { hubOwnerKey } from './keys.js';

export const DAY_MS = 24 * 3600_000;
/** UTC day `YYYY-MM-DD` of `n` days before now. */
export const daysAgo = (n: number, now = Date.now()) => new Date(now - n * DAY_MS).toISOString().slice(0, 10);

/** All 12 dimensions at `base`, with `over` replacing some. */
export function dims(base: number, over: Partial<Record<TrustDimension, number>> = {}): Record<TrustDimension, number> {
  return { ...(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, base])) as Record<TrustDimension, number>), ...over };
}

let seq = 0;
/** A fresh, valid hub address. */
export const newAddress = (prefix = 'tr') => `${prefix}-${Date.now().toString(36)}-${++seq}`;

/** Register a hub identity bound to `deviceId` through the API; returns its address and id. */
export async function registerIdentity(t: TestApp, owner: Owner, deviceId: string, displayName = 'Agent'): Promise<{ address: string; id: string }> {
  const hub_address = newAddress();
  const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address, display_name: displayName, device_id: deviceId, public_key: hubOwnerKey() } });
  expect(res.status).toBe(201);
  return { address: hub_address, id: res.body.id };
}

export class TrustSeed {
  constructor(private readonly t: TestApp) {}

  private get db() {
    return this.t.app.parley.database.db;
  }

  /** One snapshot row as the engine writes it. */
  async snapshot(o: {
    tenantId: string;
    deviceId: string;
    window?: TrustWindow;
    at: Date;
    composite: number;
    dimensions?: Record<TrustDimension, number>;
    sources?: Record<TrustDimension, DimensionSource>;
    percentile?: number;
    tier?: string;
  }): Promise<void> {
    await this.db.insert(trustSnapshots).values({
      id: randomUUID(),
      tenantId: o.tenantId,
      deviceId: o.deviceId,
      window: o.window ?? '7d',
      composite: o.composite,
      dimensions: o.dimensions ?? dims(o.composite),
      sources: o.sources ?? (Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, 'telemetry'])) as Record<TrustDimension, DimensionSource>),
      percentile: o.percentile ?? 50,
      tier: o.tier ?? 'unverified',
      computedAt: o.at,
    });
  }

  /** One trust_daily_scores row. */
  async daily(tenantId: string, deviceId: string, day: string, dimensions: Partial<Record<TrustDimension, number>>): Promise<void> {
    await this.db.insert(trustDailyScores).values({ tenantId, deviceId, day, dimensions, computedAt: new Date() });
  }

  /** One baseline row (reason `initial`, established by `system`). */
  async baseline(tenantId: string, deviceId: string, dimension: TrustDimension, bins: number[], samples: number, windowStart = daysAgo(120), windowEnd = daysAgo(91)): Promise<void> {
    await this.db.insert(trustBaselines).values({ tenantId, deviceId, dimension, bins, samples, windowStart, windowEnd, reason: 'initial', establishedAt: new Date(Date.now() - 90 * DAY_MS), establishedBy: 'system' });
  }

  /** One hub_tier_changes row at `at`. */
  async tierChange(tenantId: string, identityId: string, fromTier: string, toTier: string, at: Date, reason = 'trust_recompute'): Promise<void> {
    await this.db.insert(hubTierChanges).values({ id: randomUUID(), tenantId, identityId, fromTier, toTier, reason, checks: [], createdAt: at });
  }

  /** Set an identity's tier (and optionally stored score). */
  async setTier(identityId: string, tier: string, trustScore?: number | null): Promise<void> {
    await this.db.update(hubIdentities).set({ trustTier: tier, ...(trustScore !== undefined ? { trustScore } : {}) }).where(eq(hubIdentities.id, identityId));
  }

  /** One policy evaluation with `deviceId` as sender. */
  async policyEvaluation(tenantId: string, deviceId: string, outcome: string, at = new Date()): Promise<void> {
    await this.db.insert(policyEvaluations).values({ id: randomUUID(), tenantId, subjectKind: 'message', subjectId: randomUUID(), senderDeviceId: deviceId, outcome, durationUs: 10, createdAt: at });
  }

  /** One skill grant of `deviceId`; `state` active, revoked or expired. */
  async grant(tenantId: string, deviceId: string, state: 'active' | 'revoked' | 'expired', tier = 'certified'): Promise<void> {
    const now = Date.now();
    await this.db.insert(skillGrants).values({
      jti: randomUUID(),
      tenantId,
      deviceId,
      subject: `did:hub:x`,
      skill: 'translate',
      tier,
      audience: 'did:hub:y',
      issuedBy: 'owner',
      issuedAt: new Date(now - 3600_000),
      expiresAt: new Date(state === 'expired' ? now - 60_000 : now + 3600_000),
      revokedAt: state === 'revoked' ? new Date(now - 60_000) : null,
      revokedReason: state === 'revoked' ? 'test' : null,
    });
  }
}
