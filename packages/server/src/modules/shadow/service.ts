/**
 * Shadow sessions (contract §2.14, §3.4, §4.17; design §8.8, §8.20): an owner evaluates one agent on
 * one skill and decision class by recording, next to each human decision, what the agent
 * recommended. The platform compares the actions; graduation (shadow -> supervised ->
 * autonomous, one level at a time, never automatic) needs all three gates of gates.ts; the owner
 * may demote to any lower level at any time. Level changes reset the evidence (`level_since`).
 *
 * Concurrency: graduate and demote lock the session row (`FOR UPDATE`), so two concurrent
 * graduations promote once (the second sees the new level, with no evidence yet, and gets 409);
 * recording locks it `FOR SHARE`, so an observation is stored with the level it was recorded at.
 * Record, graduate and demote read the clock AFTER taking that lock, and never earlier than the
 * locked row's `level_since` ({@link atOrAfter}): an observation stored at a level is never
 * dated before that level began (a level change committing while the record waited for its lock
 * would otherwise leave it uncounted), and `level_since` never moves backwards.
 */
import { randomUUID } from 'node:crypto';
import type {
  CreateShadowSessionRequest,
  DemoteShadowSessionRequest,
  RecordShadowDecisionRequest,
  ShadowObservation,
  ShadowSession,
  ShadowSessionListQuery,
  ShadowSessionPage,
  ShadowStats,
} from '@parley/protocol';
import type { Db, Tx } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { decodeKeyset, encodeKeyset, pageLimit } from '../../lib/paging.js';
import { appendAudit } from '../audit/index.js';
import { getDevice } from '../devices/index.js';
import {
  actionsAgree,
  agreementRate,
  checkGraduation,
  DEFAULT_CONFIG,
  failingGates,
  isLower,
  missWindowStart,
  type GraduationCheck,
  type ShadowConfig,
  type ShadowLevel,
} from './gates.js';
import * as repo from './repo.js';

export interface ShadowServiceDeps {
  db: Db;
  listDefault: number;
  listMax: number;
  /** Current time; tests inject a controllable clock. Default: the real time. */
  clock?: () => Date;
}

const NO_STATS: repo.LevelStats = { observations: 0, agreed: 0, criticalMisses: 0 };

const toStats = (s: repo.LevelStats = NO_STATS): ShadowStats => ({
  observations: s.observations,
  agreed: s.agreed,
  agreement_rate: agreementRate(s.agreed, s.observations),
  critical_misses: s.criticalMisses,
});

const configOf = (r: repo.SessionRow): ShadowConfig => ({
  min_observations: r.minObservations,
  agreement_threshold: r.agreementThreshold,
  critical_miss_window_hours: r.criticalMissWindowHours,
});

const toOut = (r: repo.SessionRow, stats?: repo.LevelStats): ShadowSession => ({
  session_id: r.id,
  device_id: r.deviceId,
  skill_name: r.skillName,
  decision_class: r.decisionClass,
  config: configOf(r),
  level: r.level as ShadowLevel,
  level_since: r.levelSince.toISOString(),
  created_at: r.createdAt.toISOString(),
  stats: toStats(stats),
});

/** The later of `now` and `floor` (a clock behind the locked row's `level_since` reads as `level_since`). */
export const atOrAfter = (now: Date, floor: Date): Date => (now.getTime() < floor.getTime() ? new Date(floor.getTime()) : now);

/** 400 unless `value` has a non-blank content; answers it trimmed. */
function text(value: string, field: string): string {
  const v = value.trim();
  if (v === '') throw badRequest(`${field} must not be blank`);
  return v;
}

export class ShadowService {
  private readonly now: () => Date;

  constructor(private readonly deps: ShadowServiceDeps) {
    this.now = deps.clock ?? (() => new Date());
  }

