/**
 * The API-key HTTP path (contract §5: `X-API-Key`, optional `X-Workspace-Id`) on real routes:
 * workspaces and team rooms as an API-key agent sees them, and every refusal of the path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

/** An API key; `deviceId` is set once its client registered key material (trust on first use). */
interface Key {
  id: string;
  key: string;
  deviceId?: string;
  headers: Record<string, string>;
}

describe('API keys on HTTP routes', () => {
  let t: TestApp;
  const pool = new WsPool();
  let acme: Owner;
  let od: OwnerDevice;
  let agent: Agent;
  let bound: Key;
  let unbound: Key;
  let revoked: Key;
  let w1: string;
  let w2: string;
  let w3: string;
  let beta: Owner;
  let betaKey: Key;
  let betaWs: string;

  const createKey = async (owner: Owner): Promise<Key> => {
    const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'third-party' } });
    expect(res.status).toBe(201);
    return { id: res.body.id, key: res.body.key, headers: { 'x-api-key': res.body.key } };
  };
  /** Bind a key to new key material over the WebSocket (client_key_register). */
  const bind = async (k: Key): Promise<Key> => {
    const keys = newDeviceKeys();
    const ws = await pool.open(wsAddress(t.wsUrl, { token: k.key }));
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const accepted = await ws.next('client_key_accepted');
    await ws.close();
    return { ...k, deviceId: accepted.data.device_id };
  };
  const createWorkspace = async (owner: Owner, name: string, members: { device_id: string; role?: string }[]) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/workspaces', headers: owner.auth, payload: { name, members } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const createTeamRoom = async (workspace_id: string, name: string, member_device_ids: string[]) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/team-rooms', headers: acme.auth, payload: { workspace_id, name, member_device_ids } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const get = (url: string, headers: Record<string, string>) => t.request({ method: 'GET', url: `/api/v1${url}`, headers });

  beforeAll(async () => {
    t = await startApp({ listen: true });
    acme = await newOwner(t, 'Acme');
    od = await registerOwnerDevice(t, acme);
    agent = await activeAgent(t, acme);
    bound = await bind(await createKey(acme));
    unbound = await createKey(acme);
    revoked = await bind(await createKey(acme));
    expect((await t.request({ method: 'POST', url: `/api/v1/api-keys/${revoked.id}/revoke`, headers: acme.auth })).status).toBe(200);
    w1 = await createWorkspace(acme, 'Alpha', [{ device_id: bound.deviceId!, role: 'admin' }, { device_id: agent.deviceId }]);
    w2 = await createWorkspace(acme, 'Bravo', [{ device_id: agent.deviceId }]);
    w3 = await createWorkspace(acme, 'Charlie', [{ device_id: bound.deviceId! }]);
    beta = await newOwner(t, 'Beta');
    betaKey = await bind(await createKey(beta));
    betaWs = await createWorkspace(beta, 'Beta team', [{ device_id: betaKey.deviceId!, role: 'admin' }]);
  });
  afterAll(async () => {
    await pool.closeAll();
    await t.close();
  });

  it("a valid key lists the workspaces its device belongs to, with its role (contract §2.5 summaries)", async () => {
    const res = await get('/workspaces', bound.headers);
    expect(res.status).toBe(200);
    expect(res.body.workspaces).toEqual([
      { id: w1, name: 'Alpha', role: 'admin' },
      { id: w3, name: 'Charlie', role: 'member' },
    ]);
    const only = await get('/workspaces', { ...bound.headers, 'x-workspace-id': w3.toUpperCase() });
    expect(only.status).toBe(200);
    expect(only.body.workspaces).toEqual([{ id: w3, name: 'Charlie', role: 'member' }]);
  });

  it('refuses unknown, malformed and revoked keys (401)', async () => {
    for (const key of [`svc_agent_sk_dev_${'0'.repeat(64)}`, 'svc_agent_sk_dev_nope', 'garbage', revoked.key, bound.key.replace('_dev_', '_prod_')]) {
      const res = await get('/workspaces', { 'x-api-key': key });
      expect(res.status, key).toBe(401);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    expect((await get('/workspaces', { 'x-api-key': '' })).status).toBe(401);
  });

  it('refuses an API key on owner-only routes (403)', async () => {
    expect((await t.request({ method: 'POST', url: '/api/v1/workspaces', headers: bound.headers, payload: { name: 'x' } })).status).toBe(403);
    expect((await get(`/workspaces/${w1}`, bound.headers)).status).toBe(403);
    expect((await t.request({ method: 'POST', url: `/api/v1/workspaces/${w1}/members`, headers: bound.headers, payload: { device_id: agent.deviceId } })).status).toBe(403);
    expect((await t.request({ method: 'POST', url: '/api/v1/team-rooms', headers: bound.headers, payload: { workspace_id: w1, name: 'r', member_device_ids: [bound.deviceId] } })).status).toBe(403);
    for (const url of ['/connections', '/owner-connections', '/api-keys', '/devices']) expect((await get(url, bound.headers)).status, url).toBe(403);
  });

  it('refuses a key without registered key material where an agent device is needed (403); the discovery lists answer empty', async () => {
    for (const url of [`/a2a/channels/${w1}/messages`]) {
      const res = await get(url, unbound.headers);
      expect(res.status, url).toBe(403);
      expect(res.body.detail).toContain('client_key_register');
    }
    // contract §4.13 discovery routes: the key has no device yet, so it belongs to nothing
    expect((await get('/workspaces', unbound.headers)).body).toEqual({ workspaces: [] });
    expect((await get('/team-rooms', unbound.headers)).body).toEqual({ team_rooms: [] });
  });

  it('validates X-Workspace-Id: malformed 400, a workspace the device is not in 403', async () => {
    for (const url of ['/workspaces', '/team-rooms']) {
      expect((await get(url, { ...bound.headers, 'x-workspace-id': 'not-a-uuid' })).status).toBe(400);
      expect((await get(url, { ...bound.headers, 'x-workspace-id': w2 })).status).toBe(403);
      expect((await get(url, { ...bound.headers, 'x-workspace-id': '00000000-0000-4000-8000-000000000000' })).status).toBe(403);
      expect((await get(url, { ...bound.headers, 'x-workspace-id': betaWs })).status).toBe(403);
      expect((await get(url, { ...unbound.headers, 'x-workspace-id': w1 })).status).toBe(403);
    }
  });

  it("keeps tenants apart: a key never sees another tenant's workspaces or team rooms", async () => {
    const acmeSees = (await get('/workspaces', bound.headers)).body.workspaces.map((w: any) => w.id);
    expect(acmeSees).not.toContain(betaWs);
    const betaSees = await get('/workspaces', betaKey.headers);
    expect(betaSees.body.workspaces).toEqual([{ id: betaWs, name: 'Beta team', role: 'admin' }]);
    expect((await get('/workspaces', { ...betaKey.headers, 'x-workspace-id': w1 })).status).toBe(403);
    expect((await get('/team-rooms', betaKey.headers)).body.team_rooms).toEqual([]);
    const ownerSees = (await get('/workspaces', beta.auth)).body.workspaces.map((w: any) => w.id);
    expect(ownerSees).toEqual([betaWs]);
  });

  it('lists the team rooms of its workspaces in which its device participates', async () => {
    const withKey = await createTeamRoom(w1, 'alpha-ops', [bound.deviceId!, od.deviceId]);
    await createTeamRoom(w1, 'alpha-private', [agent.deviceId, od.deviceId]);
    await createTeamRoom(w2, 'bravo', [agent.deviceId, od.deviceId]);
    const inW3 = await createTeamRoom(w3, 'charlie', [bound.deviceId!]);

    const all = await get('/team-rooms', bound.headers);
    expect(all.status).toBe(200);
    expect(all.body.team_rooms).toEqual([
      { id: withKey, name: 'alpha-ops', participant_count: 2, workspace_id: w1 },
      { id: inW3, name: 'charlie', participant_count: 1, workspace_id: w3 },
    ]);
    const narrowed = await get('/team-rooms', { ...bound.headers, 'x-workspace-id': w3 });
    expect(narrowed.body.team_rooms.map((r: any) => r.id)).toEqual([inW3]);
    expect((await get(`/team-rooms?workspace_id=${w1}`, bound.headers)).body.team_rooms.map((r: any) => r.id)).toEqual([withKey]);
    expect((await get(`/team-rooms?workspace_id=${w1}`, { ...bound.headers, 'x-workspace-id': w3 })).body.team_rooms).toEqual([]);

    // leaving the workspace hides its team rooms
    expect((await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${w3}/members/${bound.deviceId}`, headers: acme.auth })).status).toBe(204);
    expect((await get('/team-rooms', bound.headers)).body.team_rooms.map((r: any) => r.id)).toEqual([withKey]);
    expect((await get('/workspaces', bound.headers)).body.workspaces.map((w: any) => w.id)).toEqual([w1]);
    expect((await get('/workspaces', { ...bound.headers, 'x-workspace-id': w3 })).status).toBe(403);
  });

  it("refuses a key whose device the owner revoked (403)", async () => {
    const k = await bind(await createKey(acme));
    expect((await get('/workspaces', k.headers)).status).toBe(200);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${k.deviceId}/revoke`, headers: acme.auth })).status).toBe(200);
    expect((await get('/workspaces', k.headers)).status).toBe(403);
  });
});
