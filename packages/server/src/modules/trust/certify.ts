/**
 * Certification and trust-tier changes of hub identities (contract §3.3, §6.2 `POST
 * /hub/identities/{id}/certify`; design §8.16; docs/decisions.md "Hub certification", "Trust
 * engine"). ONE function, {@link decideTier}, decides and applies every tier change: the certify
 * route and the trust recompute (trust/engine.ts) both call it inside their transaction.
 *
 * A certify run evaluates five checks and answers them all:
 *
 * | check          | passes when |
 * |----------------|-------------|
 * | `owner_key`    | a registration `public_key` is stored and is a valid Ed25519 key (ed25519.ts) |
 * | `bound_device` | the identity is bound to an ACTIVE agent device |
 * | `capabilities` | at least one registered capability has an `input_schema` and an `sla` |
 * | `activity`     | the bound device was seen within the last 7 days |
 * | `trust_score`  | the HELD score ≥ 0.6: the lowest 7-day composite in effect over the last 7 days (trust/tiers.ts `heldScoreOf`); fails while the history does not cover 7 days, and while the scores are stale (below) |
 *
 * Tier rules (contract §3.3, trust/tiers.ts `evaluateTier` over the bound device's 7d snapshots):
 * - downgrade, at once, when the latest 7d composite is below the current tier's threshold (to
 *   the tier of that score), by the recompute and by certify alike;
 * - upgrade only when evaluateTier allows it (the held score reached the new threshold for the
 *   whole 7-day hold) AND the scores are FRESH (the latest 7d score at most `maxScoreAgeMs` old —
 *   default {@link SCORE_MAX_AGE_MS}, the certify route uses {@link scoreMaxAgeMs} of the recompute
 *   interval — and at least one score inside the hold: a single old snapshot never satisfies the
 *   hold) AND the four non-score checks pass AND the identity is `active`.
 * Every change, in the caller's transaction, with the identity row locked: `trust_tier` (and
 * `certified_at` on an upgrade), a `hub_tier_changes` row (reason `certify` | `trust_recompute` |
 * `device_revoked`, the checks), audit `hub.tier_changed {from, to, score, reason,
 * revoked_grants}`, a `svc.trust` span (operation `tier_change`) on the agent's device; on an
 * upgrade the capabilities with an SLA carry the new tier; on a downgrade the agent's active SPTs
 * issued above the new tier are revoked (`tier_downgrade`; their `jti`s are the audit's
 * `revoked_grants`, empty on an upgrade) and capabilities certified above it are restricted to it.
 * A certify run is audited as `hub.certified {tier, upgraded, checks: [{check, passed}]}` as well.
 *
 * Operator tier grants (design §8.25, tier-grant.ts): while a grant is valid, fallback scores
 * never lower the tier (only a real-telemetry score below the threshold does), an `unverified`
 * grant is not raised, and any change ends the grant; an expired grant ends at the next decision,
 * which then decides from scratch (reason `grant_expired` when the tier changes).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { hubCapabilities, hubIdentities } from '../../db/schema/index.js';
import { withTenant } from '../../db/tenant.js';
import { conflict, notFound } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { getDevice, type DeviceRow } from '../devices/index.js';
import { revokeGrantsAboveTier } from '../grants/index.js';
import { insertSpans } from '../telemetry/index.js';
import { tierSeries } from './repo.js';
import { evaluateTier, type TierEvaluation } from './tiers.js';
import { asTier, TIER_HOLD_DAYS, TIER_THRESHOLDS as TRUST_TIER_THRESHOLDS, tierRank, TRUST_TIERS as TIERS, type TrustTier as Tier } from '@parley/protocol';
import { type ScorePoint } from './types.js';
import { certifyCapabilities, decodeOwnerKey, getHubIdentity, type HubCapabilityRow, type HubIdentityRow, insertTierChange, listCapabilities, updateHubIdentity } from '../hub/index.js';
import { ENDED_GRANT, grantState, latestTelemetryScore, tierUnderGrant } from './tier-grant.js';
import type { CertificationCheckName, CertifyResult } from '@parley/protocol';

/** Minimum trust score per tier (contract §3.3). */
export const TIER_THRESHOLDS = { certified: TRUST_TIER_THRESHOLDS.certified, enterprise: TRUST_TIER_THRESHOLDS.enterprise } as const;
/** How recently the bound device must have been seen (`activity` check). */
export const ACTIVITY_WINDOW_MS = 7 * 24 * 3600_000;
/** Default age limit of the latest 7d score for an upgrade (24 h; docs/decisions.md "Trust engine"). */
export const SCORE_MAX_AGE_MS = 24 * 3600_000;
const HOLD_MS = TIER_HOLD_DAYS * 24 * 3600_000;

