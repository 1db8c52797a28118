/**
 * The skill policy pipeline (design §8.6; contract §4.19 `svc_check_policy`, `svc_delegate_skill`;
 * contract §7 "delegation to an agent below the policy trust threshold is rejected and audited").
 *
 * Stages, in order, each one pass/fail with a detail; the first failure decides and the stages
 * after it are not run (nor listed):
 * 1. `identity`: the judged agent's device is ACTIVE and its hub identity exists and is active.
 * 2. `trust_floor`: the enabled policies scoped to the skill that use `trust_score_below` or
 *    `sender_tier_below` (the floor), evaluated for the judged agent; `block` or `hold` fails.
 * 3. `grant`: the calling agent holds an active SPT for the skill: the presented `spt` (signature,
 *    expiry, revocation, skill, subject) or, without one, an active row in `skill_grants`.
 * 4. `rate`: at most `SKILL_CHECKS_PER_MIN` checks per calling agent and skill per minute
 *    (rate-limiter-flexible: memory, or Redis when configured).
 * 5. `budget`: the calling agent's spend caps (modules/spend): fails when its
 *    spend today or this month (UTC) is at or over a cap, naming the cap; fires the 80 % / 100 %
 *    alerts the spend reached (published by the caller after commit). Passes when no
 *    {@link PipelineDeps.budget} is wired.
 * 6. `rules`: every other enabled policy scoped to the skill or tenant-wide: `block` fails, `hold`
 *    fails with "requires owner approval" (unless the owner is the approver, see `ownerApproved`),
 *    `notify` and `allow` pass (`notify` also alerts the owners, after commit, by the caller).
 *
 * The judged agent is the caller, or in delegation mode (`target`) the target: identity and
 * trust floor are the target's; grant, rate, budget and rules stay the caller's (the caller invokes the
 * target's skill; the rules see the caller as sender and the target as recipient).
 *
 * Policy context of a skill check: `message_type` {@link SKILL_MESSAGE_TYPE}, priority `normal`,
 * no room, sender and recipient kinds `agent`, `cross_tenant` true when the target lives in
 * another tenant, and in the rules stage `senderRatePerMinute` = the caller's checks of this
 * skill in the current minute (so `rate_per_minute_over` reads the skill-check rate).
 */
import { SKILL_PIPELINE_STAGES, type SkillCheckResult as WireSkillCheckResult, type SkillPipelineStage, type SkillStageOutcome, type SpendAlertEvent } from '@parley/protocol';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Tx } from '../../db/client.js';
import { switchTenant } from '../../db/tenant.js';
import { badRequest } from '../../lib/errors.js';
import { appendAudit } from '../audit/index.js';
import { getDevice, type DeviceRow } from '../devices/index.js';
import { getByAddress, getByDevice, hubDid, type HubIdentityRow } from '../hub/index.js';
import { compilePolicies, evaluate, type EvaluationContext, listPolicies, type PolicyRule, toPolicyRule } from '../policies/index.js';
import { asTier, NEUTRAL_SCORE } from '@parley/protocol';
import { activeGrantFor, getGrant } from './repo.js';
import type { SptTokens } from './tokens.js';

/** The stages in evaluation order (design §8.6): the contract's `SKILL_PIPELINE_STAGES`. */
export const PIPELINE_STAGES = SKILL_PIPELINE_STAGES;
export type PipelineStage = SkillPipelineStage;

/** The stages an SPT issuance runs (POST /grants): no grant (it is being issued) and no rate. */
export const ISSUE_STAGES: readonly PipelineStage[] = ['identity', 'trust_floor', 'rules'];

/** The `message_type` a skill check presents to policy conditions (`message_types`). */
export const SKILL_MESSAGE_TYPE = 'skill_invocation';

/** One stage's outcome; `detail` says why (human-readable, never secret). */
export type StageOutcome = SkillStageOutcome;

/**
 * The pipeline answer (`POST /skills/check`, `svc_check_policy`; the contract's `SkillCheckResult`):
 * `decided_by` is the first stage that failed, else the last stage run; `reason` is its detail;
 * `stages` lists the stages run.
 */
export type PipelineAnswer = WireSkillCheckResult;

/** A delegation target after platform-wide address resolution (GrantService.resolveTarget). */
export interface ResolvedTarget {
  /** `did:hub:<address>` (lowercase address). */
  did: string;
  address: string;
  /** The tenant of the identity with this address; null when no identity has it. */
  tenantId: string | null;
}

/** What the pipeline needs besides the transaction. */
export interface PipelineDeps {
  tokens: SptTokens;
  /** The `rate` stage's limiter (points = checks per minute); undefined when rate limits are off. */
  limiter: RateLimiterAbstract | undefined;
  /** The limiter's points, for the detail. */
  checksPerMin: number;
  /** The `budget` stage (SpendService.budget); undefined: the stage passes (no spend caps wired). */
  budget?: (tx: Tx, tenantId: string, deviceId: string, agent: string, now: Date) => Promise<{ outcome: StageOutcome; alerts: SpendAlertEvent[] }>;
}

