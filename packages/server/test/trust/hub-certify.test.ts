/**
 * Certification (contract §3.3 `POST /hub/identities/{id}/certify`; design §8.16): the five checks,
 * each failing alone; the tier rises only when they all pass (unverified → certified → enterprise
 * with the HELD score of the last 7 days) and falls at once when the latest 7d score is below the
 * current tier; every change recorded once in hub_tier_changes with the checks and audited
 * (`hub.tier_changed`, with the SPTs a downgrade revoked); every run audited (`hub.certified`);
 * no upgrade on stale scores (latest older than the age limit, or none inside the hold);
 * last_attestation_at on every run; capabilities follow the tier; route matrix. Scores are seeded
 * as 7d trust_snapshots (superuser SQL) covering the last 8 days.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificationChecks, SCORE_MAX_AGE_MS, scoreFreshness, scoreMaxAgeMs } from '../../src/modules/trust/certify.js';
import { tierForScore } from '../../src/modules/trust/tiers.js';
import { TRUST_DIMENSIONS } from '../../src/modules/trust/types.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

let seq = 0;
const addr = () => `cert-${Date.now().toString(36)}-${++seq}`;
const CHECKS = ['owner_key', 'bound_device', 'capabilities', 'activity', 'trust_score'];
const DAY = 24 * 3600_000;

interface Candidate {
  id: string;
  address: string;
  agent: Agent;
}

describe('hub certification', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;

  const exec = async <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const certify = (id: string, headers: Record<string, string> = a.auth) => t.request({ method: 'POST', url: `/api/v1/hub/identities/${id}/certify`, headers });
  /**
   * The bound device's 7d score history: one snapshot a day from 8 days ago to now, all at `score`
   * (so the held score over the last 7 days is `score`); null clears the history. `days` lists
   * the snapshot ages in days instead (e.g. [9] = one snapshot 9 days old).
   */
  const setScore = async (id: string, score: number | null, days: number[] = [8, 7, 6, 5, 4, 3, 2, 1, 0]) => {
    const [row] = await exec<{ tenant_id: string; device_id: string | null }>(sql`select tenant_id, device_id from hub_identities where id = ${id}`);
    if (!row?.device_id) throw new Error('setScore needs a bound device');
    await exec(sql`delete from trust_snapshots where device_id = ${row.device_id}`);
    if (score === null) return;
    const dims = JSON.stringify(Object.fromEntries(TRUST_DIMENSIONS.map((d) => [d, score])));
    for (const day of days) {
      const at = new Date(Date.now() - day * DAY - 1000).toISOString();
      await exec(sql`insert into trust_snapshots (id, tenant_id, device_id, "window", composite, dimensions, sources, percentile, tier, computed_at)
                     values (${randomUUID()}, ${row.tenant_id}, ${row.device_id}, '7d', ${score}, ${dims}::jsonb, '{}'::jsonb, 50, 'unverified', ${at}::timestamptz)`);
    }
  };
  const tierChanges = (id: string) =>
    exec<{ from_tier: string; to_tier: string; reason: string; checks: unknown }>(sql`select from_tier, to_tier, reason, checks from hub_tier_changes where identity_id = ${id} order by created_at`);
  const identityRow = async (id: string) =>
    (await exec<{ trust_tier: string; certified_at: string | Date | null; last_attestation_at: string | Date | null }>(sql`select trust_tier, certified_at, last_attestation_at from hub_identities where id = ${id}`))[0]!;
  const capabilityTiers = async (id: string) =>
    Object.fromEntries((await exec<{ name: string; certification_tier: string }>(sql`select name, certification_tier from hub_capabilities where identity_id = ${id}`)).map((r) => [r.name, r.certification_tier]));

  /** An identity that passes every check once given a score: owner key, bound ACTIVE agent seen now, a capability with schema and SLA. */
  async function candidate(owner: Owner, opts: { sla?: boolean } = {}): Promise<Candidate> {
    const agent = await activeAgent(t, owner);
    const reg = await t.request({
      method: 'POST',
      url: '/api/v1/hub/identities',
      headers: owner.auth,
      payload: { hub_address: addr(), display_name: 'Candidate', device_id: agent.deviceId, public_key: hubOwnerKey() },
    });
    expect(reg.status).toBe(201);
    const cap = { name: 'translate', version: '1.0.0', input_schema: { type: 'object' }, ...(opts.sla === false ? {} : { sla: { latency_p95_ms: 500, uptime_sla: 0.99 } }) };
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/${reg.body.hub_address}/capabilities`, headers: owner.auth, payload: cap })).status).toBe(201);
    await exec(sql`update devices set last_seen = now() where id = ${agent.deviceId}`);
    return { id: reg.body.id, address: reg.body.hub_address, agent };
  }

  const failed = (body: { checks: { check: string; passed: boolean }[] }) => body.checks.filter((c) => !c.passed).map((c) => c.check);

  beforeAll(async () => {
    // Every candidate enrolls an agent: lift the per-IP enrollment limit (contract §8: 5 per 10 minutes).
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
  });
  afterAll(() => t.close());

  it('answers all five checks, and without a 7-day score history does not upgrade', async () => {
    const c = await candidate(a);
    const res = await certify(c.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ identity_id: c.id, tier: 'unverified', upgraded: false });
    expect(res.body.checks.map((x: { check: string }) => x.check)).toEqual(CHECKS);
    for (const x of res.body.checks) expect(x.detail).toEqual(expect.any(String));
    expect(failed(res.body)).toEqual(['trust_score']);
    expect(res.body.checks[4].detail).toMatch(/not held for 7 days/);
    expect(await tierChanges(c.id)).toEqual([]);
    const row = await identityRow(c.id);
    expect(row.certified_at).toBeNull();
    expect(row.last_attestation_at).not.toBeNull();
  });

  it('upgrades unverified → certified → enterprise with the score, recording each change once', async () => {
    const c = await candidate(a);
    // A capability without an SLA is not certified with the identity.
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/${c.address}/capabilities`, headers: a.auth, payload: { name: 'draft', version: '0.1', input_schema: {} } })).status).toBe(201);
    await setScore(c.id, 0.65);
    const first = await certify(c.id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ identity_id: c.id, tier: 'certified', upgraded: true });
    expect(failed(first.body)).toEqual([]);
    const afterFirst = await identityRow(c.id);
    expect(afterFirst.trust_tier).toBe('certified');
    expect(afterFirst.certified_at).not.toBeNull();
    expect(await capabilityTiers(c.id)).toEqual({ translate: 'certified', draft: 'unverified' });
    expect((await t.request({ method: 'GET', url: `/api/v1/hub/${c.address}/profile` })).body.trust_tier).toBe('certified');

    // Again with the same score: no change, nothing recorded, but a new attestation time.
    await new Promise((r) => setTimeout(r, 5));
    const again = await certify(c.id);
    expect(again.body).toMatchObject({ tier: 'certified', upgraded: false });
    expect(failed(again.body)).toEqual([]);
    const afterAgain = await identityRow(c.id);
    expect(new Date(afterAgain.last_attestation_at!).getTime()).toBeGreaterThan(new Date(afterFirst.last_attestation_at!).getTime());
    expect(new Date(afterAgain.certified_at!).getTime()).toBe(new Date(afterFirst.certified_at!).getTime());
    let changes = await tierChanges(c.id);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ from_tier: 'unverified', to_tier: 'certified', reason: 'certify' });
    expect(changes[0]!.checks).toEqual(first.body.checks);

    await setScore(c.id, 0.8);
    const ent = await certify(c.id);
    expect(ent.body).toMatchObject({ tier: 'enterprise', upgraded: true });
    changes = await tierChanges(c.id);
    expect(changes.map((x) => [x.from_tier, x.to_tier])).toEqual([
      ['unverified', 'certified'],
      ['certified', 'enterprise'],
    ]);
    expect(await capabilityTiers(c.id)).toEqual({ translate: 'enterprise', draft: 'unverified' });
    expect((await certify(c.id)).body).toMatchObject({ tier: 'enterprise', upgraded: false });
    expect(await tierChanges(c.id)).toHaveLength(2);
  });

  it('audits every run as hub.certified {tier, upgraded, checks}', async () => {
    const c = await candidate(a);
    await certify(c.id);
    await setScore(c.id, 0.7);
    const up = await certify(c.id);
    expect(up.body).toMatchObject({ tier: 'certified', upgraded: true });
    const events = await exec<{ actor: string; data: { tier: string; upgraded: boolean; checks: { check: string; passed: boolean }[] } }>(
      sql`select actor, data from audit_events where type = 'hub.certified' and subject = ${c.id} order by seq`,
    );
    expect(events).toHaveLength(2);
    expect(events.map((e) => [e.actor, e.data.tier, e.data.upgraded])).toEqual([
      [a.sub, 'unverified', false],
      [a.sub, 'certified', true],
    ]);
    expect(events[0]!.data.checks).toEqual(CHECKS.map((check) => ({ check, passed: check !== 'trust_score' })));
    expect(events[1]!.data.checks).toEqual(CHECKS.map((check) => ({ check, passed: true })));
  });

  it('does not upgrade on stale scores: one old snapshot, or a history that stopped more than 24 hours ago', async () => {
    const c = await candidate(a);
    // One 0.95 snapshot 9 days old: it "covers" the hold, but nothing was computed inside it.
    await setScore(c.id, 0.95, [9]);
    let res = await certify(c.id);
    expect(res.body).toMatchObject({ tier: 'unverified', upgraded: false });
    expect(failed(res.body)).toEqual(['trust_score']);
    expect(res.body.checks[4].detail).toMatch(/stale/);
    // Daily snapshots that stopped 2 days ago (the recompute has not run since).
    await setScore(c.id, 0.95, [9, 8, 7, 6, 5, 4, 3, 2]);
    res = await certify(c.id);
    expect(res.body).toMatchObject({ tier: 'unverified', upgraded: false });
    expect(res.body.checks[4].detail).toMatch(/stale.*computed at/);
    expect(await tierChanges(c.id)).toEqual([]);
    // A fresh score (computed within the last 24 hours) completes it.
    await setScore(c.id, 0.95, [9, 8, 7, 6, 5, 4, 3, 2, 0.5]);
    expect((await certify(c.id)).body).toMatchObject({ tier: 'enterprise', upgraded: true });
  });

  it('scoreFreshness and scoreMaxAgeMs: the latest score within the limit and some score inside the hold', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    const p = (hoursAgo: number) => ({ at: new Date(now.getTime() - hoursAgo * 3600_000), composite: 0.9 });
    expect(scoreMaxAgeMs(6 * 3600_000)).toBe(SCORE_MAX_AGE_MS);
    expect(scoreMaxAgeMs(20 * 3600_000)).toBe(40 * 3600_000);
    expect(scoreFreshness([p(200), p(24)], now, SCORE_MAX_AGE_MS)).toBeNull();
    expect(scoreFreshness([p(200), p(24.01)], now, SCORE_MAX_AGE_MS)).toEqual({ latestAt: p(24.01).at, maxAgeMs: SCORE_MAX_AGE_MS });
    expect(scoreFreshness([], now, SCORE_MAX_AGE_MS)).toEqual({ latestAt: null, maxAgeMs: SCORE_MAX_AGE_MS });
    // A limit beyond the hold still needs a point inside the hold.
    expect(scoreFreshness([p(24 * 7 + 1)], now, 30 * 24 * 3600_000)).not.toBeNull();
    expect(scoreFreshness([p(24 * 7 - 1)], now, 30 * 24 * 3600_000)).toBeNull();
    // Points after now are ignored.
    expect(scoreFreshness([p(48), p(-1)], now, SCORE_MAX_AGE_MS)).not.toBeNull();
  });

  it('records the SPTs a downgrade revoked in hub.tier_changed (revoked_grants)', async () => {
    const c = await candidate(a);
    await setScore(c.id, 0.9);
    expect((await certify(c.id)).body.tier).toBe('enterprise');
    const issued = Date.now();
    const grant = (tier: string) =>
      exec<{ jti: string }>(sql`
        insert into skill_grants (jti, tenant_id, device_id, subject, skill, tier, audience, issued_by, issued_at, expires_at)
        values (${randomUUID()}, ${a.tenantId}, ${c.agent.deviceId}, 'did:hub:x', 'translate', ${tier}, 'did:hub:y', 'system',
                ${new Date(issued - 60_000).toISOString()}::timestamptz, ${new Date(issued + 3600_000).toISOString()}::timestamptz)
        returning jti`);
    const [enterpriseGrant] = await grant('enterprise');
    await grant('certified');
    await setScore(c.id, 0.7);
    expect((await certify(c.id)).body.tier).toBe('certified');
    const audit = await exec<{ data: { from: string; to: string; revoked_grants: string[] } }>(
      sql`select data from audit_events where type = 'hub.tier_changed' and subject = ${c.id} order by seq`,
    );
    expect(audit.map((e) => [e.data.from, e.data.to, e.data.revoked_grants])).toEqual([
      ['unverified', 'enterprise', []],
      ['enterprise', 'certified', [enterpriseGrant!.jti]],
    ]);
  });

  it('goes straight from unverified to enterprise with a high score (one change recorded)', async () => {
    const c = await candidate(a);
    await setScore(c.id, 0.93);
    expect((await certify(c.id)).body).toMatchObject({ tier: 'enterprise', upgraded: true });
    expect((await tierChanges(c.id)).map((x) => [x.from_tier, x.to_tier])).toEqual([['unverified', 'enterprise']]);
  });

  it('lowers the tier at once when the latest score falls below it (contract §3.3 downgrade), audited', async () => {
    const c = await candidate(a);
    await setScore(c.id, 0.85);
    expect((await certify(c.id)).body.tier).toBe('enterprise');
    await setScore(c.id, 0.7);
    const mid = await certify(c.id);
    expect(mid.body).toMatchObject({ tier: 'certified', upgraded: false });
    expect(await capabilityTiers(c.id)).toEqual({ translate: 'certified' });
    await setScore(c.id, 0.3);
    const res = await certify(c.id);
    expect(res.body).toMatchObject({ tier: 'unverified', upgraded: false });
    expect(failed(res.body)).toEqual(['trust_score']);
    expect((await tierChanges(c.id)).map((x) => [x.from_tier, x.to_tier, x.reason])).toEqual([
      ['unverified', 'enterprise', 'certify'],
      ['enterprise', 'certified', 'certify'],
      ['certified', 'unverified', 'certify'],
    ]);
    expect(await capabilityTiers(c.id)).toEqual({ translate: 'unverified' });
    const audit = await exec<{ actor: string; data: { from: string; to: string; score: number; reason: string } }>(
      sql`select actor, data from audit_events where type = 'hub.tier_changed' and subject = ${c.id} order by seq`,
    );
    expect(audit.map((e) => [e.data.from, e.data.to, e.data.score, e.data.reason])).toEqual([
      ['unverified', 'enterprise', 0.85, 'certify'],
      ['enterprise', 'certified', 0.7, 'certify'],
      ['certified', 'unverified', 0.3, 'certify'],
    ]);
    expect(audit[0]!.actor).toBe(a.sub);
    const spans = await exec<{ attributes: Record<string, unknown> }>(
      sql`select attributes from telemetry_spans where device_id = ${c.agent.deviceId} and name = 'svc.trust' order by start_time`,
    );
    expect(spans.map((x) => x.attributes['svc.trust.to_tier'])).toEqual(['enterprise', 'certified', 'unverified']);
    expect(spans[0]!.attributes).toMatchObject({ operation: 'tier_change', 'svc.trust.from_tier': 'unverified', 'svc.trust.reason': 'certify' });
  });

  describe('each check failing alone keeps the identity unverified', () => {
    type Case = [name: string, failing: string[], breakIt: (c: Candidate) => Promise<unknown>, opts?: { sla?: boolean }];
    const none = async () => undefined;
    const cases: Case[] = [
      // Registration requires a key now; an identity registered before that has none.
      ['owner_key: none registered', ['owner_key'], (c) => exec(sql`update hub_identities set public_key = null where id = ${c.id}`)],
      // A stored key that is no valid point (e.g. written before validation existed): the all-zero key has order 4.
      ['owner_key: not a valid point', ['owner_key'], (c) => exec(sql`update hub_identities set public_key = ${Buffer.alloc(32).toString('base64')} where id = ${c.id}`)],
      ['bound_device: device REVOKED', ['bound_device'], (c) => exec(sql`update devices set status = 'REVOKED' where id = ${c.agent.deviceId}`)],
      // Unbinding also leaves no device whose activity or score history could be observed.
      ['bound_device: none bound', ['bound_device', 'activity', 'trust_score'], (c) => exec(sql`update hub_identities set device_id = null where id = ${c.id}`)],
      ['capabilities: none with an sla', ['capabilities'], none, { sla: false }],
      ['activity: seen 8 days ago', ['activity'], (c) => exec(sql`update devices set last_seen = ${new Date(Date.now() - 8 * DAY).toISOString()} where id = ${c.agent.deviceId}`)],
      ['activity: never seen', ['activity'], (c) => exec(sql`update devices set last_seen = null where id = ${c.agent.deviceId}`)],
      ['trust_score: 0.59', ['trust_score'], (c) => setScore(c.id, 0.59)],
    ];
    it.each(cases)('%s', async (_name, failing, breakIt, opts) => {
      const c = await candidate(a, opts);
      await setScore(c.id, 0.95);
      await breakIt(c);
      const res = await certify(c.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ tier: 'unverified', upgraded: false });
      expect(failed(res.body)).toEqual(failing);
      expect(await tierChanges(c.id)).toEqual([]);
      expect(await capabilityTiers(c.id)).toEqual({ translate: 'unverified' });
    });
  });

  it('the trust_score check passes from exactly 0.6 (tiers at 0.6 certified, 0.8 enterprise) and 7 days of activity count inclusively', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    const facts = {
      publicKey: hubOwnerKey(),
      device: { id: randomUUID(), kind: 'agent', status: 'ACTIVE', lastSeen: new Date(now.getTime() - 7 * DAY) },
      capabilities: [{ inputSchema: {}, sla: { latency_p95_ms: 1, uptime_sla: 1 } }],
      now,
    };
    for (const [score, tier] of [
      [0.6, 'certified'],
      [0.79, 'certified'],
      [0.8, 'enterprise'],
      [0.5999, 'unverified'],
      [null, 'unverified'],
    ] as const) {
      const checks = certificationChecks({ ...facts, heldScore: score });
      expect(checks.every((c) => c.passed), String(score)).toBe(tier !== 'unverified');
      if (score !== null) expect(tierForScore(score), String(score)).toBe(tier);
    }
    const stale = { latestAt: new Date(now.getTime() - 2 * DAY), maxAgeMs: DAY };
    const staleCheck = certificationChecks({ ...facts, heldScore: 0.9, staleScore: stale }).find((c) => c.check === 'trust_score')!;
    expect(staleCheck.passed).toBe(false);
    expect(staleCheck.detail).toContain(stale.latestAt.toISOString());
    const inactive = certificationChecks({ ...facts, device: { ...facts.device, lastSeen: new Date(now.getTime() - 7 * DAY - 1) }, heldScore: 0.9 });
    expect(inactive.find((c) => c.check === 'activity')!.passed).toBe(false);
  });

  it('route matrix: 401 without auth, 403 device token, 404 across tenants and unknown, 400 bad id, 409 suspended', async () => {
    const c = await candidate(a);
    expect((await certify(c.id, {})).status).toBe(401);
    expect((await certify(c.id, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await certify(c.id, c.agent.auth)).status).toBe(403);
    await setScore(c.id, 0.9);
    expect((await certify(c.id, b.auth)).status).toBe(404);
    expect(await tierChanges(c.id)).toEqual([]);
    expect((await identityRow(c.id)).last_attestation_at).toBeNull();
    expect((await certify(randomUUID())).status).toBe(404);
    expect((await certify('not-a-uuid')).status).toBe(400);
    expect((await certify(c.id.toUpperCase())).status).toBe(200);
    await exec(sql`update hub_identities set status = 'suspended' where id = ${c.id}`);
    const suspended = await certify(c.id);
    expect(suspended.status).toBe(409);
    expect(suspended.body.detail).toMatch(/suspended/);
  });
});
