/**
 * Input-handling defects: a lone UTF-16 surrogate anywhere in a request (body, query string, params)
 * or a WebSocket frame is a 400 `{detail}`, never a 500 from PostgreSQL; `GET /ws` without the
 * upgrade is a 426 naming it; JSON bodies are not type-coerced while query strings still are.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { wsAddress, WsPool, type Frame } from '../../testing/ws-client.js';

const LONE = 'bad\ud800text';
const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();

function expectDetail(res: { status: number; body: any }, status: number): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body)).toEqual(['detail']);
  expect(typeof res.body.detail).toBe('string');
}

describe('input defects', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    owner = await newOwner(t);
    await registerOwnerDevice(t, owner);
    agent = await activeAgent(t, owner);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  describe('lone surrogates', () => {
    it('POST /skills/check with a lone surrogate in the skill is 400 {detail}, a well-formed astral character is not refused', async () => {
      const res = await t.request({ method: 'POST', url: '/api/v1/skills/check', headers: agent.auth, payload: { skill: LONE } });
      expectDetail(res, 400);
      expect(res.body.detail).toMatch(/surrogate/);
      expect(res.body.detail).toContain('skill');
      // A surrogate pair is valid text: it reaches the route (whatever it decides), never a 400 for encoding.
      const pair = await t.request({ method: 'POST', url: '/api/v1/skills/check', headers: agent.auth, payload: { skill: 'emoji-😀' } });
      expect(pair.status).toBe(200);
    });

    it('is refused deep inside a body and in an object key; undecodable URL bytes are no 500', async () => {
      const nested = await t.request({
        method: 'POST',
        url: '/api/v1/policies',
        headers: owner.auth,
        payload: { name: 'p', conditions: { message_type: ['text', LONE] }, action: 'allow' },
      });
      expectDetail(nested, 400);
      expect(nested.body.detail).toContain('conditions.message_type[1]');

      const key = await t.request({ method: 'PATCH', url: '/api/v1/settings', headers: owner.auth, payload: { [LONE]: 1 } });
      expectDetail(key, 400);
      expect(key.body.detail).toMatch(/surrogate/);

      // A URL cannot carry a lone surrogate as text: its CESU-8 bytes stay undecoded, never a 500.
      for (const url of ['/api/v1/audit/events?subject=%ED%A0%80', '/api/v1/audit/events?subject=%5Cud800']) {
        expect((await t.request({ method: 'GET', url, headers: owner.auth })).status, url).toBe(200);
      }
      expect((await t.request({ method: 'GET', url: '/api/v1/devices/%ED%A0%80/keys', headers: owner.auth })).status).toBe(400);

      const renamed = await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}`, headers: owner.auth, payload: { name: LONE } });
      expectDetail(renamed, 400);
      // the device kept its name
      const list = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
      expect(list.body.devices.find((d: { device_id: string }) => d.device_id === agent.deviceId).name).not.toContain('\ud800');
    });

    it('a WebSocket frame holding one answers an error frame 400 and stores nothing; the socket keeps working', async () => {
      const ws = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
      const history = async () => {
        const res = await t.request({ method: 'GET', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: owner.auth });
        expect(res.status).toBe(200);
        return (res.body.messages as unknown[]).length;
      };
      const before = await history();
      const base = { conversation_id: agent.conversationId, header_blob: 'aGRy', ciphertext: 'AQID' };
      ws.send('message', { ...base, client_ref: LONE });
      const err = await ws.next((f: Frame) => f.event === 'error');
      expect(err.data.status).toBe(400);
      expect(err.data.detail).toMatch(/surrogate/);
      expect(err.data.client_ref).toBeUndefined();

      ws.send('message', { ...base, client_ref: 'ok-ref', extra: { [LONE]: true } });
      const err2 = await ws.next((f: Frame) => f.event === 'error');
      expect(err2.data).toMatchObject({ status: 400, client_ref: 'ok-ref' });

      // the same frame with well-formed text is accepted
      ws.send('message', { ...base, client_ref: 'good-😀' });
      const ack = await ws.next((f: Frame) => f.event === 'message_ack');
      expect(ack.data.client_ref).toBe('good-😀');
      await ws.roundTrip();
      expect(ws.received.filter((f) => f.event === 'message_ack')).toHaveLength(1);
      expect(await history()).toBe(before + 1);
    });
  });

  describe('GET /ws without an upgrade', () => {
    it('answers 426 {detail} with Upgrade: websocket', async () => {
      const res = await fetch(`${t.baseUrl}/api/v1/ws`);
      expect(res.status).toBe(426);
      expect(res.headers.get('upgrade')).toBe('websocket');
      const body = (await res.json()) as { detail: string };
      expect(Object.keys(body)).toEqual(['detail']);
      expect(body.detail).toMatch(/WebSocket upgrade/);
      // the socket itself still upgrades
      const ws = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
      await ws.roundTrip();
    });
  });

  describe('no type coercion of JSON bodies', () => {
    it('a scalar where an array is required, or a string where a number is, is 400; the right types pass', async () => {
      const partner = await newOwner(t, 'Partner');
      const terms = { partner_tenant_id: partner.tenantId, trust_floor: 0.8, allowed_capabilities: ['translate'], expires_at: inDays(30) };
      const url = '/api/v1/federation/agreements';
      const scalar = await t.request({ method: 'POST', url, headers: owner.auth, payload: { ...terms, allowed_capabilities: 'translate' } });
      expectDetail(scalar, 400);
      expect(scalar.body.detail).toContain('allowed_capabilities');
      expectDetail(await t.request({ method: 'POST', url, headers: owner.auth, payload: { ...terms, trust_floor: '0.8' } }), 400);
      expectDetail(await t.request({ method: 'POST', url, headers: owner.auth, payload: { ...terms, audit_sharing: 'true' } }), 400);
      // nothing was created by the refused requests
      expect((await t.request({ method: 'GET', url, headers: owner.auth })).body.agreements).toHaveLength(0);
      const ok = await t.request({ method: 'POST', url, headers: owner.auth, payload: terms });
      expect(ok.status).toBe(201);
      expect(ok.body.allowed_capabilities).toEqual(['translate']);
    });

    it('query strings are still coerced (numbers from text)', async () => {
      const res = await t.request({ method: 'GET', url: '/api/v1/audit/events?limit=1', headers: owner.auth });
      expect(res.status).toBe(200);
      expect(res.body.events).toHaveLength(1);
      expectDetail(await t.request({ method: 'GET', url: '/api/v1/audit/events?limit=abc', headers: owner.auth }), 400);
    });
  });
});
