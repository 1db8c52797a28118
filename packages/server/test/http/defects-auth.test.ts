/**
 * Authentication defects: device-token renewal challenges are stateless (nothing stored, the same
 * answer for every device id, known or not, of any tenant) yet still renew exactly once and expire;
 * an API key not yet bound to key material may read the discovery routes contract §4.13 opens to keys.
 */
import { randomUUID } from 'node:crypto';
import { count, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deviceChallenges } from '../../src/db/schema/index.js';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';

describe('stateless renewal challenges', () => {
  let t: TestApp;
  let owner: Owner;
  const challengeFor = (id: string) => t.request({ method: 'POST', url: `/api/v1/devices/${id}/token/challenge` });
  const renew = (id: string, challenge: string, signature: string) => t.request({ method: 'POST', url: `/api/v1/devices/${id}/token`, payload: { challenge, signature } });
  const rows = async (deviceId?: string) =>
    (await t.app.parley.database.db.select({ n: count() }).from(deviceChallenges).where(deviceId ? eq(deviceChallenges.deviceId, deviceId) : undefined))[0]!.n;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
  });
  afterEach(() => vi.useRealTimers());
  afterAll(() => t.close());

  it('answers 201 with one shape for an existing device, an unknown id and another tenant’s device, and stores nothing', async () => {
    const agent = await activeAgent(t, owner);
    const other = await activeAgent(t, await newOwner(t, 'Other'));
    const before = await rows();
    const answers = [await challengeFor(agent.deviceId), await challengeFor(randomUUID()), await challengeFor(other.deviceId)];
    for (const a of answers) {
      expect(a.status).toBe(201);
      expect(Object.keys(a.body).sort()).toEqual(['challenge', 'device_id', 'expires_at']);
      expect(a.body.challenge.length).toBe(answers[0]!.body.challenge.length);
      expect(Date.parse(a.body.expires_at) - Date.now()).toBeGreaterThan(60_000);
      expect(Date.parse(a.body.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    }
    expect(await rows()).toBe(before);
  });

  it('renews once; a second renewal with the same challenge is 401; the spent record is bounded by expiry', async () => {
    const agent = await activeAgent(t, owner);
    const ch = await challengeFor(agent.deviceId);
    const ok = await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge));
    expect(ok.status).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: { authorization: `Bearer ${ok.body.device_jwt}` } })).status).toBe(200);
    const again = await renew(agent.deviceId, ch.body.challenge, agent.keys.sign(ch.body.challenge));
    expect(again.status).toBe(401);
    expect(Object.keys(again.body)).toEqual(['detail']);
    expect(await rows(agent.deviceId)).toBe(1);

    // Past the challenge's expiry, the next renewal forgets the spent one: at most one TTL's worth is kept.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 6 * 60_000);
    const next = await challengeFor(agent.deviceId);
    expect((await renew(agent.deviceId, next.body.challenge, agent.keys.sign(next.body.challenge))).status).toBe(200);
    expect(await rows(agent.deviceId)).toBe(1);
  });

  it('refuses an expired challenge, a forged or altered one and one issued for another id (401)', async () => {
    const agent = await activeAgent(t, owner);
    const ch = (await challengeFor(agent.deviceId)).body.challenge as string;
    const parts = ch.split(':');
    const later = [...parts.slice(0, 2), String(Date.now() + 3_600_000), ...parts.slice(3)].join(':');
    const forged = [...parts.slice(0, 4), 'A'.repeat(parts[4]!.length)].join(':');
    const foreign = (await challengeFor(randomUUID())).body.challenge as string;
    for (const c of [later, forged, foreign, `parley-renew:${agent.deviceId}`]) {
      const res = await renew(agent.deviceId, c, agent.keys.sign(c));
      expect(res.status, c).toBe(401);
    }
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5 * 60_000 + 1000);
    expect((await renew(agent.deviceId, ch, agent.keys.sign(ch))).status).toBe(401);
    vi.useRealTimers();
    // a fresh one still works
    const fresh = (await challengeFor(agent.deviceId)).body.challenge as string;
    expect((await renew(agent.deviceId, fresh, agent.keys.sign(fresh))).status).toBe(200);
  });

  it.runIf(backend === 'postgres')('a challenge issued by one instance renews on another sharing the database', async () => {
    const second = await startApp({ databaseUrl: t.app.parley.config.databaseUrl });
    try {
      const agent = await activeAgent(t, owner);
      const ch = await challengeFor(agent.deviceId);
      const res = await second.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token`, payload: { challenge: ch.body.challenge, signature: agent.keys.sign(ch.body.challenge) } });
      expect(res.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('an API key before registration', () => {
  let t: TestApp;
  let owner: Owner;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    // the tenant has a workspace, a team room and data an unregistered key must not see
    const agent = await activeAgent(t, owner);
    const ws = await t.request({ method: 'POST', url: '/api/v1/workspaces', headers: owner.auth, payload: { name: 'w', members: [{ device_id: agent.deviceId }] } });
    expect(ws.status).toBe(201);
  });
  afterAll(() => t.close());

  it('reads the contract §4.13 discovery lists (empty: it owns nothing yet); other routes stay 403', async () => {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'fresh' } });
    expect(created.status).toBe(201);
    const key = { 'x-api-key': created.body.key as string };
    const owned = await t.request({ method: 'GET', url: '/api/v1/workspaces', headers: owner.auth });
    expect(owned.body.workspaces).toHaveLength(1);
    for (const [url, field] of [['/api/v1/workspaces', 'workspaces'], ['/api/v1/team-rooms', 'team_rooms'], ['/api/v1/a2a/channels', 'channels']] as const) {
      const res = await t.request({ method: 'GET', url, headers: key });
      expect(res.status, url).toBe(200);
      expect(res.body, url).toEqual({ [field]: [] });
    }
    // a wrong key is still 401, an unregistered key naming a workspace is still 403
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces', headers: { 'x-api-key': `${created.body.key}x` } })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces', headers: { ...key, 'x-workspace-id': owned.body.workspaces[0].id } })).status).toBe(403);
    // routes that act as the key's device still need registered key material
    const request = await t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: key, payload: { responder_hub_address: 'somebody' } });
    expect(request.status).toBe(403);
    expect(request.body.detail).toMatch(/client_key_register/);
    expect((await t.request({ method: 'GET', url: `/api/v1/rooms/${randomUUID()}`, headers: key })).status).toBe(403);
  });
});