/** The age limit of the latest 7d score for an upgrade with recomputes every `recomputeIntervalMs`: max(24 h, 2 × the interval), so one missed run never blocks certification. */
export const scoreMaxAgeMs = (recomputeIntervalMs: number): number => Math.max(SCORE_MAX_AGE_MS, 2 * recomputeIntervalMs);

/** The scores are too old to upgrade on ({@link scoreFreshness}): the time of the latest score (null: none) and the limit. */
export interface StaleScore {
  latestAt: Date | null;
  maxAgeMs: number;
}

/**
 * Whether a 7d score history (ascending, points after `now` ignored) is fresh enough to upgrade on:
 * its latest point is at most `maxAgeMs` old AND some point lies inside the hold (now − 7 d, now].
 * Answers null when fresh, else the {@link StaleScore}.
 */
export function scoreFreshness(series: readonly ScorePoint[], now: Date, maxAgeMs: number): StaleScore | null {
  const nowMs = now.getTime();
  const past = series.filter((p) => p.at.getTime() <= nowMs);
  const latestAt = past.length > 0 ? past[past.length - 1]!.at : null;
  const inHold = past.some((p) => p.at.getTime() > nowMs - HOLD_MS);
  return latestAt !== null && nowMs - latestAt.getTime() <= maxAgeMs && inHold ? null : { latestAt, maxAgeMs };
}

/** Names of the certification checks, in answer order. */
export type CheckName = CertificationCheckName;

/** One check's outcome (design §8.16); `detail` says why, in words (never secrets). */
export type CertifyCheck = CertifyResult['checks'][number];

export type { CertifyResult } from '@parley/protocol';

/** What the checks look at. */
export interface CertifyFacts {
  /** Registration `public_key` (base64) or null. */
  publicKey: string | null;
  /** The bound device (null when none is bound, or it was deleted). */
  device: Pick<DeviceRow, 'id' | 'kind' | 'status' | 'lastSeen'> | null;
  capabilities: ReadonlyArray<Pick<HubCapabilityRow, 'inputSchema' | 'sla'>>;
  /** The held score over the last 7 days (trust/tiers.ts heldScoreOf), or null when the 7d history does not cover 7 days yet. */
  heldScore: number | null;
  /** Set when the scores are too old to certify on ({@link scoreFreshness}); absent or null: fresh. */
  staleScore?: StaleScore | null;
  now: Date;
}