/** One pipeline run. Times are Dates; ids lowercase UUIDs. */
export interface SkillCheckInput {
  /** The tenant `tx` is scoped to (the caller's). */
  tenantId: string;
  /** The calling agent device (an agent device of the tenant). */
  deviceId: string;
  skill: string;
  /** Delegation mode: the other agent whose skill is invoked. */
  target?: ResolvedTarget;
  /** A presented SPT (compact JWS); without it the grant stage looks for an active grant row. */
  spt?: string;
  /** Recorded in a denial's audit data (names only; args are never stored). */
  tool?: string;
  model?: string;
  /** Audit actor (owner sub, `device:<id>`, `api_key:<id>`). */
  actor: string;
  /**
   * `check` runs every stage and audits denials; `delegate` runs every stage and audits nothing
   * (GrantService.delegate records its own `skill.delegated` / `skill.delegation_refused` event in
   * the same transaction); `issue` runs {@link ISSUE_STAGES} and audits nothing.
   */
  mode: 'check' | 'delegate' | 'issue';
  /** The owner is the approver (it issues the grant itself): a `hold` in the rules stage passes. */
  ownerApproved?: boolean;
  now: Date;
}

/** The pipeline answer plus what the caller needs after it. */
export interface SkillCheckResult {
  answer: PipelineAnswer;
  /** The judged agent's identity (the caller's, or the target's in delegation mode), when found. */
  identity: HubIdentityRow | undefined;
  /** A `notify` policy that matched in the rules stage: the caller alerts the owners after commit. */
  notifyPolicyId: string | null;
  /** Spend alerts the budget stage fired (claimed, audited, webhooks enqueued in `tx`): the caller publishes them after commit. */
  spendAlerts: SpendAlertEvent[];
}

const scoreText = (s: number | null) => (s === null ? `none yet (counts as ${NEUTRAL_SCORE})` : s.toFixed(2));

interface Judged {
  device: DeviceRow | undefined;
  identity: HubIdentityRow | undefined;
  /** Why the identity stage fails, or null when it passes. */
  failure: string | null;
}

/** The identity facts of the caller (`check`/`issue`) in the caller's scope. */
async function judgeCaller(tx: Tx, deviceId: string): Promise<Judged> {
  const device = await getDevice(tx, deviceId);
  const identity = await getByDevice(tx, deviceId);
  let failure: string | null = null;
  if (!device || device.status !== 'ACTIVE') failure = `agent device ${deviceId} is ${device?.status ?? 'deleted'}, not ACTIVE`;
  else if (!identity) failure = `agent device ${deviceId} has no hub identity (register one with device_id)`;
  else if (identity.status !== 'active') failure = `hub identity ${hubDid(identity.hubAddress)} is ${identity.status}`;
  return { device, identity, failure };
}

/**
 * The identity facts of a delegation target, read in the target's tenant (switching the scope of
 * `tx` there and back to `homeTenant`: RLS stays on). A target in another tenant that is not in
 * standing fails with one generic detail: the caller learns neither the state of another tenant's
 * device (revoked, pending, deleted) nor whether the identity is bound or suspended.
 * @throws 400 when the target is the caller.
 */
async function judgeTarget(tx: Tx, homeTenant: string, callerDeviceId: string, target: ResolvedTarget): Promise<Judged> {
  if (!target.tenantId) return { device: undefined, identity: undefined, failure: `no agent has the hub address ${target.address}` };
  if (target.tenantId !== homeTenant) await switchTenant(tx, target.tenantId);
  try {
    const identity = await getByAddress(tx, target.address);
    const device = identity?.deviceId ? await getDevice(tx, identity.deviceId) : undefined;
    if (device && device.id === callerDeviceId) throw badRequest('target must name another agent, not the caller');
    let failure: string | null = null;
    if (!identity) failure = `no agent has the hub address ${target.address}`;
    else if (identity.status !== 'active') failure = `hub identity ${target.did} is ${identity.status}`;
    else if (!identity.deviceId) failure = `hub identity ${target.did} is bound to no agent device`;
    else if (!device || device.status !== 'ACTIVE') failure = `the agent device of ${target.did} is ${device?.status ?? 'deleted'}, not ACTIVE`;
    if (failure && identity && target.tenantId !== homeTenant) failure = `the target agent ${target.did} is not active`;
    return { device, identity, failure };
  } finally {
    if (target.tenantId !== homeTenant) await switchTenant(tx, homeTenant);
  }
}

