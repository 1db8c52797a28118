/**
 * Skill delegation (`POST /api/v1/skills/delegate`; contract §4.19 `svc_delegate_skill`, §7; design
 * §8.6; docs/decisions.md "Skill delegation"): the pipeline of `/skills/check` in delegation mode,
 * then `skill.delegated` / `skill.delegation_refused` in the caller's chain in the same
 * transaction (a refusal below the trust floor included), the answer's target facts, 404 for an
 * unknown target, input errors, the route's auth matrix and tenant isolation of the events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { skillFixtures, type Subject } from './skill-fixtures.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('skill delegation', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;

  const { addr, skillName, subject, policy, grant } = skillFixtures(() => ({ t, owner: a }), 'dlg');
  const delegate = (headers: Record<string, string> | undefined, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v1/skills/delegate', ...(headers ? { headers } : {}), payload });
  const events = async (owner: Owner, query: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/audit/events?${query}`, headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body.events as any[];
  };
  const verified = async (owner: Owner) => (await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: owner.auth })).body;

  let caller: Subject;
  let skill: string;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Delegation A');
    b = await newOwner(t, 'Delegation B');
    skill = skillName('translate');
    await policy({ scope: { skill }, conditions: { trust_score_below: 0.6 }, action: 'block' });
    caller = await subject(a, 'certified', 0.9);
    await grant(caller, skill);
  });
  afterAll(() => t.close());

  it('allowed: the pipeline answer, a delegation id, the target facts, and skill.delegated in the chain', async () => {
    const target = await subject(a, 'certified', 0.8);
    const trace = 'AB'.repeat(16);
    const res = await delegate(caller.agent.auth, { skill, target: `did:hub:${target.address.toUpperCase()}`, trace_id: trace, tool: 'translate_text', args: { text: 'secret' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      allowed: true,
      decided_by: 'rules',
      delegation_id: expect.stringMatching(UUID),
      audit_event_id: expect.stringMatching(UUID),
      target: { hub_address: target.address, did: `did:hub:${target.address}`, trust_tier: 'certified', trust_score: 0.8 },
    });
    expect(res.body.stages.map((s: any) => s.stage)).toEqual(['identity', 'trust_floor', 'grant', 'rate', 'budget', 'rules']);

    const [event] = await events(a, `type=skill.delegated&subject=${caller.agent.deviceId}`);
    expect(event).toMatchObject({
      event_id: res.body.audit_event_id,
      actor: `device:${caller.agent.deviceId}`,
      subject: caller.agent.deviceId,
      data: {
        skill,
        target_hub_address: target.address,
        target_did: `did:hub:${target.address}`,
        decided_by: 'rules',
        reason: res.body.reason,
        trace_id: trace.toLowerCase(),
        delegation_id: res.body.delegation_id,
      },
    });
    // Arguments are never stored; the check's own denial events are not written by a delegation.
    expect(JSON.stringify(event)).not.toContain('secret');
    expect(await events(a, `type=skill.check_denied&subject=${caller.agent.deviceId}`)).toHaveLength(0);
    expect(await verified(a)).toMatchObject({ valid: true, first_broken: null });
  });

  it('refused below the trust floor: 200 allowed false, and skill.delegation_refused is in the chain (once)', async () => {
    const low = await subject(a, 'certified', 0.3);
    const res = await delegate(caller.agent.auth, { skill, target: low.address });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allowed: false, decided_by: 'trust_floor', target: { hub_address: low.address, trust_tier: 'certified', trust_score: 0.3 } });
    expect(res.body.reason).toMatch(new RegExp(`did:hub:${low.address} is below the trust floor`));
    const refused = (await events(a, `type=skill.delegation_refused&subject=${caller.agent.deviceId}`)).filter((e) => e.data.target_hub_address === low.address);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ event_id: res.body.audit_event_id, data: { decided_by: 'trust_floor', reason: res.body.reason, trace_id: null, delegation_id: res.body.delegation_id } });
    // The pipeline's check-mode events are not duplicated by a delegation.
    expect(await events(a, `type=skill.delegation_rejected&subject=${caller.agent.deviceId}`)).toHaveLength(0);
    expect(await verified(a)).toMatchObject({ valid: true });
  });

  it('refused at the caller’s grant stage, and an unscored target answers trust_score null', async () => {
    const noGrant = await subject(a, 'certified', 0.9);
    const target = await subject(a, 'unverified', null);
    const other = skillName('nofloor');
    const res = await delegate(noGrant.agent.auth, { skill: other, target: target.address });
    expect(res.body).toMatchObject({ allowed: false, decided_by: 'grant', target: { trust_tier: 'unverified', trust_score: null } });
    const [event] = await events(a, `type=skill.delegation_refused&subject=${noGrant.agent.deviceId}`);
    expect(event).toMatchObject({ event_id: res.body.audit_event_id, data: { skill: other, decided_by: 'grant' } });
  });

  it('a target that exists but is not in standing is refused at identity (audited); an unknown target is 404 and writes nothing', async () => {
    const gone = await subject(a, 'certified', 0.9);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${gone.agent.deviceId}/revoke`, headers: a.auth })).status).toBe(200);
    const revoked = await delegate(caller.agent.auth, { skill, target: gone.address });
    expect(revoked.body).toMatchObject({ allowed: false, decided_by: 'identity' });
    expect((await events(a, `type=skill.delegation_refused&subject=${caller.agent.deviceId}`)).some((e) => e.event_id === revoked.body.audit_event_id)).toBe(true);

    const before = (await events(a, 'limit=1'))[0].event_id;
    const unknown = await delegate(caller.agent.auth, { skill, target: addr() });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: expect.any(String) });
    expect((await events(a, 'limit=1'))[0].event_id).toBe(before);
  });

  it('a target in another tenant is judged there; the event is in the caller’s chain only', async () => {
    const far = await subject(b, 'enterprise', 0.95);
    const res = await delegate(caller.agent.auth, { skill, target: far.address });
    expect(res.body).toMatchObject({ allowed: true, target: { hub_address: far.address, trust_tier: 'enterprise', trust_score: 0.95 } });
    expect((await events(a, `type=skill.delegated&subject=${caller.agent.deviceId}`)).some((e) => e.event_id === res.body.audit_event_id)).toBe(true);
    // RLS: tenant B sees none of A's delegation events, even filtering by A's device.
    expect(await events(b, 'type=skill.delegated')).toHaveLength(0);
    expect(await events(b, `subject=${caller.agent.deviceId}`)).toHaveLength(0);
    expect(await verified(b)).toMatchObject({ valid: true });
  });

  it('owner on behalf (device_id) and API keys; 400 bad input; 401; 403 unregistered key; 404 foreign device', async () => {
    const target = await subject(a, 'certified', 0.9);
    const owner = await delegate(a.auth, { skill, target: target.address, device_id: caller.agent.deviceId });
    expect(owner.status).toBe(200);
    expect(owner.body.allowed).toBe(true);
    const [byOwner] = await events(a, `type=skill.delegated&actor=${encodeURIComponent(a.sub)}`);
    expect(byOwner).toMatchObject({ subject: caller.agent.deviceId, event_id: owner.body.audit_event_id });

    const bad: Record<string, unknown>[] = [
      { skill },
      { skill, target: '' },
      { skill, target: 'not an address!' },
      { skill, target: target.address, trace_id: 'xyz' },
      { skill, target: target.address, trace_id: '0'.repeat(32) },
      { target: target.address },
    ];
    for (const payload of bad) {
      const res = await delegate(caller.agent.auth, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await delegate(caller.agent.auth, { skill, target: caller.address })).status).toBe(400);
    expect((await delegate(a.auth, { skill, target: target.address })).status).toBe(400);
    expect((await delegate(undefined, { skill, target: target.address })).status).toBe(401);

    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'unregistered' } });
    const unregistered = await delegate({ 'x-api-key': key.body.key }, { skill, target: target.address });
    expect(unregistered.status).toBe(403);
    expect(unregistered.body.detail).toMatch(/no registered key material/);

    const foreign = await subject(b, 'certified', 0.9);
    expect((await delegate(a.auth, { skill, target: target.address, device_id: foreign.agent.deviceId })).status).toBe(404);
    expect(await verified(a)).toMatchObject({ valid: true });
  });
});
