/**
 * Shadow sessions over HTTP (contract §2.14, §3.4, §4.17; design §8.8, §8.20): the route matrix of
 * every route (success, 400, 401, 403 for a device token, 404 across tenants), the full flow
 * shadow -> supervised -> autonomous with fresh evidence per level, demotion, critical misses,
 * audit events, and two concurrent graduations promoting once. Time-dependent rules (the
 * critical-miss window edge, evidence reset at a level change, a clock lagging level_since) run through a second
 * ShadowService on the app's database with a controllable clock.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shadowObservations } from '../../src/db/schema/index.js';
import { ShadowService } from '../../src/modules/shadow/service.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const H = 3_600_000;
const BASE = '/api/v1/shadow/sessions';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
/** No credentials (an explicit value: `undefined` would select the default owner headers). */
const anon: Record<string, string> = {};

describe('shadow sessions', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let agent2: Agent;
  let other: Owner;
  let otherAgent: Agent;
  let seq = 0;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
    agent2 = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    otherAgent = await activeAgent(t, other);
  });
  afterAll(() => t.close());

  type Headers = Record<string, string>;
  const req = (method: 'GET' | 'POST', url: string, headers: Headers, payload?: unknown) =>
    t.request({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const create = (payload: Record<string, unknown>, who: Headers = owner.auth) => req('POST', BASE, who, payload);
  const newSession = async (config: Record<string, unknown> = {}, a: Agent = agent, who: Owner = owner) => {
    const res = await create({ device_id: a.deviceId, skill_name: `skill-${++seq}`, decision_class: 'refund', config }, who.auth);
    expect(res.status).toBe(201);
    return res.body as Record<string, any>;
  };
  const record = (id: string, payload: Record<string, unknown>, who: Headers = owner.auth) => req('POST', `${BASE}/${id}/record-human-decision`, who, payload);
  const observation = (agentAction: string, humanAction: string, extra: Record<string, unknown> = {}) => ({
    observation_id: `obs-${++seq}`,
    agent_recommendation: { action: agentAction, confidence: 0.8, reasoning: 'policy 4.2' },
    human_decision: { action: humanAction, notes: 'checked' },
    ...extra,
  });
  const recordOk = async (id: string, agentAction: string, humanAction: string, extra: Record<string, unknown> = {}) => {
    const res = await record(id, observation(agentAction, humanAction, extra));
    expect(res.status).toBe(201);
    return res.body as Record<string, any>;
  };
  const check = (id: string, who: Headers = owner.auth) => req('GET', `${BASE}/${id}/graduation-check`, who);
  const graduate = (id: string, who: Headers = owner.auth) => req('POST', `${BASE}/${id}/graduate`, who);
  const demote = (id: string, payload: Record<string, unknown>, who: Headers = owner.auth) => req('POST', `${BASE}/${id}/demote`, who, payload);
  const get = (id: string, who: Headers = owner.auth) => req('GET', `${BASE}/${id}`, who);
  const audit = async (type: string, subject: string) => {
    const res = await req('GET', `/api/v1/audit/events?type=${type}&subject=${subject}`, owner.auth);
    expect(res.status).toBe(200);
    return res.body.events as Record<string, any>[];
  };

  describe('POST /shadow/sessions', () => {
    it('creates a session at level shadow with the default config (201) and audits it', async () => {
      const before = Date.now();
      const res = await create({ device_id: agent.deviceId, skill_name: ' refunds ', decision_class: 'approve_refund' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        session_id: expect.any(String),
        device_id: agent.deviceId,
        skill_name: 'refunds',
        decision_class: 'approve_refund',
        config: { min_observations: 50, agreement_threshold: 0.9, critical_miss_window_hours: 168 },
        level: 'shadow',
        level_since: res.body.created_at,
        created_at: expect.any(String),
        stats: { observations: 0, agreed: 0, agreement_rate: 0, critical_misses: 0 },
      });
      expect(Date.parse(res.body.level_since)).toBeGreaterThanOrEqual(before);
      const events = await audit('shadow_session.created', res.body.session_id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ actor: owner.sub, data: { device_id: agent.deviceId, skill_name: 'refunds', decision_class: 'approve_refund' } });
    });

    it('takes a partial config; other values default', async () => {
      const s = await newSession({ min_observations: 5, critical_miss_window_hours: 0.5 });
      expect(s.config).toEqual({ min_observations: 5, agreement_threshold: 0.9, critical_miss_window_hours: 0.5 });
      const zero = await newSession({ agreement_threshold: 0 });
      expect(zero.config.agreement_threshold).toBe(0);
    });

    it('one agent holds several sessions, but only one per skill_name + decision_class (409)', async () => {
      const body = { device_id: agent.deviceId, skill_name: 'billing', decision_class: 'refund' };
      expect((await create(body)).status).toBe(201);
      const dup = await create({ ...body, skill_name: '  billing' });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toMatch(/already has shadow session/);
      expect((await create({ ...body, decision_class: 'chargeback' })).status).toBe(201);
      expect((await create({ ...body, device_id: agent2.deviceId })).status).toBe(201);
    });

    it('400 for bad input', async () => {
      const ok = { device_id: agent.deviceId, skill_name: 'x', decision_class: 'y' };
      const bad: Record<string, unknown>[] = [
        {},
        { ...ok, device_id: 'not-a-uuid' },
        { ...ok, skill_name: '' },
        { ...ok, skill_name: '   ' },
        { ...ok, decision_class: 'z'.repeat(201) },
        { ...ok, config: { min_observations: 0 } },
        { ...ok, config: { min_observations: 2.5 } },
        { ...ok, config: { agreement_threshold: 1.01 } },
        { ...ok, config: { agreement_threshold: -0.1 } },
        { ...ok, config: { critical_miss_window_hours: 0 } },
        { ...ok, config: { min_observation: 5 } },
        { ...ok, config: 'strict' },
      ];
      for (const body of bad) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.detail).toEqual(expect.any(String));
      }
    });

    it('400 for an owner device', async () => {
      const res = await create({ device_id: od.deviceId, skill_name: 'x', decision_class: 'y' });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/agent device/);
    });

    it('404 for another tenant’s agent or an unknown device', async () => {
      expect((await create({ device_id: otherAgent.deviceId, skill_name: 'x', decision_class: 'y' })).status).toBe(404);
      expect((await create({ device_id: UNKNOWN, skill_name: 'x', decision_class: 'y' })).status).toBe(404);
    });

    it('401 without authentication, 403 with a device token', async () => {
      const body = { device_id: agent.deviceId, skill_name: 'x', decision_class: 'y' };
      expect((await create(body, anon)).status).toBe(401);
      expect((await create(body, agent.auth)).status).toBe(403);
    });
  });

  describe('GET /shadow/sessions and /shadow/sessions/{id}', () => {
    it('lists the tenant’s sessions oldest first, filtered by device_id and level, paginated', async () => {
      const a = await newSession({}, agent2);
      const b = await newSession({ min_observations: 1, agreement_threshold: 0 }, agent2);
      await recordOk(b.session_id, 'approve', 'approve');
      expect((await graduate(b.session_id)).status).toBe(200);

      const all = await req('GET', `${BASE}?device_id=${agent2.deviceId}`, owner.auth);
      expect(all.status).toBe(200);
      const ids = all.body.sessions.map((s: any) => s.session_id);
      expect(ids.slice(-2)).toEqual([a.session_id, b.session_id]);
      expect(all.body.sessions.every((s: any) => s.device_id === agent2.deviceId)).toBe(true);
      expect(all.body.next_cursor).toBeNull();

      const supervised = await req('GET', `${BASE}?device_id=${agent2.deviceId}&level=supervised`, owner.auth);
      expect(supervised.body.sessions.map((s: any) => s.session_id)).toEqual([b.session_id]);
      expect(supervised.body.sessions[0].stats).toEqual({ observations: 0, agreed: 0, agreement_rate: 0, critical_misses: 0 });

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await req('GET', `${BASE}?device_id=${agent2.deviceId}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, owner.auth);
        expect(page.status).toBe(200);
        expect(page.body.sessions.length).toBeLessThanOrEqual(1);
        seen.push(...page.body.sessions.map((s: any) => s.session_id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(ids);
    });

    it('the list carries current-level stats', async () => {
      const s = await newSession({}, agent2);
      await recordOk(s.session_id, 'approve', 'approve');
      await recordOk(s.session_id, 'approve', 'deny', { critical_miss: true });
      const list = await req('GET', `${BASE}?device_id=${agent2.deviceId}&level=shadow`, owner.auth);
      const mine = list.body.sessions.find((x: any) => x.session_id === s.session_id);
      expect(mine.stats).toEqual({ observations: 2, agreed: 1, agreement_rate: 0.5, critical_misses: 1 });
    });

    it('another tenant sees none of them', async () => {
      await newSession();
      const res = await req('GET', BASE, other.auth);
      expect(res.status).toBe(200);
      expect(res.body.sessions).toEqual([]);
      const mine = await req('GET', `${BASE}?device_id=${agent.deviceId}`, other.auth);
      expect(mine.body.sessions).toEqual([]);
    });

    it('400 for bad filters or cursor, 401 without auth', async () => {
      for (const q of ['level=expert', 'device_id=nope', 'cursor=garbage', 'limit=0', 'limit=201']) {
        expect((await req('GET', `${BASE}?${q}`, owner.auth)).status, q).toBe(400);
      }
      expect((await req('GET', BASE, anon)).status).toBe(401);
      expect((await req('GET', BASE, agent.auth)).status).toBe(403);
    });

    it('GET one: 200, 404 across tenants or unknown, 400 malformed id, 401', async () => {
      const s = await newSession();
      const res = await get(s.session_id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(s);
      expect((await get(s.session_id, other.auth)).status).toBe(404);
      expect((await get(UNKNOWN)).status).toBe(404);
      expect((await get('nope')).status).toBe(400);
      expect((await get(s.session_id, anon)).status).toBe(401);
    });
  });

  describe('POST /shadow/sessions/{id}/record-human-decision', () => {
    it('compares actions (trimmed, case-insensitive) and answers 201 with the level stats', async () => {
      const s = await newSession();
      const r1 = await recordOk(s.session_id, 'Approve_Refund', '  approve_refund ');
      expect(r1).toEqual({
        observation_id: expect.stringMatching(/^obs-/),
        agreed: true,
        critical_miss: false,
        level: 'shadow',
        recorded_at: expect.any(String),
        stats: { observations: 1, agreed: 1, agreement_rate: 1, critical_misses: 0 },
      });
      const r2 = await recordOk(s.session_id, 'approve_refund', 'deny_refund');
      expect(r2).toMatchObject({ agreed: false, critical_miss: false, stats: { observations: 2, agreed: 1, agreement_rate: 0.5, critical_misses: 0 } });
      const r3 = await recordOk(s.session_id, 'approve_refund', 'escalate', { critical_miss: true });
      expect(r3).toMatchObject({ agreed: false, critical_miss: true, stats: { observations: 3, agreed: 1, critical_misses: 1 } });
      expect((await get(s.session_id)).body.stats).toEqual(r3.stats);
    });

    it('reasoning and notes are optional', async () => {
      const s = await newSession();
      const res = await record(s.session_id, { observation_id: 'plain', agent_recommendation: { action: 'a', confidence: 0 }, human_decision: { action: 'a' } });
      expect(res.status).toBe(201);
      expect(res.body.agreed).toBe(true);
    });

    it('audits critical misses only', async () => {
      const s = await newSession();
      await recordOk(s.session_id, 'a', 'a');
      await recordOk(s.session_id, 'a', 'b');
      const miss = await recordOk(s.session_id, 'a', 'c', { critical_miss: true });
      const events = await audit('shadow_session.observation_recorded', s.session_id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ actor: owner.sub, data: { observation_id: miss.observation_id, level: 'shadow', critical_miss: true } });
    });

    it('409 for an observation_id already recorded in the session (another session may reuse it)', async () => {
      const s = await newSession();
      const body = observation('a', 'a');
      expect((await record(s.session_id, body)).status).toBe(201);
      const dup = await record(s.session_id, { ...body, human_decision: { action: 'b' } });
      expect(dup.status).toBe(409);
      expect((await get(s.session_id)).body.stats.observations).toBe(1);
      const s2 = await newSession();
      expect((await record(s2.session_id, body)).status).toBe(201);
    });

    it('400 for a critical miss on an agreement, and for bad input', async () => {
      const s = await newSession();
      const agreeMiss = await record(s.session_id, observation('approve', ' APPROVE', { critical_miss: true }));
      expect(agreeMiss.status).toBe(400);
      expect(agreeMiss.body.detail).toMatch(/critical_miss/);
      const ok = observation('a', 'b');
      const bad: Record<string, unknown>[] = [
        {},
        { ...ok, observation_id: '' },
        { ...ok, observation_id: '  ' },
        { ...ok, agent_recommendation: { action: 'a' } },
        { ...ok, agent_recommendation: { action: 'a', confidence: 1.5 } },
        { ...ok, agent_recommendation: { action: 'a', confidence: -0.01 } },
        { ...ok, agent_recommendation: { action: '   ', confidence: 0.5 } },
        { ...ok, human_decision: {} },
        { ...ok, human_decision: undefined },
        { ...ok, critical_miss: 'maybe' },
      ];
      for (const body of bad) expect((await record(s.session_id, body)).status, JSON.stringify(body)).toBe(400);
      expect((await get(s.session_id)).body.stats.observations).toBe(0);
    });

    it('404 across tenants or unknown, 401 without auth, 403 with a device token', async () => {
      const s = await newSession();
      expect((await record(s.session_id, observation('a', 'a'), other.auth)).status).toBe(404);
      expect((await record(UNKNOWN, observation('a', 'a'))).status).toBe(404);
      expect((await record(s.session_id, observation('a', 'a'), anon)).status).toBe(401);
      expect((await record(s.session_id, observation('a', 'a'), agent.auth)).status).toBe(403);
      expect((await get(s.session_id)).body.stats.observations).toBe(0);
    });
  });

  describe('graduation-check, graduate and demote', () => {
    it('graduation-check answers exactly the contract §4.17 shape', async () => {
      const s = await newSession({ min_observations: 3, agreement_threshold: 0.6, critical_miss_window_hours: 24 });
      await recordOk(s.session_id, 'a', 'a');
      await recordOk(s.session_id, 'a', 'b');
      const res = await check(s.session_id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        eligible: false,
        current_level: 'shadow',
        next_level: 'supervised',
        gates: {
          min_observations: { required: 3, actual: 2, met: false },
          agreement_threshold: { required: 0.6, actual: 0.5, met: false },
          critical_miss_window: { window_hours: 24, misses: 0, met: true },
        },
      });
    });

    it('full flow: shadow -> supervised -> autonomous, fresh evidence per level, then demotion', async () => {
      const s = await newSession({ min_observations: 3, agreement_threshold: 0.6 });
      const id = s.session_id as string;

      // shadow: 2 of 3 agreed = 0.667 >= 0.6
      await recordOk(id, 'approve', 'approve');
      await recordOk(id, 'approve', 'deny');
      let c = (await check(id)).body;
      expect(c.gates.min_observations).toEqual({ required: 3, actual: 2, met: false });
      const early = await graduate(id);
      expect(early.status).toBe(409);
      expect(early.body.detail).toMatch(/min_observations \(2 of 3 required\)/);
      await recordOk(id, 'deny', 'Deny');
      c = (await check(id)).body;
      expect(c).toMatchObject({ eligible: true, current_level: 'shadow', next_level: 'supervised' });
      expect(c.gates.agreement_threshold.actual).toBeCloseTo(2 / 3, 12);

      const g1 = await graduate(id);
      expect(g1.status).toBe(200);
      expect(g1.body).toMatchObject({ session_id: id, level: 'supervised', stats: { observations: 0, agreed: 0, agreement_rate: 0, critical_misses: 0 } });
      expect(Date.parse(g1.body.level_since)).toBeGreaterThan(Date.parse(s.level_since) - 1);

      // supervised: the shadow evidence does not count
      c = (await check(id)).body;
      expect(c).toMatchObject({ eligible: false, current_level: 'supervised', next_level: 'autonomous' });
      expect(c.gates.min_observations.actual).toBe(0);
      expect((await graduate(id)).status).toBe(409);
      const r = await recordOk(id, 'x', 'x');
      expect(r.level).toBe('supervised');
      await recordOk(id, 'x', 'x');
      await recordOk(id, 'x', 'x');
      expect((await check(id)).body.eligible).toBe(true);
      const g2 = await graduate(id);
      expect(g2.status).toBe(200);
      expect(g2.body.level).toBe('autonomous');

      // autonomous: nothing above
      await recordOk(id, 'y', 'y');
      await recordOk(id, 'y', 'y');
      await recordOk(id, 'y', 'y');
      c = (await check(id)).body;
      expect(c).toMatchObject({ eligible: false, current_level: 'autonomous', next_level: null });
      expect(c.gates.min_observations.met).toBe(true);
      const top = await graduate(id);
      expect(top.status).toBe(409);
      expect(top.body.detail).toMatch(/already autonomous/);

      // demote to shadow
      const d = await demote(id, { level: 'shadow', reason: 'wrong refunds last week' });
      expect(d.status).toBe(200);
      expect(d.body).toMatchObject({ level: 'shadow', stats: { observations: 0 } });
      expect(Date.parse(d.body.level_since)).toBeGreaterThanOrEqual(Date.parse(g2.body.level_since));
      expect((await check(id)).body).toMatchObject({ eligible: false, current_level: 'shadow', next_level: 'supervised', gates: { min_observations: { actual: 0 } } });

      const graduated = await audit('shadow_session.graduated', id);
      expect(graduated.map((e) => [e.data.from, e.data.to])).toEqual([
        ['supervised', 'autonomous'],
        ['shadow', 'supervised'],
      ]);
      const demoted = await audit('shadow_session.demoted', id);
      expect(demoted).toHaveLength(1);
      expect(demoted[0]).toMatchObject({ actor: owner.sub, data: { from: 'autonomous', to: 'shadow', reason: 'wrong refunds last week' } });
    });

    it('a critical miss blocks graduation, and demoting does not wipe it while the window runs', async () => {
      const s = await newSession({ min_observations: 1, agreement_threshold: 0 });
      const id = s.session_id as string;
      await recordOk(id, 'a', 'a');
      expect((await graduate(id)).status).toBe(200);
      await recordOk(id, 'a', 'a');
      await recordOk(id, 'a', 'b', { critical_miss: true });
      let c = (await check(id)).body;
      expect(c.gates.critical_miss_window).toEqual({ window_hours: 168, misses: 1, met: false });
      const refused = await graduate(id);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/critical_miss_window \(1 critical miss\(es\) in the last 168 h\)/);
      expect((await get(id)).body.level).toBe('supervised');

      expect((await demote(id, { level: 'shadow', reason: 'critical miss' })).status).toBe(200);
      await recordOk(id, 'a', 'a');
      c = (await check(id)).body;
      expect(c.gates.min_observations).toMatchObject({ actual: 1, met: true });
      expect(c.gates.critical_miss_window).toMatchObject({ misses: 1, met: false });
      expect(c.eligible).toBe(false);
    });

    it('graduate: 404 across tenants or unknown, 401 without auth, 403 with a device token', async () => {
      const s = await newSession({ min_observations: 1, agreement_threshold: 0 });
      await recordOk(s.session_id, 'a', 'a');
      expect((await graduate(s.session_id, other.auth)).status).toBe(404);
      expect((await graduate(UNKNOWN)).status).toBe(404);
      expect((await graduate('nope')).status).toBe(400);
      expect((await graduate(s.session_id, anon)).status).toBe(401);
      expect((await graduate(s.session_id, agent.auth)).status).toBe(403);
      expect((await get(s.session_id)).body.level).toBe('shadow');
    });

    it('graduation-check: 404 across tenants or unknown, 400 malformed id, 401 without auth', async () => {
      const s = await newSession();
      expect((await check(s.session_id, other.auth)).status).toBe(404);
      expect((await check(UNKNOWN)).status).toBe(404);
      expect((await check('nope')).status).toBe(400);
      expect((await check(s.session_id, anon)).status).toBe(401);
    });

    it('demote: only to a lower level (400 otherwise), valid reason, 404 across tenants, 401', async () => {
      const s = await newSession({ min_observations: 1, agreement_threshold: 0 });
      const id = s.session_id as string;
      const atShadow = await demote(id, { level: 'shadow', reason: 'x' });
      expect(atShadow.status).toBe(400);
      expect(atShadow.body.detail).toMatch(/below the current level shadow/);
      await recordOk(id, 'a', 'a');
      expect((await graduate(id)).status).toBe(200);
      for (const body of [
        { level: 'supervised', reason: 'same' },
        { level: 'autonomous', reason: 'up' },
        { level: 'expert', reason: 'x' },
        { level: 'shadow' },
        { level: 'shadow', reason: '' },
        { level: 'shadow', reason: '   ' },
        { level: 'shadow', reason: 'r'.repeat(501) },
      ]) {
        expect((await demote(id, body)).status, JSON.stringify(body)).toBe(400);
      }
      expect((await demote(id, { level: 'shadow', reason: 'x' }, other.auth)).status).toBe(404);
      expect((await demote(UNKNOWN, { level: 'shadow', reason: 'x' })).status).toBe(404);
      expect((await demote(id, { level: 'shadow', reason: 'x' }, anon)).status).toBe(401);
      expect((await demote(id, { level: 'shadow', reason: 'x' }, agent.auth)).status).toBe(403);
      expect((await get(id)).body.level).toBe('supervised');
      const ok = await demote(id, { level: 'shadow', reason: 'r'.repeat(500) });
      expect(ok.status).toBe(200);
      expect(ok.body.level).toBe('shadow');
    });

    it('concurrent graduations promote once', async () => {
      for (let round = 0; round < 3; round++) {
        const s = await newSession({ min_observations: 2, agreement_threshold: 0.5 });
        await recordOk(s.session_id, 'a', 'a');
        await recordOk(s.session_id, 'a', 'a');
        const results = await Promise.all(Array.from({ length: 5 }, () => graduate(s.session_id)));
        expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
        const final = await get(s.session_id);
        expect(final.body.level).toBe('supervised');
        expect(await audit('shadow_session.graduated', s.session_id)).toHaveLength(1);
      }
    });
  });

  describe('time rules (controllable clock)', () => {
    let clock: Date;
    let svc: ShadowService;
    const tick = (ms: number) => (clock = new Date(clock.getTime() + ms));
    const rec = (id: string, agentAction: string, humanAction: string, criticalMiss = false) =>
      svc.record(owner.tenantId, owner.sub, id, {
        observation_id: `clk-${++seq}`,
        agent_recommendation: { action: agentAction, confidence: 0.5 },
        human_decision: { action: humanAction },
        critical_miss: criticalMiss,
      });

    beforeAll(() => {
      clock = new Date('2030-01-01T00:00:00.000Z');
      svc = new ShadowService({ db: t.app.parley.database.db, listDefault: 50, listMax: 200, clock: () => clock });
    });

    it('a critical miss exactly at the window edge still blocks; one millisecond later it no longer does', async () => {
      const s = await svc.create(owner.tenantId, owner.sub, { device_id: agent.deviceId, skill_name: `clock-${++seq}`, decision_class: 'c', config: { min_observations: 2, agreement_threshold: 0.5, critical_miss_window_hours: 24 } });
      await rec(s.session_id, 'a', 'a');
      const missAt = tick(1000);
      await rec(s.session_id, 'a', 'b', true);
      clock = new Date(missAt.getTime() + 24 * H);
      let c = await svc.graduationCheck(owner.tenantId, s.session_id);
      expect(c.gates).toEqual({
        min_observations: { required: 2, actual: 2, met: true },
        agreement_threshold: { required: 0.5, actual: 0.5, met: true },
        critical_miss_window: { window_hours: 24, misses: 1, met: false },
      });
      await expect(svc.graduate(owner.tenantId, owner.sub, s.session_id)).rejects.toMatchObject({ status: 409 });
      tick(1);
      c = await svc.graduationCheck(owner.tenantId, s.session_id);
      expect(c.gates.critical_miss_window).toEqual({ window_hours: 24, misses: 0, met: true });
      expect(c.eligible).toBe(true);
      // The HTTP route (real time, years earlier than the fake clock) sees the miss as in the future: still counted.
      expect((await check(s.session_id)).body.gates.critical_miss_window.misses).toBe(1);
      const g = await svc.graduate(owner.tenantId, owner.sub, s.session_id);
      expect(g).toMatchObject({ level: 'supervised', level_since: clock.toISOString() });
    });

    it('observations from before the last level change do not count; one at the same instant does', async () => {
      const s = await svc.create(owner.tenantId, owner.sub, { device_id: agent.deviceId, skill_name: `clock-${++seq}`, decision_class: 'c', config: { min_observations: 2, agreement_threshold: 1 } });
      tick(H);
      await rec(s.session_id, 'a', 'a');
      tick(H);
      await rec(s.session_id, 'a', 'a');
      tick(H);
      const up = await svc.graduate(owner.tenantId, owner.sub, s.session_id);
      expect(up.level_since).toBe(clock.toISOString());
      let c = await svc.graduationCheck(owner.tenantId, s.session_id);
      expect(c.gates.min_observations).toEqual({ required: 2, actual: 0, met: false });
      expect(c.gates.agreement_threshold).toEqual({ required: 1, actual: 0, met: false });
      const same = await rec(s.session_id, 'a', 'a'); // same millisecond as level_since
      expect(same).toMatchObject({ level: 'supervised', stats: { observations: 1 } });
      tick(1);
      await rec(s.session_id, 'b', 'b');
      c = await svc.graduationCheck(owner.tenantId, s.session_id);
      expect(c).toMatchObject({ eligible: true, current_level: 'supervised', next_level: 'autonomous' });

      // Demotion resets again; the supervised observations are not shadow evidence.
      tick(H);
      await svc.demote(owner.tenantId, owner.sub, s.session_id, { level: 'shadow', reason: 'reset' });
      c = await svc.graduationCheck(owner.tenantId, s.session_id);
      expect(c.gates.min_observations.actual).toBe(0);
      expect((await svc.get(owner.tenantId, s.session_id)).stats).toEqual({ observations: 0, agreed: 0, agreement_rate: 0, critical_misses: 0 });
    });

    it('a clock read before a level change (behind level_since) never dates evidence before the level nor moves level_since back', async () => {
      const s = await svc.create(owner.tenantId, owner.sub, { device_id: agent.deviceId, skill_name: `clock-${++seq}`, decision_class: 'c', config: { min_observations: 1, agreement_threshold: 1 } });
      tick(H);
      await rec(s.session_id, 'a', 'a');
      tick(H);
      const up = await svc.graduate(owner.tenantId, owner.sub, s.session_id);
      const levelSince = up.level_since;
      // A record whose clock lags the graduation that committed while it waited for its lock:
      // stored at the new level, dated at level_since (not before it), so it counts.
      tick(-30 * 60_000);
      const late = await rec(s.session_id, 'a', 'a');
      expect(late).toMatchObject({ level: 'supervised', recorded_at: levelSince, stats: { observations: 1, agreed: 1 } });
      const [row] = await t.app.parley.database.db.select().from(shadowObservations).where(eq(shadowObservations.observationId, `clk-${seq}`));
      expect(row!.recordedAt.toISOString()).toBe(levelSince);
      expect((await svc.graduationCheck(owner.tenantId, s.session_id)).gates.min_observations).toEqual({ required: 1, actual: 1, met: true });
      // Graduate and demote with the lagging clock: level_since never moves backwards.
      const top = await svc.graduate(owner.tenantId, owner.sub, s.session_id);
      expect(top).toMatchObject({ level: 'autonomous', level_since: levelSince });
      tick(-H);
      const down = await svc.demote(owner.tenantId, owner.sub, s.session_id, { level: 'shadow', reason: 'lagging clock' });
      expect(down).toMatchObject({ level: 'shadow', level_since: levelSince });
      // Shadow evidence from before the first graduation still does not count after the demotion.
      expect((await svc.get(owner.tenantId, s.session_id)).stats.observations).toBe(0);
    });
  });
});
