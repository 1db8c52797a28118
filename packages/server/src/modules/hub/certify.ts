/**
 * Certification of hub identities (SPEC §3.3 `POST /hub/identities/{id}/certify`, DESIGN §8.16,
 * docs/decisions.md "Hub certification"). A run evaluates five checks and answers them all:
 *
 * | check          | passes when |
 * |----------------|-------------|
 * | `owner_key`    | a registration `public_key` is stored and is a valid Ed25519 key (ed25519.ts) |
 * | `bound_device` | the identity is bound to an ACTIVE agent device |
 * | `capabilities` | at least one registered capability has an `input_schema` and an `sla` |
 * | `activity`     | the bound device was seen within the last 7 days |
 * | `trust_score`  | score ≥ 0.6 (the certified threshold; enterprise needs ≥ 0.8) |
 *
 * The score is `hub_identities.trust_score`, or SPEC §3.9's 0.5 fallback while the trust engine
 * has not computed one (so a real upgrade needs a score). The identity rises to the highest tier
 * whose checks all pass (certified: all five; enterprise: all five and score ≥ 0.8) and never
 * falls here (downgrades belong to the trust engine). A change writes one `hub_tier_changes` row
 * (reason `certify`, the checks) and sets `certified_at`, in the same transaction that locks the
 * identity, so concurrent runs record an upgrade once; every run sets `last_attestation_at`.
 * Capabilities that have an SLA then carry the identity's tier as `certification_tier` (a
 * capability registered later stays `unverified` until the next run).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { conflict, notFound } from '../../lib/errors.js';
import { getDevice, type DeviceRow } from '../devices/repo.js';
import { TRUST_SCORE_FALLBACK } from './directory.js';
import { decodeOwnerKey } from './ed25519.js';
import * as repo from './repo.js';

/** Minimum trust score per tier (SPEC §3.3). */
export const TIER_THRESHOLDS = { certified: 0.6, enterprise: 0.8 } as const;
/** How recently the bound device must have been seen (`activity` check). */
export const ACTIVITY_WINDOW_MS = 7 * 24 * 3600_000;

/** Names of the certification checks, in answer order. */
export type CheckName = 'owner_key' | 'bound_device' | 'capabilities' | 'activity' | 'trust_score';

/** One check's outcome (DESIGN §8.16). */
export interface CertifyCheck {
  check: CheckName;
  passed: boolean;
  /** Why, in words (never secrets). */
  detail: string;
}

/** Answer of a certify run (DESIGN §8.16). */
export interface CertifyResult {
  identity_id: string;
  /** The tier after the run. */
  tier: repo.TrustTier;
  /** True when this run raised the tier. */
  upgraded: boolean;
  checks: CertifyCheck[];
}

/** What the checks look at. */
export interface CertifyFacts {
  /** Registration `public_key` (base64) or null. */
  publicKey: string | null;
  /** The bound device (null when none is bound, or it was deleted). */
  device: Pick<DeviceRow, 'id' | 'kind' | 'status' | 'lastSeen'> | null;
  capabilities: ReadonlyArray<Pick<repo.HubCapabilityRow, 'inputSchema' | 'sla'>>;
  /** The stored trust score, or null before the trust engine computed one. */
  trustScore: number | null;
  now: Date;
}

const rank = (t: string) => Math.max(0, repo.TRUST_TIERS.indexOf(t as repo.TrustTier));

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
  const score = f.trustScore ?? TRUST_SCORE_FALLBACK;
  const source = f.trustScore === null ? ` (no score computed yet: SPEC §3.9 fallback ${TRUST_SCORE_FALLBACK})` : '';
  const trust: CertifyCheck = {
    check: 'trust_score',
    passed: score >= TIER_THRESHOLDS.certified,
    detail: `trust score ${score}${source}; certified needs >= ${TIER_THRESHOLDS.certified}, enterprise >= ${TIER_THRESHOLDS.enterprise}`,
  };
  return [ownerKey, bound, caps, activity, trust];
}

/** The highest tier the checks qualify for (pure): unverified unless all pass; enterprise when the score also reaches 0.8. */
export function qualifiedTier(checks: readonly CertifyCheck[], trustScore: number | null): repo.TrustTier {
  if (!checks.every((c) => c.passed)) return 'unverified';
  return (trustScore ?? TRUST_SCORE_FALLBACK) >= TIER_THRESHOLDS.enterprise ? 'enterprise' : 'certified';
}

export class HubCertifyService {
  constructor(private readonly db: Db) {}

  /**
   * Run the certification checks of the tenant's identity `id` and raise its tier when they
   * pass (see the module comment). Answers whether or not it upgrades.
   * @throws 404 unknown or another tenant's identity; 409 the identity is suspended.
   */
  certify(tenantId: string, id: string): Promise<CertifyResult> {
    return withTenant(this.db, tenantId, async (tx) => {
      const h = await repo.getHubIdentity(tx, id, true);
      if (!h) throw notFound('hub identity');
      if (h.status !== 'active') throw conflict(`hub identity is ${h.status}`);
      const now = new Date();
      const device = h.deviceId ? ((await getDevice(tx, h.deviceId)) ?? null) : null;
      const checks = certificationChecks({ publicKey: h.publicKey, device, capabilities: await repo.listCapabilities(tx, h.id), trustScore: h.trustScore, now });
      const reached = qualifiedTier(checks, h.trustScore);
      const tier = rank(reached) > rank(h.trustTier) ? reached : (h.trustTier as repo.TrustTier);
      const upgraded = tier !== h.trustTier;
      await repo.updateHubIdentity(tx, h.id, { lastAttestationAt: now, ...(upgraded ? { trustTier: tier, certifiedAt: now, updatedAt: now } : {}) });
      if (upgraded) await repo.insertTierChange(tx, { id: randomUUID(), tenantId, identityId: h.id, fromTier: h.trustTier, toTier: tier, reason: 'certify', checks });
      if (tier !== 'unverified') await repo.certifyCapabilities(tx, h.id, tier);
      return { identity_id: h.id, tier, upgraded, checks };
    });
  }
}