/** The policy context of a skill check for `sender` (see the module comment). */
function skillContext(input: SkillCheckInput, sender: { deviceId: string; identity: HubIdentityRow | undefined }, recipientDeviceId: string | null): EvaluationContext {
  return {
    roomId: null,
    skill: input.skill,
    messageType: SKILL_MESSAGE_TYPE,
    priority: 'normal',
    senderKind: 'agent',
    recipientKind: 'agent',
    senderDeviceId: sender.deviceId,
    recipientDeviceId,
    senderHubAddress: sender.identity?.hubAddress ?? null,
    senderTier: asTier(sender.identity?.trustTier),
    senderTrustScore: sender.identity?.trustScore ?? null,
    crossTenant: !!input.target?.tenantId && input.target.tenantId !== input.tenantId,
    now: input.now,
  };
}


const isFloor = (r: PolicyRule) => r.conditions.trust_score_below !== undefined || r.conditions.sender_tier_below !== undefined;

/** The grant stage: the presented SPT, or an active grant row, of the caller for the skill. */
async function grantStage(tx: Tx, deps: PipelineDeps, input: SkillCheckInput, callerIdentity: HubIdentityRow | undefined): Promise<StageOutcome> {
  const fail = (detail: string): StageOutcome => ({ stage: 'grant', passed: false, detail });
  if (input.spt !== undefined) {
    const claims = await deps.tokens.verifySignature(input.spt);
    if (!claims) return fail('the presented SPT is not a valid token of this service (signature)');
    if (claims.exp * 1000 <= input.now.getTime()) return fail(`the presented SPT ${claims.jti} expired at ${new Date(claims.exp * 1000).toISOString()}`);
    if (claims.skill !== input.skill) return fail(`the presented SPT ${claims.jti} is for skill "${claims.skill}", not "${input.skill}"`);
    const callerDid = callerIdentity ? hubDid(callerIdentity.hubAddress) : null;
    if (claims.sub !== callerDid) return fail(`the presented SPT ${claims.jti} was issued to ${claims.sub}, not to the caller`);
    const row = await getGrant(tx, claims.jti);
    if (!row || row.deviceId !== input.deviceId) return fail(`the presented SPT ${claims.jti} is not a grant of this agent`);
    if (row.revokedAt) return fail(`the presented SPT ${claims.jti} was revoked at ${row.revokedAt.toISOString()}${row.revokedReason ? ` (${row.revokedReason})` : ''}`);
    return { stage: 'grant', passed: true, detail: `presented SPT ${claims.jti} is valid until ${new Date(claims.exp * 1000).toISOString()}` };
  }
  const row = await activeGrantFor(tx, input.deviceId, input.skill, input.now);
  if (!row) return fail(`no active SPT for skill "${input.skill}": present one (spt) or have one issued (POST /grants)`);
  return { stage: 'grant', passed: true, detail: `active SPT ${row.jti} until ${row.expiresAt.toISOString()}` };
}

/** The rate stage: consume one point for (caller, skill). Answers the outcome and the minute's count. */
async function rateStage(deps: PipelineDeps, input: SkillCheckInput): Promise<{ outcome: StageOutcome; count: number | undefined }> {
  if (!deps.limiter) return { outcome: { stage: 'rate', passed: true, detail: 'rate limits are off (RATE_LIMITS=off)' }, count: undefined };
  try {
    const res = await deps.limiter.consume(`${input.tenantId}:${input.deviceId}:${input.skill}`, 1);
    return { outcome: { stage: 'rate', passed: true, detail: `${res.consumedPoints} of ${deps.checksPerMin} checks of this skill this minute` }, count: res.consumedPoints };
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    const retry = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    return { outcome: { stage: 'rate', passed: false, detail: `more than ${deps.checksPerMin} checks of skill "${input.skill}" per minute; retry in ${retry} s` }, count: err.consumedPoints };
  }
}

/**
 * Run the skill policy pipeline inside `tx` (scoped to `input.tenantId`; a delegation target in
 * another tenant is read by switching the scope there and back). In `check` mode (not in
 * `delegate` nor `issue` mode) a denial is audited in `tx`: `skill.delegation_rejected` when a delegation target fails the trust floor
 * (contract §7), `skill.check_denied` for every other denial.
 * @throws 400 when the delegation target is the caller itself.
 */
