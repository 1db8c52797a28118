/**
 * Skill Permission Tokens (design §8.7; contract §3.3, §4.11, §5 rule 8) and the skill policy check
 * (design §8.6; contract §4.19, §7).
 *
 * - Issue (`POST /grants`): identity -> trust_floor -> rules of the pipeline, then the tier rule of
 *   contract §3.3: an agent asking for itself needs tier >= certified ("automated approvals"); an owner
 *   issuing on the agent's behalf is the manual approval an unverified agent needs, at any tier
 *   (and approves a rules `hold`). The row in `skill_grants` and the `grant.issued` audit event
 *   (never the token) are written in one transaction.
 * - Validate (`POST /grants/validate`, public): signature, expiration, revocation, skill, audience
 *   (`audience` is required: RFC 7519 §4.1.3, a recipient must identify itself in `aud`).
 *   Revocation is looked up by `jti` across tenants: the validator is a third party that knows
 *   no tenant, and a `jti` is a random UUID that reveals nothing but its own state. A grant is
 *   revoked in effect as soon as its agent is no longer in standing: device not ACTIVE (revoked,
 *   deleted) or its hub identity suspended or unbound (revoking or deleting the device also revokes the rows, devices/lifecycle.ts).
 * - List and revoke (owner), and the skill policy check (`POST /skills/check`).
 * - Delegation (`POST /skills/delegate`, contract §4.19 `svc_delegate_skill`): the same pipeline run as
 *   the check, then `skill.delegated` or `skill.delegation_refused` in the caller's chain in the
 *   same transaction (docs/decisions.md "Skill delegation").
 */
import { randomUUID } from 'node:crypto';
import {
  GRANT_CHECKS,
  type DelegateSkillRequest,
  type DelegationResult,
  type Grant,
  type GrantCheck,
  type GrantListQuery,
  type GrantPage,
  type GrantValidation,
  type IssuedGrant,
  type IssueGrantRequest,
  type SkillCheckRequest,
  type SkillCheckResult,
  type ValidateGrantRequest,
} from '@parley/protocol';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db, Tx } from '../../db/client.js';
import { crossTenant, withTenant } from '../../db/tenant.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import { appendAudit } from '../audit/index.js';
import { getDevice } from '../devices/index.js';
import { getByAddress, hubDid, normalizeHubAddress } from '../hub/index.js';
import type { PolicyService } from '../policies/index.js';
import type { SpendService } from '../spend/index.js';
import { asTier, tierRank } from '@parley/protocol';
import type { SptKeys } from '../../keys/index.js';
import { checkSkillPolicy, type PipelineDeps, type ResolvedTarget, type SkillCheckInput, type SkillCheckResult as PipelineResult } from './pipeline.js';
import * as repo from './repo.js';
import type { SptTokens } from './tokens.js';

/** Who calls: an owner (naming the agent in `device_id`) or the agent itself (device JWT or API key). */
export type GrantCaller =
  | { kind: 'owner'; sub: string }
  | { kind: 'agent'; deviceId: string; deviceKind: 'owner' | 'agent'; actor: string };

export interface GrantServiceDeps {
  db: Db;
  keys: SptKeys;
  tokens: SptTokens;
  /** The pipeline's rate limiter (undefined when rate limits are off) and its points per minute. */
  limiter: RateLimiterAbstract | undefined;
  checksPerMin: number;
  /** Default audience: the service's PUBLIC_URL. */
  publicUrl: string;
  /** SPT lifetime in seconds (`SPT_TTL_SECONDS`, default 900). */
  ttlSec: number;
  listDefault: number;
  listMax: number;
  /** For `policy_alert` when a `notify` policy matched (after commit). */
  policies?: Pick<PolicyService, 'alert'>;
  /** The pipeline's `budget` stage and the publication of the spend alerts it fired (after commit); without it the stage passes. */
  spend?: Pick<SpendService, 'budget' | 'publish'>;
}

const toGrantOut = (r: repo.SkillGrantRow, now: Date): Grant => ({
  jti: r.jti,
  device_id: r.deviceId,
  subject: r.subject,
  skill: r.skill,
  tier: r.tier,
  audience: r.audience,
  issued_by: r.issuedBy,
  issued_at: r.issuedAt.toISOString(),
  expires_at: r.expiresAt.toISOString(),
  revoked_at: r.revokedAt?.toISOString() ?? null,
  revoked_reason: r.revokedReason,
  active: r.revokedAt === null && r.expiresAt > now,
});