  /**
   * Create a session at level `shadow` (level_since = now) for an agent device of the tenant.
   * 404 when `device_id` is unknown, deleted or another tenant's; 400 for an owner device or a
   * REVOKED agent; 409 when the agent already has a session for this skill_name and
   * decision_class. Audited `shadow_session.created`.
   */
  async create(tenantId: string, actor: string, input: CreateShadowSessionRequest): Promise<ShadowSession> {
    const skillName = text(input.skill_name, 'skill_name');
    const decisionClass = text(input.decision_class, 'decision_class');
    const config: ShadowConfig = { ...DEFAULT_CONFIG, ...input.config };
    const now = this.now();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const d = await getDevice(tx, input.device_id);
      if (!d) throw notFound('device');
      if (d.kind !== 'agent') throw badRequest('device_id must name an agent device (shadow sessions evaluate agents)');
      if (d.status === 'REVOKED') throw badRequest('device_id names a revoked agent device');
      await repo.lockSessionKey(tx, d.id, skillName, decisionClass);
      const existing = await repo.findSession(tx, d.id, skillName, decisionClass);
      if (existing) throw conflict(`the agent already has shadow session ${existing.id} for this skill_name and decision_class`);
      const row = await repo.insertSession(tx, {
        id: randomUUID(),
        tenantId,
        deviceId: d.id,
        skillName,
        decisionClass,
        minObservations: config.min_observations,
        agreementThreshold: config.agreement_threshold,
        criticalMissWindowHours: config.critical_miss_window_hours,
        level: 'shadow',
        levelSince: now,
        createdBy: actor,
        createdAt: now,
        updatedAt: now,
      });
      await appendAudit(tx, tenantId, {
        type: 'shadow_session.created',
        actor,
        subject: row.id,
        data: { device_id: d.id, skill_name: skillName, decision_class: decisionClass, config },
      });
      return toOut(row);
    });
  }

  /** Sessions of the tenant, oldest first, `{sessions, next_cursor}` (null on the last page). */
  list(tenantId: string, q: ShadowSessionListQuery): Promise<ShadowSessionPage> {
    const after = q.cursor === undefined ? undefined : decodeKeyset(q.cursor);
    const limit = pageLimit(q.limit, this.deps);
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const rows = await repo.listSessions(tx, { deviceId: q.device_id, level: q.level }, after, limit + 1);
      const page = rows.slice(0, limit);
      const stats = await repo.levelStats(tx, page.map((r) => r.id));
      const last = page.at(-1);
      return { sessions: page.map((r) => toOut(r, stats.get(r.id))), next_cursor: rows.length > limit && last ? encodeKeyset(last.createdAt, last.id) : null };
    });
  }

  /** One session with its current-level stats; 404 when unknown or another tenant's. */
  get(tenantId: string, id: string): Promise<ShadowSession> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const s = await repo.getSession(tx, id);
      if (!s) throw notFound('shadow session');
      return this.withStats(tx, s);
    });
  }

  /**
   * Record one human decision next to the agent's recommendation. `agreed` = the actions match
   * (gates.ts `actionsAgree`); `recorded_at` = now read after the session's share lock, never
   * before its level_since. `critical_miss: true` on an agreement is 400. A duplicate
   * `observation_id` in the session is 409; unknown session 404. A critical miss is audited
   * (`shadow_session.observation_recorded`); ordinary observations are not.
   */
  async record(tenantId: string, actor: string, id: string, input: RecordShadowDecisionRequest): Promise<ShadowObservation> {
    const observationId = text(input.observation_id, 'observation_id');
    const agentAction = text(input.agent_recommendation.action, 'agent_recommendation.action');
    const humanAction = text(input.human_decision.action, 'human_decision.action');
    const agreed = actionsAgree(agentAction, humanAction);
    const criticalMiss = input.critical_miss ?? false;
    if (criticalMiss && agreed) throw badRequest('critical_miss applies to a disagreement only: the human decision matches the agent recommendation');
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const s = await repo.getSession(tx, id, 'share');
      if (!s) throw notFound('shadow session');
      const now = atOrAfter(this.now(), s.levelSince);
      const row = await repo.insertObservation(tx, {
        id: randomUUID(),
        tenantId,
        sessionId: s.id,
        observationId,
        level: s.level,
        agentAction,
        agentConfidence: input.agent_recommendation.confidence,
        agentReasoning: input.agent_recommendation.reasoning ?? null,
        humanAction,
        humanNotes: input.human_decision.notes ?? null,
        agreed,
        criticalMiss,
        recordedBy: actor,
        recordedAt: now,
      });
      if (!row) throw conflict(`observation_id ${observationId} is already recorded in this session`);
      if (criticalMiss) {
        await appendAudit(tx, tenantId, {
          type: 'shadow_session.observation_recorded',
          actor,
          subject: s.id,
          data: { observation_id: observationId, level: s.level, critical_miss: true, device_id: s.deviceId },
        });
      }
      const stats = (await repo.levelStats(tx, [s.id])).get(s.id);
      return { observation_id: observationId, agreed, critical_miss: criticalMiss, level: s.level as ShadowLevel, recorded_at: now.toISOString(), stats: toStats(stats) };
    });
  }

  /** The contract §4.17 graduation check at the current time; 404 when unknown. */
  graduationCheck(tenantId: string, id: string): Promise<GraduationCheck> {
    const now = this.now();
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const s = await repo.getSession(tx, id);
      if (!s) throw notFound('shadow session');
      return this.check(tx, s, now);
    });
  }

  /**
   * Promote one level when every gate is met (contract §3.4). 409 at `autonomous`, 409 naming the
   * failing gates otherwise; on success level_since = now (read after the lock, never before the
   * current level_since), audited `shadow_session.graduated`.
   */
  async graduate(tenantId: string, actor: string, id: string): Promise<ShadowSession> {
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const s = await repo.getSession(tx, id, 'update');
      if (!s) throw notFound('shadow session');
      const now = atOrAfter(this.now(), s.levelSince);
      const c = await this.check(tx, s, now);
      if (c.next_level === null) throw conflict('the session is already autonomous, the highest level');
      if (!c.eligible) throw conflict(failingGates(c));
      const row = await repo.updateSession(tx, s.id, { level: c.next_level, levelSince: now, updatedAt: now });
      await appendAudit(tx, tenantId, {
        type: 'shadow_session.graduated',
        actor,
        subject: s.id,
        data: {
          device_id: s.deviceId,
          from: c.current_level,
          to: c.next_level,
          observations: c.gates.min_observations.actual,
          agreement_rate: c.gates.agreement_threshold.actual,
        },
      });
      return toOut(row);
    });
  }

  /**
   * Demote to `input.level`, strictly below the current level (400 otherwise, so always 400 at
   * `shadow`); level_since = now (as in {@link graduate}); audited `shadow_session.demoted` with the reason.
   */
  async demote(tenantId: string, actor: string, id: string, input: DemoteShadowSessionRequest): Promise<ShadowSession> {
    const reason = text(input.reason, 'reason');
    return withTenant(this.deps.db, tenantId, async (tx) => {
      const s = await repo.getSession(tx, id, 'update');
      if (!s) throw notFound('shadow session');
      const now = atOrAfter(this.now(), s.levelSince);
      const current = s.level as ShadowLevel;
      if (!isLower(input.level, current)) throw badRequest(`level must be below the current level ${current}`);
      const row = await repo.updateSession(tx, s.id, { level: input.level, levelSince: now, updatedAt: now });
      await appendAudit(tx, tenantId, {
        type: 'shadow_session.demoted',
        actor,
        subject: s.id,
        data: { device_id: s.deviceId, from: current, to: input.level, reason },
      });
      return toOut(row);
    });
  }

  private async withStats(tx: Tx, s: repo.SessionRow): Promise<ShadowSession> {
    return toOut(s, (await repo.levelStats(tx, [s.id])).get(s.id));
  }

  private async check(tx: Tx, s: repo.SessionRow, now: Date): Promise<GraduationCheck> {
    const stats = (await repo.levelStats(tx, [s.id])).get(s.id) ?? NO_STATS;
    const windowMisses = await repo.missesSince(tx, s.id, missWindowStart(now, s.criticalMissWindowHours));
    return checkGraduation(configOf(s), s.level as ShadowLevel, { ...stats, windowMisses });
  }
}
