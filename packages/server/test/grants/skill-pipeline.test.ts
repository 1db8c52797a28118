/**
 * The skill policy pipeline (design §8.6; contract §4.19 svc_check_policy / svc_delegate_skill, §7):
 * one table case per deciding stage (identity, trust_floor, grant, rate, rules), presented SPTs,
 * delegation (target identity and trust floor, below-floor rejection audited, cross-tenant
 * targets), the route matrix of `POST /skills/check`, and the `trust_score_below` policy condition
 * (schema, engine, and PolicyService.decide filling the sender's score for message paths).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { compilePolicy, evaluate, type EvaluationContext } from '../../src/modules/policies/engine.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { skillFixtures, type Subject } from './skill-fixtures.js';

const CHECKS_PER_MIN = 3;

describe('skill policy pipeline', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;

  const db = () => t.app.parley.database.db;
  const { addr, setIdentity, skillName, subject, policy, grant } = skillFixtures(() => ({ t, owner: a }), 'skp');
  const check = (headers: Record<string, string> | undefined, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v1/skills/check', ...(headers ? { headers } : {}), payload });
  const audits = async (type: string, deviceId: string, owner: Owner = a) =>
    (await t.request({ method: 'GET', url: `/api/v1/audit/events?type=${type}&subject=${deviceId}`, headers: owner.auth })).body.events as any[];

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', SKILL_CHECKS_PER_MIN: String(CHECKS_PER_MIN) } });
    a = await newOwner(t, 'Pipeline A');
    b = await newOwner(t, 'Pipeline B');
  });
  afterAll(() => t.close());

  describe('one case per deciding stage', () => {
    const cases: {
      name: string;
      setup: () => Promise<{ s: { agent: Agent }; skill: string; extra?: Record<string, unknown> }>;
      allowed: boolean;
      decided: string;
      reason: RegExp;
      stages: number;
    }[] = [
      {
        name: 'identity: an agent without a hub identity',
        setup: async () => ({ s: { agent: await activeAgent(t, a) }, skill: skillName('id') }),
        allowed: false,
        decided: 'identity',
        reason: /no hub identity/,
        stages: 1,
      },
      {
        name: 'trust_floor: a skill-scoped trust_score_below block, score none yet (0.5)',
        setup: async () => {
          const skill = skillName('floor');
          await policy({ scope: { skill }, conditions: { trust_score_below: 0.6 }, action: 'block' });
          return { s: await subject(), skill };
        },
        allowed: false,
        decided: 'trust_floor',
        reason: /below the trust floor .*trust score none yet/,
        stages: 2,
      },
      {
        name: 'trust_floor: a skill-scoped sender_tier_below hold',
        setup: async () => {
          const skill = skillName('tierfloor');
          await policy({ scope: { skill }, conditions: { sender_tier_below: 'certified' }, action: 'hold' });
          return { s: await subject(a, 'unverified', 0.9), skill };
        },
        allowed: false,
        decided: 'trust_floor',
        reason: /\(hold\): trust score 0\.90, tier unverified/,
        stages: 2,
      },
      {
        name: 'grant: no active SPT',
        setup: async () => ({ s: await subject(), skill: skillName('nogrant') }),
        allowed: false,
        decided: 'grant',
        reason: /no active SPT/,
        stages: 3,
      },
      {
        name: 'rate: more than SKILL_CHECKS_PER_MIN checks',
        setup: async () => {
          const s = await subject();
          const skill = skillName('rate');
          await grant(s, skill);
          for (let i = 0; i < CHECKS_PER_MIN; i++) expect((await check(s.agent.auth, { skill })).body.allowed).toBe(true);
          return { s, skill };
        },
        allowed: false,
        decided: 'rate',
        reason: new RegExp(`more than ${CHECKS_PER_MIN} checks .*retry in \\d+ s`),
        stages: 4,
      },
      {
        name: 'rules: a block policy',
        setup: async () => {
          const s = await subject();
          const skill = skillName('block');
          await grant(s, skill);
          await policy({ scope: { skill }, conditions: { sender_kinds: ['agent'] }, action: 'block' });
          return { s, skill };
        },
        allowed: false,
        decided: 'rules',
        reason: /^blocked by policy/,
        stages: 6,
      },
      {
        name: 'rules: a hold policy',
        setup: async () => {
          const s = await subject();
          const skill = skillName('hold');
          await grant(s, skill);
          await policy({ scope: { skill }, conditions: { message_types: ['skill_invocation'] }, action: 'hold' });
          return { s, skill };
        },
        allowed: false,
        decided: 'rules',
        reason: /^requires owner approval/,
        stages: 6,
      },
      {
        name: 'rules: a notify policy allows',
        setup: async () => {
          const s = await subject();
          const skill = skillName('notify');
          await grant(s, skill);
          await policy({ scope: { skill }, conditions: {}, action: 'notify' });
          return { s, skill };
        },
        allowed: true,
        decided: 'rules',
        reason: /notifies the owners/,
        stages: 6,
      },
      {
        name: 'rules: nothing matches, a floor that is met, allowed by default',
        setup: async () => {
          const skill = skillName('ok');
          await policy({ scope: { skill }, conditions: { trust_score_below: 0.6 }, action: 'block' });
          const s = await subject(a, 'certified', 0.75);
          await grant(s, skill);
          return { s, skill, extra: { tool: 'search', model: 'm1', args: { q: 'x' } } };
        },
        allowed: true,
        decided: 'rules',
        reason: /no policy matched: allowed by default/,
        stages: 6,
      },
    ];

    for (const c of cases) {
      it(c.name, async () => {
        const { s, skill, extra } = await c.setup();
        const res = await check(s.agent.auth, { skill, ...extra });
        expect(res.status).toBe(200);
        expect(res.body.allowed).toBe(c.allowed);
        expect(res.body.decided_by).toBe(c.decided);
        expect(res.body.reason).toMatch(c.reason);
        expect(res.body.stages.map((x: any) => x.stage)).toEqual(['identity', 'trust_floor', 'grant', 'rate', 'budget', 'rules'].slice(0, c.stages));
        expect(res.body.stages.slice(0, -1).every((x: any) => x.passed)).toBe(true);
        expect(res.body.stages.at(-1)).toEqual({ stage: c.decided, passed: c.allowed, detail: res.body.reason });
        const denied = await audits('skill.check_denied', s.agent.deviceId);
        if (c.allowed) expect(denied).toHaveLength(0);
        else {
          expect(denied).toHaveLength(1);
          expect(denied[0]).toMatchObject({ actor: `device:${s.agent.deviceId}`, data: { skill, stage: c.decided, reason: res.body.reason } });
        }
      });
    }
  });

  describe('presented SPTs', () => {
    it('a valid own SPT passes; another agent’s, another skill’s, a tampered or revoked one fails the grant stage', async () => {
      const s = await subject();
      const other = await subject();
      const skill = skillName('spt');
      const own = await grant(s, skill);
      const ok = await check(s.agent.auth, { skill, spt: own.token });
      expect(ok.body.allowed).toBe(true);
      expect(ok.body.stages[2]).toMatchObject({ stage: 'grant', passed: true, detail: expect.stringMatching(/^presented SPT/) });

      const theirs = await grant(other, skill);
      const foreign = await check(s.agent.auth, { skill, spt: theirs.token });
      expect(foreign.body).toMatchObject({ allowed: false, decided_by: 'grant', reason: expect.stringMatching(/issued to did:hub:/) });
      const wrongSkill = await check(s.agent.auth, { skill: skillName('else'), spt: own.token });
      expect(wrongSkill.body).toMatchObject({ allowed: false, decided_by: 'grant', reason: expect.stringMatching(/is for skill/) });
      const [h, p, sig] = own.token.split('.');
      // One character inside the signature changed (its last characters carry padding bits).
      const tampered = `${h}.${p}.${sig!.slice(0, 10)}${sig![10] === 'A' ? 'B' : 'A'}${sig!.slice(11)}`;
      const bad = await check(s.agent.auth, { skill, spt: tampered });
      expect(bad.body).toMatchObject({ allowed: false, decided_by: 'grant', reason: expect.stringMatching(/signature/) });
      expect((await t.request({ method: 'POST', url: `/api/v1/grants/${own.jti}/revoke`, headers: a.auth })).status).toBe(200);
      const revoked = await check(s.agent.auth, { skill, spt: own.token });
      expect(revoked.body).toMatchObject({ allowed: false, decided_by: 'grant', reason: expect.stringMatching(/revoked/) });
    });
  });

  describe('delegation', () => {
    let caller: Subject;
    let skill: string;
    beforeAll(async () => {
      skill = skillName('delegate');
      await policy({ scope: { skill }, conditions: { trust_score_below: 0.6 }, action: 'block' });
      caller = await subject(a, 'certified', 0.9);
      await grant(caller, skill);
    });

    it('a target below the floor is rejected and audited as skill.delegation_rejected', async () => {
      const low = await subject(a, 'certified', 0.3);
      const res = await check(caller.agent.auth, { skill, target: low.address, tool: 'translate_text' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ allowed: false, decided_by: 'trust_floor' });
      expect(res.body.reason).toMatch(new RegExp(`did:hub:${low.address} is below the trust floor.*trust score 0\\.30`));
      expect(res.body.stages[0].detail).toContain(`did:hub:${low.address}`);
      const events = await audits('skill.delegation_rejected', caller.agent.deviceId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ actor: `device:${caller.agent.deviceId}`, data: { skill, stage: 'trust_floor', target: `did:hub:${low.address}`, tool: 'translate_text' } });
      // The caller itself is above the floor: only the target was judged.
      expect((await check(caller.agent.auth, { skill })).body.allowed).toBe(true);
    });

    it('a target above the floor (address or did:hub, any case) passes; grant, rate and rules are the caller’s', async () => {
      const high = await subject(a, 'unverified', 0.95);
      const res = await check(caller.agent.auth, { skill, target: `DID:HUB:${high.address.toUpperCase()}` });
      expect(res.body).toMatchObject({ allowed: true, decided_by: 'rules' });
      expect(res.body.stages[1].detail).toContain('0.95');
      const noGrant = await subject(a, 'certified', 0.9);
      const denied = await check(noGrant.agent.auth, { skill, target: high.address });
      expect(denied.body).toMatchObject({ allowed: false, decided_by: 'grant' });
      expect(await audits('skill.check_denied', noGrant.agent.deviceId)).toHaveLength(1);
      expect(await audits('skill.delegation_rejected', noGrant.agent.deviceId)).toHaveLength(0);
    });

    it('targets in another tenant are judged there (RLS scope switched); unknown or revoked targets fail identity, another tenant’s with a generic detail', async () => {
      const far = await subject(b, 'enterprise', 0.2);
      const rejected = await check(caller.agent.auth, { skill, target: far.address });
      expect(rejected.body).toMatchObject({ allowed: false, decided_by: 'trust_floor' });
      await setIdentity(far.address, { trustScore: 0.85 });
      expect((await check(caller.agent.auth, { skill, target: far.address })).body.allowed).toBe(true);

      const unknown = await check(caller.agent.auth, { skill, target: addr() });
      expect(unknown.body).toMatchObject({ allowed: false, decided_by: 'identity', reason: expect.stringMatching(/no agent has the hub address/) });
      const gone = await subject(a, 'certified', 0.9);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${gone.agent.deviceId}/revoke`, headers: a.auth })).status).toBe(200);
      const revoked = await check(caller.agent.auth, { skill, target: gone.address });
      expect(revoked.body).toMatchObject({ allowed: false, decided_by: 'identity', reason: expect.stringMatching(/REVOKED/) });
      const near = await subject(a, 'certified', 0.9);
      await setIdentity(near.address, { status: 'suspended' });
      const nearSuspended = await check(caller.agent.auth, { skill, target: near.address });
      expect(nearSuspended.body).toMatchObject({ allowed: false, decided_by: 'identity', reason: expect.stringMatching(/suspended/) });

      // Another tenant's target: neither its identity state nor its device state leaks.
      await setIdentity(far.address, { status: 'suspended' });
      const suspended = await check(caller.agent.auth, { skill, target: far.address });
      expect(suspended.body).toMatchObject({ allowed: false, decided_by: 'identity', reason: `the target agent did:hub:${far.address} is not active` });
      const farGone = await subject(b, 'certified', 0.9);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${farGone.agent.deviceId}/revoke`, headers: b.auth })).status).toBe(200);
      const farRevoked = await check(caller.agent.auth, { skill, target: farGone.address });
      expect(farRevoked.body).toMatchObject({ allowed: false, decided_by: 'identity', reason: `the target agent did:hub:${farGone.address} is not active` });
      expect(JSON.stringify(farRevoked.body)).not.toMatch(/REVOKED|deleted|bound/);
      const denied = await audits('skill.check_denied', caller.agent.deviceId);
      expect(denied.some((e) => e.data.reason === `the target agent did:hub:${farGone.address} is not active`)).toBe(true);
    });

    it('the caller as target, or a malformed target, is 400', async () => {
      expect((await check(caller.agent.auth, { skill, target: caller.address })).status).toBe(400);
      for (const target of ['a', 'did:hub:', 'did:web:example.com', '-bad-', 'x'.repeat(129)]) {
        const res = await check(caller.agent.auth, { skill, target });
        expect(res.status, target).toBe(400);
      }
    });
  });

  describe('POST /skills/check route matrix', () => {
    it('owner on behalf (device_id), 400 bad input, 401, 403/404 across tenants', async () => {
      const s = await subject();
      const skill = skillName('matrix');
      await grant(s, skill);
      const byOwner = await check(a.auth, { skill, device_id: s.agent.deviceId });
      expect(byOwner.status).toBe(200);
      expect(byOwner.body.allowed).toBe(true);
      const od = await registerOwnerDevice(t, a);
      const bad: Record<string, unknown>[] = [{}, { skill: '' }, { skill: 'x'.repeat(101) }, { skill, device_id: 'nope' }, { skill, spt: '' }, { skill, device_id: od.deviceId }];
      for (const payload of bad) expect((await check(a.auth, payload)).status, JSON.stringify(payload)).toBe(400);
      expect((await check(a.auth, { skill })).status).toBe(400);
      expect((await check(undefined, { skill })).status).toBe(401);
      const foreign = await subject(b);
      expect((await check(a.auth, { skill, device_id: foreign.agent.deviceId })).status).toBe(404);
      expect((await check(s.agent.auth, { skill, device_id: foreign.agent.deviceId })).status).toBe(403);
      expect((await check(b.auth, { skill, device_id: s.agent.deviceId })).status).toBe(404);
    });
  });

  describe('trust_score_below condition', () => {
    it('is accepted by POST /policies (0..1); out of range or of the wrong type is 400; unknown keys still 400', async () => {
      await policy({ scope: { skill: skillName('c') }, conditions: { trust_score_below: 0.5 }, action: 'hold' });
      for (const conditions of [{ trust_score_below: 1.5 }, { trust_score_below: -0.1 }, { trust_score_below: 'high' }, { trust_score_above: 0.5 }]) {
        const res = await t.request({ method: 'POST', url: '/api/v1/policies', headers: a.auth, payload: { name: 'x', conditions, action: 'block' } });
        expect(res.status, JSON.stringify(conditions)).toBe(400);
      }
    });

    it('the engine compares the sender score, none (null or unknown) counting as 0.5', () => {
      const p = compilePolicy({ id: 'p', action: 'block', conditions: { trust_score_below: 0.6 }, scopeRoomId: null, scopeSkill: null, enabled: true });
      expect(p).toMatchObject({ usesTrustScore: true, trustFloor: true });
      const ctx: EvaluationContext = {
        roomId: null,
        messageType: 'text',
        priority: 'normal',
        senderKind: 'agent',
        recipientKind: 'agent',
        senderDeviceId: randomUUID(),
        recipientDeviceId: null,
        senderHubAddress: null,
        senderTier: 'unverified',
        crossTenant: false,
        now: new Date(),
      };
      expect(evaluate([p], ctx).outcome).toBe('block');
      expect(evaluate([p], { ...ctx, senderTrustScore: null }).outcome).toBe('block');
      expect(evaluate([p], { ...ctx, senderTrustScore: 0.59 }).outcome).toBe('block');
      expect(evaluate([p], { ...ctx, senderTrustScore: 0.6 }).outcome).toBe('allow');
      expect(compilePolicy({ id: 'q', action: 'block', conditions: { message_types: ['text'] }, scopeRoomId: null, scopeSkill: null, enabled: true })).toMatchObject({ usesTrustScore: false, trustFloor: false });
    });

    it('PolicyService.decide fills the sender score of message paths from its hub identity', async () => {
      const c = await newOwner(t, 'Pipeline C');
      const low = await subject(c, 'certified', 0.2);
      const high = await subject(c, 'certified', 0.9);
      await policy({ conditions: { trust_score_below: 0.5 }, action: 'block' }, c);
      const ctx = (deviceId: string): EvaluationContext => ({
        roomId: null,
        messageType: 'text',
        priority: 'normal',
        senderKind: 'agent',
        recipientKind: 'agent',
        senderDeviceId: deviceId,
        recipientDeviceId: null,
        senderHubAddress: null,
        senderTier: 'certified',
        crossTenant: false,
        now: new Date(),
      });
      const lowCtx = ctx(low.agent.deviceId);
      const highCtx = ctx(high.agent.deviceId);
      const out = await withTenant(db(), c.tenantId, (tx) =>
        t.app.parley.policies.decide(tx, c.tenantId, [
          { ctx: lowCtx, subjectKind: 'a2a_message', subjectId: randomUUID(), defaultOutcome: 'allow' },
          { ctx: highCtx, subjectKind: 'a2a_message', subjectId: randomUUID(), defaultOutcome: 'allow' },
        ]),
      );
      expect(out.map((e) => e.outcome)).toEqual(['block', 'allow']);
      expect(lowCtx.senderTrustScore).toBe(0.2);
      expect(highCtx.senderTrustScore).toBe(0.9);
    });
  });
});

/** The rate stage on Redis (rate-limiter-flexible's RateLimiterRedis), when TEST_REDIS_URL is set. */
describe.skipIf(!process.env.TEST_REDIS_URL)('skill pipeline rate stage on Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The enroll limit lives in the shared Redis too: repeated runs must not exhaust it.
    t = await startApp({ env: { REDIS_URL: process.env.TEST_REDIS_URL!, SKILL_CHECKS_PER_MIN: '2', RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
  });
  afterAll(() => t.close());

  it('counts checks per agent and skill in Redis', async () => {
    const owner = await newOwner(t, 'Redis rate');
    const fx = skillFixtures(() => ({ t, owner }), 'skp');
    const subject = await fx.subject(owner);
    const { agent } = subject;
    const skill = fx.skillName('redis');
    await fx.grant(subject, skill);
    const check = () => t.request({ method: 'POST', url: '/api/v1/skills/check', headers: agent.auth, payload: { skill } });
    expect((await check()).body.allowed).toBe(true);
    expect((await check()).body.allowed).toBe(true);
    expect((await check()).body).toMatchObject({ allowed: false, decided_by: 'rate' });
  });
});