export async function checkSkillPolicy(tx: Tx, deps: PipelineDeps, input: SkillCheckInput): Promise<SkillCheckResult> {
  const stages: StageOutcome[] = [];
  const run = input.mode === 'issue' ? ISSUE_STAGES : PIPELINE_STAGES;
  let notifyPolicyId: string | null = null;
  let spendAlerts: SpendAlertEvent[] = [];

  // identity
  const caller = await judgeCaller(tx, input.deviceId);
  const judged = input.target ? await judgeTarget(tx, input.tenantId, input.deviceId, input.target) : caller;
  const judgedDid = judged.identity ? hubDid(judged.identity.hubAddress) : (input.target?.did ?? `device ${input.deviceId}`);
  stages.push(
    judged.failure
      ? { stage: 'identity', passed: false, detail: judged.failure }
      : { stage: 'identity', passed: true, detail: `${judgedDid} is active (tier ${judged.identity!.trustTier}, device ACTIVE)` },
  );

  if (stages.at(-1)!.passed) {
    const rules = (await listPolicies(tx, true)).map(toPolicyRule).filter((r) => r.scopeRoomId === null && (r.scopeSkill === null || r.scopeSkill === input.skill));
    const names = new Map(rules.map((r) => [r.id, r.name]));
    const named = (id: string | null) => `policy "${names.get(id ?? '') ?? '?'}" (${id})`;
    const floor = rules.filter((r) => r.scopeSkill === input.skill && isFloor(r));
    const others = rules.filter((r) => !floor.includes(r));

    // trust_floor
    const judgedCtx = skillContext(input, { deviceId: judged.device!.id, identity: judged.identity }, null);
    const f = evaluate(compilePolicies(floor), judgedCtx);
    const facts = `trust score ${scoreText(judgedCtx.senderTrustScore ?? null)}, tier ${judgedCtx.senderTier}`;
    stages.push(
      f.outcome === 'block' || f.outcome === 'hold'
        ? { stage: 'trust_floor', passed: false, detail: `${judgedDid} is below the trust floor of ${named(f.policyId)} (${f.outcome}): ${facts}` }
        : { stage: 'trust_floor', passed: true, detail: floor.length === 0 ? `no trust floor for skill "${input.skill}"; ${facts}` : `${judgedDid} meets the trust floor (${floor.length} polic${floor.length === 1 ? 'y' : 'ies'}): ${facts}` },
    );

    let rate: number | undefined;
    if (stages.at(-1)!.passed && run.includes('grant')) stages.push(await grantStage(tx, deps, input, caller.identity));
    if (stages.at(-1)!.passed && run.includes('rate')) {
      const r = await rateStage(deps, input);
      stages.push(r.outcome);
      rate = r.count;
    }
    if (stages.at(-1)!.passed && run.includes('budget')) {
      const callerName = caller.identity ? hubDid(caller.identity.hubAddress) : `agent device ${input.deviceId}`;
      if (deps.budget) {
        const b = await deps.budget(tx, input.tenantId, input.deviceId, callerName, input.now);
        stages.push(b.outcome);
        spendAlerts = b.alerts;
      } else stages.push({ stage: 'budget', passed: true, detail: 'spend caps are not enforced here' });
    }

    // rules
    if (stages.at(-1)!.passed) {
      const ctx = { ...skillContext(input, { deviceId: input.deviceId, identity: caller.identity }, input.target ? (judged.device?.id ?? null) : null), senderRatePerMinute: rate };
      const ev = evaluate(compilePolicies(others), ctx);
      if (ev.outcome === 'block') stages.push({ stage: 'rules', passed: false, detail: `blocked by ${named(ev.policyId)}` });
      else if (ev.outcome === 'hold' && !input.ownerApproved) stages.push({ stage: 'rules', passed: false, detail: `requires owner approval (${named(ev.policyId)} holds it)` });
      else if (ev.outcome === 'hold') stages.push({ stage: 'rules', passed: true, detail: `${named(ev.policyId)} holds it: approved by the owner issuing the grant` });
      else if (ev.outcome === 'notify') {
        notifyPolicyId = ev.policyId;
        stages.push({ stage: 'rules', passed: true, detail: `allowed; ${named(ev.policyId)} notifies the owners` });
      } else stages.push({ stage: 'rules', passed: true, detail: ev.policyId ? `allowed by ${named(ev.policyId)}` : 'no policy matched: allowed by default' });
    }
  }

  const last = stages.at(-1)!;
  const answer: PipelineAnswer = { allowed: last.passed, decided_by: last.stage, reason: last.detail, stages };
  if (input.mode === 'check' && !answer.allowed) {
    const rejected = !!input.target && answer.decided_by === 'trust_floor';
    await appendAudit(tx, input.tenantId, {
      type: rejected ? 'skill.delegation_rejected' : 'skill.check_denied',
      actor: input.actor,
      subject: input.deviceId,
      data: {
        skill: input.skill,
        stage: answer.decided_by,
        reason: answer.reason,
        ...(input.target ? { target: input.target.did } : {}),
        ...(input.tool !== undefined ? { tool: input.tool } : {}),
        ...(input.model !== undefined ? { model: input.model } : {}),
      },
    });
  }
  return { answer, identity: judged.identity, notifyPolicyId: answer.allowed ? notifyPolicyId : null, spendAlerts };
}