const DID_HUB = /^did:hub:(.+)$/i;

/** Not revoked, and the agent it was issued to is still in standing (see GrantService.validate). */
const inStanding = (s: repo.GrantStanding): boolean =>
  s.grant.revokedAt === null &&
  s.deviceStatus === 'ACTIVE' &&
  s.deviceDeletedAt === null &&
  s.identity !== null &&
  s.identity.status === 'active' &&
  hubDid(s.identity.hubAddress) === s.grant.subject;

export class GrantService {
  private readonly pipeline: PipelineDeps;

  constructor(private readonly deps: GrantServiceDeps) {
    const spend = deps.spend;
    this.pipeline = {
      tokens: deps.tokens,
      limiter: deps.limiter,
      checksPerMin: deps.checksPerMin,
      ...(spend ? { budget: (tx: Tx, tenantId: string, deviceId: string, agent: string, now: Date) => spend.budget(tx, tenantId, deviceId, agent, now) } : {}),
    };
  }

  /** `GET /grants/jwks`: the SPT verification keys (active first, then those not yet retired) as a JWKS. */
  jwks() {
    return this.deps.keys.jwks();
  }

  /**
   * Issue an SPT (see the module comment). @throws 400 owner without `device_id`, or a device that
   * is not an agent; 404 device not in the tenant; 403 an agent naming another device, an owner
   * device's JWT, a pipeline denial (detail `<stage>: <reason>`) or an agent below certified.
   */
  async issue(tenantId: string, caller: GrantCaller, input: IssueGrantRequest): Promise<IssuedGrant> {
    const deviceId = this.agentDevice(caller, input.device_id);
    const actor = caller.kind === 'owner' ? caller.sub : caller.actor;
    const now = new Date();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + Math.min(input.ttl_seconds ?? this.deps.ttlSec, this.deps.ttlSec);
    const audience = input.audience ?? this.deps.publicUrl;
    const { out, notify } = await withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustBeAgent(tx, deviceId);
      // Before the pipeline reads the tier and device state: a concurrent downgrade or device
      // revocation either commits first (and is seen) or waits for this grant (and revokes it).
      await repo.lockAgentShared(tx, deviceId);
      const r = await checkSkillPolicy(tx, this.pipeline, { tenantId, deviceId, skill: input.skill, actor, mode: 'issue', ownerApproved: caller.kind === 'owner', now });
      if (!r.answer.allowed) throw forbidden(`${r.answer.decided_by}: ${r.answer.reason}`);
      const identity = r.identity!;
      const tier = asTier(identity.trustTier);
      if (caller.kind === 'agent' && tierRank(tier) < tierRank('certified')) {
        throw forbidden(`an agent issues its own SPTs from the certified tier up (contract §3.3: automated approvals); this agent is ${tier}: its owner must issue the grant (manual approval)`);
      }
      const jti = randomUUID();
      const subject = hubDid(identity.hubAddress);
      const token = await this.deps.tokens.sign({ sub: subject, skill: input.skill, tier, aud: audience, jti, iat, exp });
      const expiresAt = new Date(exp * 1000);
      await repo.insertGrant(tx, { jti, tenantId, deviceId, subject, skill: input.skill, tier, audience, issuedBy: actor, issuedAt: now, expiresAt });
      await appendAudit(tx, tenantId, { type: 'grant.issued', actor, subject: jti, data: { device_id: deviceId, skill: input.skill, tier, audience, expires_at: expiresAt.toISOString() } });
      const out: IssuedGrant = { token, jti, skill: input.skill, tier, audience, expires_at: expiresAt.toISOString(), subject, device_id: deviceId };
      return { out, notify: r.notifyPolicyId };
    });
    if (notify) await this.alert(tenantId, notify, deviceId, input.skill, 'grant');
    return out;
  }

  /** The tenant's grants, newest first, filtered by agent device and state; cursor-paginated. */
  list(tenantId: string, q: GrantListQuery): Promise<GrantPage> {
    const after = q.cursor === undefined ? undefined : decodeKeyset(q.cursor);
    const limit = pageLimit(q.limit, this.deps);
    const now = new Date();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const rows = await repo.listGrants(tx, { deviceId: q.device_id?.toLowerCase(), active: q.active, now, after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return { grants: page.map((r) => toGrantOut(r, now)), next_cursor: rows.length > limit && last ? encodeKeyset(last.issuedAt, last.jti) : null };
    });
  }

  /** Put a grant on the revocation list and audit `grant.revoked`. @throws 404 unknown (or another tenant's), 409 already revoked. */
  revoke(tenantId: string, actor: string, jti: string, reason: string | undefined): Promise<Grant> {
    const now = new Date();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const g = await repo.getGrant(tx, jti.toLowerCase(), true);
      if (!g) throw notFound('grant');
      if (g.revokedAt) throw conflict(`grant is already revoked (at ${g.revokedAt.toISOString()})`);
      const row = await repo.revokeGrant(tx, g.jti, reason ?? 'revoked by the owner', now);
      await appendAudit(tx, tenantId, { type: 'grant.revoked', actor, subject: g.jti, data: { device_id: g.deviceId, skill: g.skill, reason: row.revokedReason } });
      return toGrantOut(row, now);
    });
  }

  /**
   * Validate a token for a third party. A token that is not an SPT of this service fails
   * `signature`, and then every other check fails too (its claims cannot be trusted). `audience`
   * (required: the validator names itself, RFC 7519 §4.1.3) must equal `aud`; `skill` passes when
   * not asked for. `revocation` passes only when the grant is registered and not revoked, its
   * device is ACTIVE and not deleted, and the hub identity bound to that device is `active` and is
   * still the token's subject.
   */
  async validate(input: ValidateGrantRequest): Promise<GrantValidation> {
    const claims = await this.deps.tokens.verifySignature(input.token);
    if (!claims) return { valid: false, checks: GRANT_CHECKS.map((check) => ({ check, passed: false })) };
    const standing = await crossTenant(this.deps.db, 'SPT validation (design §8.7): a public third party checks the revocation list by jti', (tx) => repo.grantStanding(tx, claims.jti));
    const passed: Record<GrantCheck, boolean> = {
      signature: true,
      expiration: claims.exp * 1000 > Date.now(),
      revocation: standing !== undefined && inStanding(standing),
      // A rental SPT names several skills, space-separated like an OAuth scope (grants/rental.ts).
      skill: input.skill === undefined || input.skill === claims.skill || claims.skill.split(' ').includes(input.skill),
      audience: input.audience === claims.aud,
    };
    const checks = GRANT_CHECKS.map((check) => ({ check, passed: passed[check] }));
    return { valid: checks.every((c) => c.passed), checks, claims };
  }

  /**
   * The skill policy check (`POST /skills/check`): the pipeline answer, allowed or not. Owners name
   * the agent in `device_id`; a `target` (hub address or `did:hub:`) switches to delegation mode.
   * @throws 400 owner without `device_id`, a malformed target or the caller as target; 403 an agent
   * naming another device or an owner device's JWT; 404 a device not in the tenant.
   */
  async check(tenantId: string, caller: GrantCaller, input: SkillCheckRequest): Promise<SkillCheckResult> {
    const target = input.target !== undefined ? await this.resolveTarget(input.target) : undefined;
    const { r } = await this.runPipeline(tenantId, caller, input, target, 'check', async () => undefined);
    return r.answer;
  }

  /**
   * Delegate a skill invocation (`POST /skills/delegate`, contract §4.19 `svc_delegate_skill`, §7):
   * the pipeline of {@link check} in delegation mode (identity and trust floor are the target's;
   * grant, rate and rules the caller's), then, in the same transaction, `skill.delegated` (allowed)
   * or `skill.delegation_refused` (refused at any stage, below the trust floor included) in the
   * caller's chain: actor the caller, subject the calling agent device, data `{skill,
   * target_hub_address, target_did, decided_by, reason, trace_id, delegation_id}`. Answers 200
   * either way with a new `delegation_id`, the event id and the target's public hub facts.
   * @throws 400 as {@link check}, or an all-zero `trace_id`; 403 as {@link check}; 404 no hub
   *   identity has the target address (platform-wide), or the device is not in the tenant.
   */
  async delegate(tenantId: string, caller: GrantCaller, input: DelegateSkillRequest): Promise<DelegationResult> {
    if (input.trace_id !== undefined && /^0+$/.test(input.trace_id)) throw badRequest('trace_id must not be all zeros (W3C Trace Context)');
    const traceId = input.trace_id?.toLowerCase() ?? null;
    this.agentDevice(caller, input.device_id); // its 400/403 come before the target's 404
    const target = await this.resolveTarget(input.target);
    if (!target.tenantId) throw notFound('hub identity');
    const delegationId = randomUUID();
    const { r, extra: event } = await this.runPipeline(tenantId, caller, input, target, 'delegate', (tx, run, base) =>
      appendAudit(tx, tenantId, {
        type: run.answer.allowed ? 'skill.delegated' : 'skill.delegation_refused',
        actor: base.actor,
        subject: base.deviceId,
        data: {
          skill: input.skill,
          target_hub_address: target.address,
          target_did: target.did,
          decided_by: run.answer.decided_by,
          reason: run.answer.reason,
          trace_id: traceId,
          delegation_id: delegationId,
        },
      }),
    );
    return {
      ...r.answer,
      delegation_id: delegationId,
      audit_event_id: event.event_id,
      target: { hub_address: target.address, did: target.did, trust_tier: asTier(r.identity?.trustTier), trust_score: r.identity?.trustScore ?? null },
    };
  }

  /**
   * One pipeline run for the check and the delegation (one code path, design §8.6): the agent
   * device of the request, then in one tenant transaction the agent check, the pipeline, and
   * `after` (the delegation's audit event); owners are alerted of a matched `notify` policy after
   * commit.
   */
  private async runPipeline<T>(
    tenantId: string,
    caller: GrantCaller,
    input: SkillCheckRequest,
    target: ResolvedTarget | undefined,
    mode: 'check' | 'delegate',
    after: (tx: Tx, r: PipelineResult, base: SkillCheckInput) => Promise<T>,
  ): Promise<{ r: PipelineResult; extra: T }> {
    const deviceId = this.agentDevice(caller, input.device_id);
    const base: SkillCheckInput = {
      tenantId,
      deviceId,
      skill: input.skill,
      ...(target ? { target } : {}),
      ...(input.spt !== undefined ? { spt: input.spt } : {}),
      ...(input.tool !== undefined ? { tool: input.tool } : {}),
      ...(input.model !== undefined ? { model: input.model } : {}),
      actor: caller.kind === 'owner' ? caller.sub : caller.actor,
      mode,
      now: new Date(),
    };
    const out = await withTenant(this.deps.db, tenantId, async (tx) => {
      await this.mustBeAgent(tx, deviceId);
      const r = await checkSkillPolicy(tx, this.pipeline, base);
      return { r, extra: await after(tx, r, base) };
    });
    if (out.r.notifyPolicyId) await this.alert(tenantId, out.r.notifyPolicyId, deviceId, input.skill, 'check');
    if (out.r.spendAlerts.length > 0) await this.deps.spend?.publish(tenantId, out.r.spendAlerts);
    return out;
  }

  /**
   * A delegation target (hub address or `did:hub:<address>`, any case) resolved platform-wide:
   * addresses are public and unique (contract §2.8), so the lookup crosses tenants; an unknown one
   * answers `tenantId: null` (the identity stage then fails). @throws 400 when malformed.
   */
  async resolveTarget(target: string): Promise<ResolvedTarget> {
    const raw = DID_HUB.exec(target)?.[1] ?? target;
    const address = normalizeHubAddress(raw);
    if (!address) throw badRequest('target must be a hub address or did:hub:<hub_address>');
    const row = await crossTenant(this.deps.db, 'hub addresses are public and unique platform-wide (contract §2.8): a delegation target may live in any tenant', (tx) => getByAddress(tx, address));
    return { did: hubDid(address), address, tenantId: row?.tenantId ?? null };
  }

  /** The agent device a request is about (same rules as decisions, design §8.19). */
  private agentDevice(caller: GrantCaller, named: string | undefined): string {
    if (caller.kind === 'owner') {
      if (!named) throw badRequest('device_id is required when an owner acts on behalf of an agent');
      return named.toLowerCase();
    }
    if (caller.deviceKind !== 'agent') throw forbidden('only agent devices act for themselves; owners name the agent in device_id');
    if (named !== undefined && named.toLowerCase() !== caller.deviceId) throw forbidden('an agent acts for itself only; leave out device_id');
    return caller.deviceId;
  }

  /** 404 unless the device is in the tenant; 400 unless it is an agent device. */
  private async mustBeAgent(tx: Tx, deviceId: string): Promise<void> {
    const d = await getDevice(tx, deviceId);
    if (!d) throw notFound('device');
    if (d.kind !== 'agent') throw badRequest('device_id must name an agent device');
  }

  private async alert(tenantId: string, policyId: string, deviceId: string, skill: string, operation: 'check' | 'grant'): Promise<void> {
    await this.deps.policies?.alert(tenantId, { policy_id: policyId, sender_device_id: deviceId, skill, operation, room_id: null, recipient_device_id: null, message_type: 'skill_invocation' });
  }
}