/** The five checks of a certify run (pure). */
export function certificationChecks(f: CertifyFacts): CertifyCheck[] {
  const d = f.device;
  const ownerKey: CertifyCheck =
    f.publicKey === null
      ? { check: 'owner_key', passed: false, detail: 'no owner key registered (registration public_key)' }
      : decodeOwnerKey(f.publicKey)
        ? { check: 'owner_key', passed: true, detail: 'an Ed25519 owner key is registered' }
        : { check: 'owner_key', passed: false, detail: 'the registered owner key is not a valid Ed25519 public key' };
  const bound: CertifyCheck = !d
    ? { check: 'bound_device', passed: false, detail: 'no device is bound to this identity' }
    : d.kind === 'agent' && d.status === 'ACTIVE'
      ? { check: 'bound_device', passed: true, detail: `bound to ACTIVE agent device ${d.id}` }
      : { check: 'bound_device', passed: false, detail: `the bound ${d.kind} device ${d.id} is ${d.status}; an ACTIVE agent device is needed` };
  const described = f.capabilities.filter((c) => c.inputSchema != null && c.sla != null).length;
  const caps: CertifyCheck =
    described > 0
      ? { check: 'capabilities', passed: true, detail: `${described} registered capabilit${described === 1 ? 'y has' : 'ies have'} an input_schema and an sla` }
      : { check: 'capabilities', passed: false, detail: 'no registered capability has both an input_schema and an sla' };
  const seen = d?.lastSeen ?? null;
  const activity: CertifyCheck = !d
    ? { check: 'activity', passed: false, detail: 'no bound device to observe' }
    : !seen
      ? { check: 'activity', passed: false, detail: 'the bound device has never been seen' }
      : f.now.getTime() - seen.getTime() <= ACTIVITY_WINDOW_MS
        ? { check: 'activity', passed: true, detail: `the bound device was last seen ${seen.toISOString()} (within 7 days)` }
        : { check: 'activity', passed: false, detail: `the bound device was last seen ${seen.toISOString()}, more than 7 days ago` };
  const needs = `certified needs a held score >= ${TIER_THRESHOLDS.certified}, enterprise >= ${TIER_THRESHOLDS.enterprise}`;
  const trust: CertifyCheck =
    f.heldScore === null
      ? {
          check: 'trust_score',
          passed: false,
          detail: `the trust score has not held for ${TIER_HOLD_DAYS} days yet (the 7-day score history does not cover the last ${TIER_HOLD_DAYS} days); ${needs}`,
        }
      : f.staleScore
        ? {
            check: 'trust_score',
            passed: false,
            detail: `the trust score is stale: the latest 7-day score ${f.staleScore.latestAt ? `was computed at ${f.staleScore.latestAt.toISOString()}` : 'is missing'}, a score within the last ${round4(f.staleScore.maxAgeMs / 3_600_000)} hours and inside the ${TIER_HOLD_DAYS}-day hold is needed (run POST /trust-scores/recompute); ${needs}`,
          }
        : {
            check: 'trust_score',
            passed: f.heldScore >= TIER_THRESHOLDS.certified,
            detail: `held trust score ${round4(f.heldScore)} (the lowest 7-day score over the last ${TIER_HOLD_DAYS} days); ${needs}`,
          };
  return [ownerKey, bound, caps, activity, trust];
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Load the facts of the checks of identity `h` and run them. */
export async function loadChecks(tx: Tx, h: HubIdentityRow, heldScore: number | null, now: Date, staleScore: StaleScore | null = null): Promise<CertifyCheck[]> {
  const device = h.deviceId ? ((await getDevice(tx, h.deviceId)) ?? null) : null;
  return certificationChecks({ publicKey: h.publicKey, device, capabilities: await listCapabilities(tx, h.id), heldScore, staleScore, now });
}

/**
 * The 7d score history of a device for tier decisions: the latest composite (≤ now), its
 * real-telemetry part (tier-grant.ts `latestTelemetryScore`, for operator grants) and the hold
 * series (trust/repo.ts tierSeries).
 */
export async function scoreHistory(tx: Tx, tenantId: string, deviceId: string | null, now: Date): Promise<{ latest: number | null; latestTelemetry: number | null; series: ScorePoint[] }> {
  if (!deviceId) return { latest: null, latestTelemetry: null, series: [] };
  const series = (await tierSeries(tx, tenantId, [deviceId], now, TIER_HOLD_DAYS)).get(deviceId) ?? [];
  const latestTelemetry = await latestTelemetryScore(tx, tenantId, deviceId, now);
  return { latest: series.length > 0 ? series[series.length - 1]!.composite : null, latestTelemetry, series };
}

/**
 * Why a tier changes (`hub_tier_changes.reason`, audit `data.reason`); `device_revoked`: the bound
 * device was revoked or deleted (devices/lifecycle.ts); `grant_expired`: an operator grant expired
 * (tier-grant.ts); `operator_grant`: a platform operator granted the tier (operator-tier.ts).
 */
export type TierChangeReason = 'certify' | 'trust_recompute' | 'device_revoked' | 'grant_expired' | 'operator_grant';

/** Input of {@link decideTier}. */
export interface TierDecisionInput {
  tenantId: string;
  /** The identity, read FOR UPDATE in this transaction (its `trust_tier` is the current tier). */
  identity: HubIdentityRow;
  /** The latest 7d composite (null: none computed yet → no change). */
  latest: number | null;
  /**
   * The latest 7d composite over real-telemetry dimensions only (trust/fallbacks.ts
   * `telemetryComposite`; null: none, e.g. the warm-up): what may lower an operator-granted tier
   * (tier-grant.ts). Omitted: `latest` counts as real (the device_revoked demotion).
   */
  latestTelemetry?: number | null;
  /** The 7d composites of the hold, ascending, the latest included (trust/repo.ts tierSeries). */
  series: readonly ScorePoint[];
  now: Date;
  reason: Exclude<TierChangeReason, 'grant_expired' | 'operator_grant'>;
  /** Audit actor: the owner's `sub`, or `system` for the recompute. */
  actor: string;
  /** Run the checks even when no upgrade is possible (certify answers them every time). */
  alwaysCheck?: boolean;
  /** Age limit of the latest score of `series` for an upgrade (default {@link SCORE_MAX_AGE_MS}; {@link scoreFreshness}). */
  maxScoreAgeMs?: number;
}

/** Outcome of {@link decideTier}. */
export interface TierDecision {
  from: Tier;
  to: Tier;
  changed: boolean;
  direction: 'up' | 'down' | 'none';
  /** evaluateTier's held score (null: the history does not cover the hold). */
  heldScore: number | null;
  /** The checks, when they ran (certify, or an upgrade candidate). */
  checks: CertifyCheck[] | null;
  evaluation: TierEvaluation | null;
  /** The SPTs revoked by a downgrade (`jti`s; empty otherwise). */
  revokedGrants: string[];
}

/**
 * Decide the identity's tier from its 7d score history and apply a change (see the module
 * comment for the rules and side effects). Runs in the caller's transaction.
 */
export async function decideTier(tx: Tx, input: TierDecisionInput): Promise<TierDecision> {
  const { identity: h, now } = input;
  const from = asTier(h.trustTier);
  const grant = grantState(h, now);
  // An expired operator grant: the computed rules decide from scratch (tier-grant.ts).
  const base = grant === 'expired' ? 'unverified' : from;
  const evaluation = input.latest === null ? null : evaluateTier({ current: base, latest: input.latest, series: input.series, now });
  const heldScore = evaluation?.heldScore ?? null;
  const wantsUp = evaluation?.direction === 'up' && h.status === 'active';
  const stale = scoreFreshness(input.series, now, input.maxScoreAgeMs ?? SCORE_MAX_AGE_MS);
  const checks = input.alwaysCheck || wantsUp ? await loadChecks(tx, h, heldScore, now, stale) : null;
  let to: Tier = base;
  if (evaluation?.direction === 'down') to = evaluation.tier;
  else if (wantsUp && stale === null && checks!.every((c) => c.passed)) to = evaluation!.tier;
  let decisive: number | null = null; // the score that made a granted tier fall
  if (grant === 'valid' && to !== from) {
    const latestTelemetry = input.latestTelemetry === undefined ? input.latest : input.latestTelemetry;
    const granted = tierUnderGrant({ from, computed: to, latest: input.latest, latestTelemetry });
    decisive = granted.score;
    to = granted.tier;
  }
  const direction = tierRank(to) > tierRank(from) ? 'up' : tierRank(to) < tierRank(from) ? 'down' : 'none';
  const endsGrant = grant === 'expired' || (grant === 'valid' && direction !== 'none');
  let revokedGrants: string[] = [];
  if (direction !== 'none') {
    const reason = grant === 'expired' && input.reason !== 'device_revoked' ? 'grant_expired' : input.reason;
    revokedGrants = await applyTierChange(tx, {
      tenantId: input.tenantId,
      identity: h,
      from,
      to,
      score: decisive ?? (direction === 'down' ? input.latest : heldScore),
      reason,
      actor: input.actor,
      checks: checks ?? [],
      now,
      ...(endsGrant ? { source: ENDED_GRANT } : {}),
    });
  } else if (endsGrant) {
    await updateHubIdentity(tx, h.id, { ...ENDED_GRANT, updatedAt: now });
    Object.assign(h, ENDED_GRANT);
  }
  return { from, to, changed: direction !== 'none', direction, heldScore, checks, evaluation, revokedGrants };
}

/** The identity columns saying where its tier comes from (design §8.25). */
export type TierSourceColumns = Pick<typeof hubIdentities.$inferInsert, 'tierSource' | 'tierGrantReason' | 'tierGrantExpiresAt'>;

/** A tier change to apply ({@link applyTierChange}). */
export interface TierChange {
  tenantId: string;
  /** The identity, locked FOR UPDATE; updated in place. */
  identity: HubIdentityRow;
  from: Tier;
  to: Tier;
  /** The score that justified it: the latest composite (down) or the held score (up); null: none (an operator grant, an expired grant without scores). */
  score: number | null;
  reason: TierChangeReason;
  actor: string;
  checks: CertifyCheck[];
  now: Date;
  /** Source columns written with the tier: an operator's grant, or tier-grant.ts ENDED_GRANT; absent: unchanged. */
  source?: TierSourceColumns;
  /** Append `hub.tier_changed` (default true; an operator grant appends `hub.tier_granted` itself). */
  audit?: boolean;
}

/**
 * Apply one tier change with all its side effects (module comment), in `tx`: `trust_tier` (and
 * `source` columns), `hub_tier_changes`, capabilities, SPT revocation on a downgrade, audit
 * `hub.tier_changed` (unless `audit: false`), the `svc.trust` span when a device is bound.
 * Answers the `jti`s of the SPTs a downgrade revoked.
 */
export async function applyTierChange(tx: Tx, c: TierChange): Promise<string[]> {
  const up = tierRank(c.to) > tierRank(c.from);
  const h = c.identity;
  await updateHubIdentity(tx, h.id, { trustTier: c.to, updatedAt: c.now, ...(up ? { certifiedAt: c.now } : {}), ...c.source });
  if (c.source) Object.assign(h, c.source);
  await insertTierChange(tx, { id: randomUUID(), tenantId: c.tenantId, identityId: h.id, fromTier: c.from, toTier: c.to, reason: c.reason, checks: c.checks, createdAt: c.now });
  let revoked: string[] = [];
  if (up) {
    await certifyCapabilities(tx, h.id, c.to);
  } else {
    if (h.deviceId) revoked = await revokeGrantsAboveTier(tx, h.deviceId, c.to, 'tier_downgrade', c.now);
    await restrictCapabilities(tx, h.id, c.to);
  }
  const score = c.score === null ? null : round4(c.score);
  if (c.audit !== false) {
    await appendAudit(tx, c.tenantId, { type: 'hub.tier_changed', actor: c.actor, subject: h.id, data: { from: c.from, to: c.to, score, reason: c.reason, revoked_grants: revoked } });
  }
  if (h.deviceId) {
    await insertSpans(tx, c.tenantId, h.deviceId, [
      {
        traceId: randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        parentSpanId: null,
        name: 'svc.trust',
        kind: 1,
        startTime: c.now,
        endTime: c.now,
        durationUs: 0,
        statusCode: 0,
        statusMessage: null,
        attributes: {
          operation: 'tier_change',
          'svc.trust.from_tier': c.from,
          'svc.trust.to_tier': c.to,
          ...(score === null ? {} : { 'svc.trust.score': score }),
          'svc.trust.reason': c.reason,
          'svc.trust.tier_source': h.tierSource,
          'svc.hub_identity_id': h.id,
        },
        resource: { 'service.name': 'parley' },
      },
    ]);
  }
  // Keep the row the caller holds in step with what was written.
  h.trustTier = c.to;
  return revoked;
}

/** Capabilities certified above `tier` fall to `tier` (contract §3.3: active capabilities are restricted on a downgrade). */
async function restrictCapabilities(tx: Tx, identityId: string, tier: Tier): Promise<void> {
  const above = TIERS.slice(TIERS.indexOf(tier) + 1);
  if (above.length === 0) return;
  await tx
    .update(hubCapabilities)
    .set({ certificationTier: tier })
    .where(and(eq(hubCapabilities.identityId, identityId), inArray(hubCapabilities.certificationTier, [...above])));
}

/** Lock several identities of the tenant (FOR UPDATE), by id. */
export async function lockIdentities(tx: Tx, ids: readonly string[]): Promise<Map<string, HubIdentityRow>> {
  if (ids.length === 0) return new Map();
  const found = await tx.select().from(hubIdentities).where(sql`${hubIdentities.id} = any(${sql.param([...ids])}::uuid[])`).for('update');
  return new Map(found.map((r) => [r.id, r]));
}

/** Options of {@link HubCertifyService.certify}. */
export interface CertifyOptions {
  /** Age limit of the latest 7d score for an upgrade (default {@link SCORE_MAX_AGE_MS}; the route passes {@link scoreMaxAgeMs} of the recompute interval). */
  maxScoreAgeMs?: number;
}

export class HubCertifyService {
  constructor(private readonly db: Db) {}

  /**
   * Run the certification checks of the tenant's identity `id` and decide its tier with
   * {@link decideTier} (see the module comment). Answers whether or not it changes; every run
   * sets `last_attestation_at`, is audited as `hub.certified {tier, upgraded, checks: [{check,
   * passed}]}`, and (when the tier did not just rise: the upgrade did it already) capabilities
   * with an SLA carry the tier when it is above unverified. `actor` is the owner's `sub` (audit).
   * @throws 404 unknown or another tenant's identity; 409 the identity is suspended.
   */
  certify(tenantId: string, id: string, actor = 'owner', opts: CertifyOptions = {}): Promise<CertifyResult> {
    return withTenant(this.db, tenantId, async (tx) => {
      const h = await getHubIdentity(tx, id, true);
      if (!h) throw notFound('hub identity');
      if (h.status !== 'active') throw conflict(`hub identity is ${h.status}`);
      const now = new Date();
      const { latest, latestTelemetry, series } = await scoreHistory(tx, tenantId, h.deviceId, now);
      const decision = await decideTier(tx, {
        tenantId,
        identity: h,
        latest,
        latestTelemetry,
        series,
        now,
        reason: 'certify',
        actor,
        alwaysCheck: true,
        ...(opts.maxScoreAgeMs !== undefined ? { maxScoreAgeMs: opts.maxScoreAgeMs } : {}),
      });
      await updateHubIdentity(tx, h.id, { lastAttestationAt: now });
      const upgraded = decision.direction === 'up';
      if (!upgraded && decision.to !== 'unverified') await certifyCapabilities(tx, h.id, decision.to);
      const checks = decision.checks!;
      await appendAudit(tx, tenantId, { type: 'hub.certified', actor, subject: h.id, data: { tier: decision.to, upgraded, checks: checks.map((c) => ({ check: c.check, passed: c.passed })) } });
      return { identity_id: h.id, tier: decision.to, upgraded, checks };
    });
  }
}
