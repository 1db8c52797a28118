/**
 * The SDK's governance methods against a real server over HTTP: trust scores (contract §2.9, §3.9,
 * §4.12; design §8.14), shadow sessions (contract §2.14, §3.4, §4.17; design §8.8) and Skill
 * Permission Tokens (design §8.7): recompute then read the 12-dimension score, drive a shadow
 * session from creation to graduation, issue an SPT as the owner for an agent with a hub identity,
 * validate it, revoke it and see validation fail; the compliance report in JSON and HTML.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema, activeAgent, type Agent, startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { TRUST_DIMENSIONS } from '@parley/protocol';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';
const { hubIdentities } = schema;

const stamp = Date.now().toString(36);
const address = `sdk-gov-${stamp}`;

async function rejects(p: Promise<unknown>, status: number): Promise<ParleyApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParleyApiError);
  expect((err as ParleyApiError).status).toBe(status);
  return err as ParleyApiError;
}

describe('governance through the SDK: trust scores, shadow sessions, Skill Permission Tokens', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let anonymous: ParleyClient;
  let agent: Agent;

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    const sub = `sdk-gov-owner-${stamp}@example.com`;
    const token = await t.ownerToken(sub);
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: token });
    const tenant = await owner.createTenant({ name: 'Governance SDK Co' });
    owner.setTenantId(tenant.tenant_id);
    agent = await activeAgent(t, { sub, token, tenantId: tenant.tenant_id, auth: { authorization: `Bearer ${token}` } });
    await owner.registerHub({ hub_address: address, display_name: 'Governed agent', device_id: agent.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
    anonymous = new ParleyClient({ baseUrl: t.baseUrl });
  });
  afterAll(() => t?.close());

  it('recomputes the tenant and reads a 12-dimension score, by device id and by hub address', async () => {
    const run = await owner.recomputeTrust();
    expect(run.agents).toBe(1);
    expect(run.snapshots).toBe(3);
    expect(Number.isNaN(Date.parse(run.computed_at))).toBe(false);

    const score = await owner.getTrustScore(agent.deviceId);
    expect(score).toMatchObject({ agent_id: agent.deviceId, hub_address: address, window: '7d', tier: 'unverified' });
    expect(Object.keys(score.dimensions).sort()).toEqual([...TRUST_DIMENSIONS].sort());
    expect(Object.keys(score.sources).sort()).toEqual([...TRUST_DIMENSIONS].sort());
    for (const d of TRUST_DIMENSIONS) {
      expect(score.dimensions[d]).toBeGreaterThanOrEqual(0);
      expect(score.dimensions[d]).toBeLessThanOrEqual(1);
    }
    expect(score.composite_score).toBeGreaterThanOrEqual(0);
    expect(score.composite_score).toBeLessThanOrEqual(1);

    const byAddress = await owner.getTrustScore(address, { window: '30d' });
    expect(byAddress).toMatchObject({ agent_id: agent.deviceId, window: '30d' });

    const fleet = await owner.getTrustFleet();
    expect(fleet.count).toBe(1);
    expect(fleet.agents.map((a) => a.agent_id)).toEqual([agent.deviceId]);
    expect(Object.keys(fleet.dimensions).sort()).toEqual([...TRUST_DIMENSIONS].sort());

    const history = await owner.getTrustHistory(agent.deviceId, { days: 7 });
    expect(history).toMatchObject({ agent_id: agent.deviceId, days: 7 });
    const drift = await owner.getTrustDrift(agent.deviceId);
    expect(drift).toMatchObject({ agent_id: agent.deviceId, window: '30d' });
    expect(Object.keys(drift.dimensions).sort()).toEqual([...TRUST_DIMENSIONS].sort());

    await rejects(owner.getTrustScore('00000000-0000-4000-8000-000000000000'), 404);
    // The agent's device JWT is no owner credential (403); without any credential the client refuses to call.
    await rejects(owner.getTrustScore(agent.deviceId, {}, { token: agent.jwt }), 403);
    await expect(anonymous.getTrustScore(agent.deviceId)).rejects.toThrow(TypeError);
  });

  it('drives a shadow session: create, record, graduation check, graduate, demote', async () => {
    const session = await owner.createShadowSession({
      device_id: agent.deviceId,
      skill_name: 'refunds',
      decision_class: 'refund_under_100',
      config: { min_observations: 2, agreement_threshold: 0.5 },
    });
    expect(session).toMatchObject({ device_id: agent.deviceId, level: 'shadow', config: { min_observations: 2, agreement_threshold: 0.5 } });
    expect(session.stats.observations).toBe(0);

    const first = await owner.recordShadowDecision(session.session_id, {
      observation_id: 'obs-1',
      agent_recommendation: { action: 'Approve', confidence: 0.9 },
      human_decision: { action: ' approve ' },
    });
    expect(first).toMatchObject({ observation_id: 'obs-1', agreed: true, critical_miss: false, level: 'shadow' });

    const early = await owner.getShadowGraduationCheck(session.session_id);
    expect(early.eligible).toBe(false);
    expect(early.gates.min_observations).toEqual({ required: 2, actual: 1, met: false });
    await rejects(owner.graduateShadowSession(session.session_id), 409);

    const second = await owner.recordShadowDecision(session.session_id, {
      observation_id: 'obs-2',
      agent_recommendation: { action: 'approve', confidence: 0.7 },
      human_decision: { action: 'deny' },
    });
    expect(second.agreed).toBe(false);
    expect(second.stats).toMatchObject({ observations: 2, agreed: 1, agreement_rate: 0.5 });
    await rejects(owner.recordShadowDecision(session.session_id, { observation_id: 'obs-2', agent_recommendation: { action: 'a', confidence: 1 }, human_decision: { action: 'a' } }), 409);

    const check = await owner.getShadowGraduationCheck(session.session_id);
    expect(check).toMatchObject({ eligible: true, current_level: 'shadow', next_level: 'supervised' });

    const graduated = await owner.graduateShadowSession(session.session_id);
    expect(graduated.level).toBe('supervised');
    expect(graduated.stats.observations).toBe(0);
    expect((await owner.getShadowSession(session.session_id)).level).toBe('supervised');
    const page = await owner.listShadowSessions({ device_id: agent.deviceId });
    expect(page.sessions.map((s) => s.session_id)).toEqual([session.session_id]);
    expect(page.next_cursor).toBeNull();

    const demoted = await owner.demoteShadowSession(session.session_id, { level: 'shadow', reason: 'SDK test' });
    expect(demoted.level).toBe('shadow');
  });

  it('issues an SPT as the owner, validates it with its audience, revokes it, and validation then fails', async () => {
    const audience = 'https://tools.example.com';
    const issued = await owner.issueGrant({ skill: 'translate', device_id: agent.deviceId, audience });
    expect(issued).toMatchObject({ skill: 'translate', tier: 'unverified', audience, subject: `did:hub:${address}`, device_id: agent.deviceId });

    const keys = await anonymous.getGrantKeys();
    expect(keys.keys).toHaveLength(1);
    expect(keys.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });

    const ok = await anonymous.validateGrant({ token: issued.token, skill: 'translate', audience });
    expect(ok.valid).toBe(true);
    expect(ok.checks.every((c) => c.passed)).toBe(true);
    expect(ok.claims).toMatchObject({ jti: issued.jti, aud: audience, sub: `did:hub:${address}`, skill: 'translate' });

    const wrongAudience = await anonymous.validateGrant({ token: issued.token, audience: 'https://elsewhere.example.com' });
    expect(wrongAudience.valid).toBe(false);
    expect(wrongAudience.checks.find((c) => c.check === 'audience')?.passed).toBe(false);

    const listed = await owner.listGrants({ device_id: agent.deviceId, active: true });
    expect(listed.grants.map((g) => g.jti)).toEqual([issued.jti]);

    const revoked = await owner.revokeGrant(issued.jti, { reason: 'SDK test' });
    expect(revoked).toMatchObject({ jti: issued.jti, active: false, revoked_reason: 'SDK test' });
    await rejects(owner.revokeGrant(issued.jti), 409);

    const after = await anonymous.validateGrant({ token: issued.token, skill: 'translate', audience });
    expect(after.valid).toBe(false);
    expect(after.checks.find((c) => c.check === 'revocation')?.passed).toBe(false);
    expect((await owner.listGrants({ active: true })).grants).toEqual([]);

    const check = await owner.checkSkillPolicy({ skill: 'translate', device_id: agent.deviceId });
    expect(check.stages.length).toBeGreaterThan(0);
    expect(typeof check.allowed).toBe('boolean');
  });

  it('serves the compliance report to an enterprise agent in JSON and HTML', async () => {
    await rejects(owner.getTrustReport(agent.deviceId, { format: 'json' }), 403);
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: 'enterprise' }).where(eq(hubIdentities.hubAddress, address));
    const report = await owner.getTrustReport(agent.deviceId, { format: 'json' });
    expect(report.agent).toMatchObject({ agent_id: agent.deviceId, hub_address: address, tier: 'enterprise' });
    expect(Object.keys(report.scores).sort()).toEqual(['30d', '7d', '90d']);
    const html = await owner.getTrustReportHtml(address);
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(address);
  });
});
