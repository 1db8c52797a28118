/** Workspaces (contract §2.5, §4.13): owner routes; the API-key side is in api-key-http.test.ts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('workspaces', () => {
  let t: TestApp;
  let owner: Owner;
  let other: Owner;
  let od: OwnerDevice;
  let a1: Agent;
  let a2: Agent;
  let foreign: Agent;

  beforeAll(async () => {
    t = await startApp();
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    a1 = await activeAgent(t, owner);
    a2 = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
    foreign = await activeAgent(t, other);
  });
  afterAll(() => t.close());

  const create = (payload: unknown, auth: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: '/api/v1/workspaces', headers: auth, payload: payload as object });
  const list = (auth: Record<string, string> = owner.auth) => t.request({ method: 'GET', url: '/api/v1/workspaces', headers: auth });

  it('creates a workspace with members (201) and lists it with its member count', async () => {
    const res = await create({ name: 'Research', members: [{ device_id: a1.deviceId, role: 'admin' }, { device_id: a2.deviceId.toUpperCase() }] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Research', role: 'owner' });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.created_at).toEqual(expect.any(String));
    expect(res.body.members).toHaveLength(2);
    expect(res.body.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ device_id: a1.deviceId, role: 'admin', status: 'ACTIVE' }),
        expect.objectContaining({ device_id: a2.deviceId, role: 'member' }),
      ]),
    );
    const empty = await create({ name: 'Empty' });
    expect(empty.status).toBe(201);
    expect(empty.body.members).toEqual([]);

    const listed = await list();
    expect(listed.status).toBe(200);
    expect(listed.body.workspaces).toEqual(
      expect.arrayContaining([
        { id: res.body.id, name: 'Research', role: 'owner', member_count: 2 },
        { id: empty.body.id, name: 'Empty', role: 'owner', member_count: 0 },
      ]),
    );
    const detail = await t.request({ method: 'GET', url: `/api/v1/workspaces/${res.body.id}`, headers: owner.auth });
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(res.body);
  });

  it('refuses members that are not ACTIVE agent devices of the tenant (400) and bad bodies', async () => {
    const pendingId = (await enroll(t, (await createInvite(t, owner)).token)).res.body.device_id as string;
    for (const device_id of [od.deviceId, foreign.deviceId, pendingId, '00000000-0000-4000-8000-000000000000']) {
      const res = await create({ name: 'Bad', members: [{ device_id }] });
      expect(res.status, device_id).toBe(400);
      expect(res.body.detail).toContain(device_id);
    }
    expect((await create({ name: 'Twice', members: [{ device_id: a1.deviceId }, { device_id: a1.deviceId }] })).status).toBe(400);
    expect((await create({})).status).toBe(400);
    expect((await create({ name: '' })).status).toBe(400);
    expect((await create({ name: '   ' })).status).toBe(400);
    expect((await create({ name: 'x', members: [{ device_id: 'nope' }] })).status).toBe(400);
    expect((await create({ name: 'x', members: [{ device_id: a1.deviceId, role: 'owner' }] })).status).toBe(400);
    expect((await list()).body.workspaces.map((w: any) => w.name)).not.toContain('Bad');
  });

  it('adds members, changes roles, removes members', async () => {
    const ws = (await create({ name: 'Ops' })).body;
    const url = `/api/v1/workspaces/${ws.id}/members`;
    const add = await t.request({ method: 'POST', url, headers: owner.auth, payload: { device_id: a1.deviceId } });
    expect(add.status).toBe(200);
    expect(add.body.members).toEqual([expect.objectContaining({ device_id: a1.deviceId, role: 'member' })]);
    const promote = await t.request({ method: 'POST', url, headers: owner.auth, payload: { device_id: a1.deviceId, role: 'admin' } });
    expect(promote.body.members).toEqual([expect.objectContaining({ device_id: a1.deviceId, role: 'admin' })]);
    expect((await t.request({ method: 'POST', url, headers: owner.auth, payload: { device_id: foreign.deviceId } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url, headers: owner.auth, payload: { device_id: a1.deviceId, role: 'boss' } })).status).toBe(400);
    expect((await t.request({ method: 'POST', url, headers: owner.auth, payload: {} })).status).toBe(400);

    expect((await t.request({ method: 'DELETE', url: `${url}/${a1.deviceId}`, headers: owner.auth })).status).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `${url}/${a1.deviceId}`, headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'DELETE', url: `${url}/not-a-uuid`, headers: owner.auth })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, headers: owner.auth })).body.members).toEqual([]);
  });

  it('drops deleted devices from members and counts', async () => {
    const agent = await activeAgent(t, owner);
    const ws = (await create({ name: 'Transient', members: [{ device_id: agent.deviceId }] })).body;
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: owner.auth })).status).toBe(200);
    const revoked = await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, headers: owner.auth });
    expect(revoked.body.members).toEqual([expect.objectContaining({ device_id: agent.deviceId, status: 'REVOKED' })]);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}`, headers: owner.auth })).status).toBe(204);
    expect((await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, headers: owner.auth })).body.members).toEqual([]);
    expect((await list()).body.workspaces.find((w: any) => w.id === ws.id).member_count).toBe(0);
  });

  it("needs authentication (401) and an owner for writes (403 for a device token); an agent's device token lists the agent's own", async () => {
    expect((await t.request({ method: 'POST', url: '/api/v1/workspaces', payload: { name: 'x' } })).status).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces' })).status).toBe(401);
    expect((await list({ authorization: 'Bearer nope' })).status).toBe(401);
    expect((await create({ name: 'x' }, a1.auth)).status).toBe(403);
    const ws = (await create({ name: 'Mine' })).body;
    const joined = (await create({ name: 'Joined', members: [{ device_id: a1.deviceId }] })).body;
    const own = await list(a1.auth);
    expect(own.status).toBe(200);
    expect(own.body.workspaces.map((w: any) => w.id)).toContain(joined.id);
    expect(own.body.workspaces.map((w: any) => w.id)).not.toContain(ws.id);
    expect((await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}` })).status).toBe(401);
    expect((await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/members`, payload: { device_id: a1.deviceId } })).status).toBe(401);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${ws.id}/members/${a1.deviceId}` })).status).toBe(401);
  });

  it("keeps tenants apart: another tenant's workspace is invisible (404)", async () => {
    const ws = (await create({ name: 'Secret', members: [{ device_id: a1.deviceId }] })).body;
    expect((await list(other.auth)).body.workspaces.map((w: any) => w.id)).not.toContain(ws.id);
    expect((await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, headers: other.auth })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/members`, headers: other.auth, payload: { device_id: foreign.deviceId } })).status).toBe(404);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${ws.id}/members/${a1.deviceId}`, headers: other.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces/00000000-0000-4000-8000-000000000000', headers: owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces/nope', headers: owner.auth })).status).toBe(400);
    // a user with no tenant
    const lonely = await t.ownerToken(`lonely-${Date.now()}@example.com`);
    expect((await list({ authorization: `Bearer ${lonely}` })).status).toBe(403);
  });

  describe('team rooms', () => {
    const createRoom = (payload: unknown, auth: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: '/api/v1/team-rooms', headers: auth, payload: payload as object });
    const listRooms = (query = '', auth: Record<string, string> = owner.auth) => t.request({ method: 'GET', url: `/api/v1/team-rooms${query}`, headers: auth });

    it('creates a team room of workspace members and owner devices (201) and lists it', async () => {
      const ws = (await create({ name: 'Team', members: [{ device_id: a1.deviceId }, { device_id: a2.deviceId }] })).body;
      const other = (await create({ name: 'Other team', members: [{ device_id: a1.deviceId }] })).body;
      const res = await createRoom({ workspace_id: ws.id, name: 'standup', member_device_ids: [a1.deviceId, a2.deviceId, od.deviceId], security_level: 'strict' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: res.body.room_id, name: 'standup', workspace_id: ws.id, security_level: 'strict' });
      expect(res.body.members.map((m: any) => m.device_id).sort()).toEqual([a1.deviceId, a2.deviceId, od.deviceId].sort());
      expect(res.body.conversations).toHaveLength(3);
      const second = await createRoom({ workspace_id: other.id, name: 'pair', member_device_ids: [a1.deviceId, od.deviceId] });
      expect(second.status).toBe(201);

      const all = await listRooms();
      expect(all.status).toBe(200);
      expect(all.body.team_rooms).toEqual(
        expect.arrayContaining([
          { id: res.body.id, name: 'standup', participant_count: 3, workspace_id: ws.id },
          { id: second.body.id, name: 'pair', participant_count: 2, workspace_id: other.id },
        ]),
      );
      const one = await listRooms(`?workspace_id=${ws.id}`);
      expect(one.body.team_rooms).toEqual([{ id: res.body.id, name: 'standup', participant_count: 3, workspace_id: ws.id }]);
      // a plain room is not a team room
      const plain = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'plain', member_device_ids: [a1.deviceId, od.deviceId] } });
      expect(plain.status).toBe(201);
      expect((await listRooms()).body.team_rooms.map((r: any) => r.id)).not.toContain(plain.body.room_id);
    });

    it('refuses participants outside the workspace (400), unknown workspaces (404) and bad bodies (400)', async () => {
      const ws = (await create({ name: 'Narrow', members: [{ device_id: a1.deviceId }] })).body;
      const outsider = await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [a1.deviceId, a2.deviceId] });
      expect(outsider.status).toBe(400);
      expect(outsider.body.detail).toContain(a2.deviceId);
      expect((await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [a1.deviceId, foreign.deviceId] })).status).toBe(400);
      expect((await createRoom({ workspace_id: '00000000-0000-4000-8000-000000000000', name: 'r', member_device_ids: [a1.deviceId] })).status).toBe(404);
      expect((await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [] })).status).toBe(400);
      expect((await createRoom({ workspace_id: ws.id, name: '', member_device_ids: [a1.deviceId] })).status).toBe(400);
      expect((await createRoom({ workspace_id: 'nope', name: 'r', member_device_ids: [a1.deviceId] })).status).toBe(400);
      expect((await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [a1.deviceId], security_level: 'max' })).status).toBe(400);
      expect((await createRoom({ name: 'r', member_device_ids: [a1.deviceId] })).status).toBe(400);
      expect((await listRooms('?workspace_id=nope')).status).toBe(400);
      expect((await listRooms(`?workspace_id=${ws.id}`)).body.team_rooms).toEqual([]);
    });

    it("needs authentication (401), an owner to create (403 for a device token; an agent's lists its own), and keeps tenants apart (404)", async () => {
      const ws = (await create({ name: 'Guarded', members: [{ device_id: a1.deviceId }] })).body;
      const room = (await createRoom({ workspace_id: ws.id, name: 'guarded', member_device_ids: [a1.deviceId] })).body;
      expect((await t.request({ method: 'POST', url: '/api/v1/team-rooms', payload: { workspace_id: ws.id, name: 'r', member_device_ids: [a1.deviceId] } })).status).toBe(401);
      expect((await t.request({ method: 'GET', url: '/api/v1/team-rooms' })).status).toBe(401);
      expect((await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [a1.deviceId] }, a1.auth)).status).toBe(403);
      const own = await listRooms('', a1.auth);
      expect(own.status).toBe(200);
      expect(own.body.team_rooms.map((r: any) => r.id)).toContain(room.id);
      expect((await createRoom({ workspace_id: ws.id, name: 'r', member_device_ids: [foreign.deviceId] }, other.auth)).status).toBe(404);
      const theirs = await listRooms('', other.auth);
      expect(theirs.status).toBe(200);
      expect(theirs.body.team_rooms.map((r: any) => r.id)).not.toContain(room.id);
      expect((await listRooms(`?workspace_id=${ws.id}`, other.auth)).body.team_rooms).toEqual([]);
    });
  });
});
