/**
 * Conversations, messages and topics over HTTP (contract §2.4, §4.5, §7; design §7): listing with
 * topics, owner sends with X-Device-Id, base64 wire fields, size limit, history paging with
 * opaque total-ordered cursors, counterparty keys, topic create / rename / archive, and the
 * 401 / 404-across-tenants rules of every route.
 */
import { randomUUID } from 'node:crypto';
import type { MessageOut } from '../../src/modules/conversations/messages.js';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { holdNextMessageSeq } from '../../testing/seq-hostage.js';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const EPOCH = '1970-01-01T00:00:00.000Z';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Msg = MessageOut;

describe('conversations, messages and topics', () => {
  let t: TestApp;
  // Tenant A: owner, its device, an agent; tenant B: the same, to prove isolation.
  let a: Owner;
  let aDev: OwnerDevice;
  let aAgent: Agent;
  let b: Owner;
  let bDev: OwnerDevice;
  let bAgent: Agent;

  const send = (owner: Owner, deviceId: string | undefined, conversationId: string, payload: Record<string, unknown>) =>
    t.request({
      method: 'POST',
      url: `/api/v1/conversations/${conversationId}/messages`,
      headers: { ...owner.auth, ...(deviceId ? { 'x-device-id': deviceId } : {}) },
      payload,
    });
  const sendText = (owner: Owner, dev: OwnerDevice, conversationId: string, text: string, extra: Record<string, unknown> = {}) =>
    send(owner, dev.deviceId, conversationId, { header_blob: b64(`h:${text}`), ciphertext: b64(text), ...extra });
  const history = (owner: Owner, conversationId: string, query: Record<string, string | number> = {}) => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return t.request({ method: 'GET', url: `/api/v1/conversations/${conversationId}/messages${qs ? `?${qs}` : ''}`, headers: owner.auth });
  };
  /** Follow next_cursor from `start` until an empty page; returns every page. */
  async function pageAll(owner: Owner, conversationId: string, limit: number, start: string, extra: Record<string, string> = {}) {
    const pages: Msg[][] = [];
    let since = start;
    for (let i = 0; i < 100; i++) {
      const res = await history(owner, conversationId, { limit, since, ...extra });
      expect(res.status).toBe(200);
      const msgs = res.body.messages as Msg[];
      expect(msgs.length).toBeLessThanOrEqual(limit);
      if (msgs.length === 0) return pages;
      pages.push(msgs);
      expect(typeof res.body.next_cursor).toBe('string');
      since = res.body.next_cursor;
    }
    throw new Error('paging did not terminate');
  }

  beforeAll(async () => {
    // More agents are enrolled here than the contract's 5 enrollments per IP per 10 minutes allow.
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Tenant A');
    aDev = await registerOwnerDevice(t, a);
    aAgent = await activeAgent(t, a);
    b = await newOwner(t, 'Tenant B');
    bDev = await registerOwnerDevice(t, b);
    bAgent = await activeAgent(t, b);
  });
  afterAll(() => t?.close());

  describe('GET /conversations', () => {
    it("lists the tenant's conversations with their group's topics", async () => {
      const res = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: a.auth });
      expect(res.status).toBe(200);
      const convs = res.body.conversations as any[];
      const c = convs.find((x) => x.conversation_id === aAgent.conversationId);
      expect(c).toMatchObject({
        conversation_id: aAgent.conversationId,
        message_group_id: aAgent.groupId,
        agent_device_id: aAgent.deviceId,
        owner_device_id: aDev.deviceId,
      });
      expect(c.topics).toEqual([expect.objectContaining({ topic_id: aAgent.defaultTopicId, group_id: aAgent.groupId, is_default: true, archived: false })]);
      expect(typeof c.topics[0].name).toBe('string');
      // Tenant B's conversation is invisible to A and vice versa.
      expect(convs.map((x) => x.conversation_id)).not.toContain(bAgent.conversationId);
      const resB = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: b.auth });
      expect(resB.status).toBe(200);
      expect(resB.body.conversations.map((x: any) => x.conversation_id)).toEqual([bAgent.conversationId]);
    });

    it('filters by device_id', async () => {
      const res = await t.request({ method: 'GET', url: `/api/v1/conversations?device_id=${aAgent.deviceId}`, headers: a.auth });
      expect(res.status).toBe(200);
      expect(res.body.conversations.length).toBeGreaterThan(0);
      for (const c of res.body.conversations) expect([c.agent_device_id, c.owner_device_id]).toContain(aAgent.deviceId);
      const other = await t.request({ method: 'GET', url: `/api/v1/conversations?device_id=${bAgent.deviceId}`, headers: a.auth });
      expect(other.status).toBe(200);
      expect(other.body.conversations).toEqual([]);
    });

    it('401 without or with a bad token', async () => {
      for (const headers of [{}, { authorization: 'Bearer nonsense' }, { authorization: `Bearer ${aAgent.jwt}x` }]) {
        const res = await t.request({ method: 'GET', url: '/api/v1/conversations', headers });
        expect(res.status).toBe(401);
        expect(typeof res.body.detail).toBe('string');
      }
    });
  });

  describe('POST /conversations/{id}/messages', () => {
    it('stores base64 header and ciphertext and answers 201 with the message', async () => {
      const ct = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
      const res = await send(a, aDev.deviceId, aAgent.conversationId!, { header_blob: b64('header'), ciphertext: ct.toString('base64'), message_type: 'status_alert', priority: 'high' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        conversation_id: aAgent.conversationId,
        sender_device_id: aDev.deviceId,
        message_type: 'status_alert',
        priority: 'high',
        topic_id: aAgent.defaultTopicId,
        message_group_id: aAgent.groupId,
      });
      expect(res.body.message_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(res.body.timestamp))).toBe(false);

      const hist = await history(a, aAgent.conversationId!, { limit: 200 });
      expect(hist.status).toBe(200);
      const stored = (hist.body.messages as Msg[]).find((m) => m.message_id === res.body.message_id)!;
      expect(stored).toBeDefined();
      expect(Buffer.from(stored.ciphertext, 'base64').equals(ct)).toBe(true);
      expect(Buffer.from(stored.header_blob, 'base64').toString()).toBe('header');
      expect(stored.sender_device_id).toBe(aDev.deviceId);
    });

    it('defaults message_type to text and priority to normal', async () => {
      const res = await sendText(a, aDev, aAgent.conversationId!, 'plain');
      expect(res.status).toBe(201);
      expect(res.body.message_type).toBe('text');
      expect(res.body.priority).toBe('normal');
    });

    it('400 without X-Device-Id, or with one that is not a UUID', async () => {
      for (const dev of [undefined, 'not-a-uuid']) {
        const res = await send(a, dev, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: b64('c') });
        expect(res.status).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it("403 when X-Device-Id names the agent device or another user's owner device", async () => {
      const agentDev = await send(a, aAgent.deviceId, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: b64('c') });
      expect(agentDev.status).toBe(403);
      expect(typeof agentDev.body.detail).toBe('string');

      // A second owner user in tenant A (membership row written directly: no route adds members yet).
      const sub2 = `second-${randomUUID()}@example.com`;
      await withTenant(t.app.parley.database.db, a.tenantId, (tx) =>
        tx.execute(sql`insert into memberships (tenant_id, user_sub, role) values (${a.tenantId}, ${sub2}, 'OWNER_ADMIN')`),
      );
      const token2 = await t.ownerToken(sub2);
      const a2: Owner = { sub: sub2, token: token2, tenantId: a.tenantId, auth: { authorization: `Bearer ${token2}` } };
      const a2Dev = await registerOwnerDevice(t, a2);

      const othersDevice = await send(a, a2Dev.deviceId, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: b64('c') });
      expect(othersDevice.status).toBe(403);
      expect(typeof othersDevice.body.detail).toBe('string');

      // The second user's conversation with the agent: A's own device is not a side of it.
      const convs = await t.request({ method: 'GET', url: `/api/v1/conversations?device_id=${a2Dev.deviceId}`, headers: a2.auth });
      const c2 = (convs.body.conversations as any[]).find((c) => c.agent_device_id === aAgent.deviceId);
      expect(c2).toBeDefined();
      const notASide = await sendText(a, aDev, c2.conversation_id, 'intrude');
      expect(notASide.status).toBe(403);
      const own = await sendText(a2, a2Dev, c2.conversation_id, 'hello from user 2');
      expect(own.status).toBe(201);
    });

    it("X-Device-Id naming another tenant's device never sends (403 or 404)", async () => {
      const res = await sendText(a, bDev, aAgent.conversationId!, 'x');
      expect([403, 404]).toContain(res.status);
      expect(typeof res.body.detail).toBe('string');
    });

    it('400 for fields that are not base64, and for bad message_type / priority / missing fields', async () => {
      const bad: Record<string, unknown>[] = [
        { header_blob: b64('h'), ciphertext: 'not base64!' },
        { header_blob: '***', ciphertext: b64('c') },
        { header_blob: b64('h'), ciphertext: 'QUJD=' }, // length not a multiple of 4
        { header_blob: b64('h'), ciphertext: 'QQ' }, // unpadded
        { header_blob: b64('h'), ciphertext: 'ab-_' }, // base64url alphabet
        { header_blob: b64('h'), ciphertext: 12345 },
        { header_blob: b64('h') },
        { ciphertext: b64('c') },
        { header_blob: b64('h'), ciphertext: b64('c'), message_type: 'gossip' },
        { header_blob: b64('h'), ciphertext: b64('c'), priority: 'critical' },
        { header_blob: b64('h'), ciphertext: b64('c'), message_group_id: 'nope' },
        { header_blob: b64('h'), ciphertext: b64('c'), message_group_id: randomUUID() },
      ];
      for (const payload of bad) {
        const res = await send(a, aDev.deviceId, aAgent.conversationId!, payload);
        expect(res.status, JSON.stringify(payload)).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it('400 for an empty ciphertext, naming the field; nothing is stored', async () => {
      const before = (await history(a, aAgent.conversationId!, { limit: 200 })).body.messages.length;
      const res = await send(a, aDev.deviceId, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: '' });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/ciphertext/);
      expect((await history(a, aAgent.conversationId!, { limit: 200 })).body.messages).toHaveLength(before);
    });

    it('accepts every contract message type and priority', async () => {
      const types = ['text', 'decision_request', 'status_alert', 'action_confirmation', 'artifact', 'attachment', 'policy_alert', 'approval_request', 'approval_response'];
      const priorities = ['low', 'normal', 'high', 'urgent'];
      for (const [i, message_type] of types.entries()) {
        const priority = priorities[i % priorities.length];
        const res = await sendText(a, aDev, aAgent.conversationId!, `t${i}`, { message_type, priority });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ message_type, priority });
      }
    });

    it('413 over 256 KiB of ciphertext; exactly 256 KiB is accepted', async () => {
      const limit = 256 * 1024;
      const ok = await send(a, aDev.deviceId, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: Buffer.alloc(limit, 7).toString('base64') });
      expect(ok.status).toBe(201);
      const big = await send(a, aDev.deviceId, aAgent.conversationId!, { header_blob: b64('h'), ciphertext: Buffer.alloc(limit + 1, 7).toString('base64') });
      expect(big.status).toBe(413);
      expect(typeof big.body.detail).toBe('string');
    });

    it('404 for an unknown conversation and for another tenant\'s conversation', async () => {
      const unknown = await sendText(a, aDev, randomUUID(), 'x');
      expect(unknown.status).toBe(404);
      expect(typeof unknown.body.detail).toBe('string');
      const cross = await sendText(a, aDev, bAgent.conversationId!, 'x');
      expect(cross.status).toBe(404);
      // B's own device naming A's conversation: also 404, and nothing lands in A's history.
      const crossB = await sendText(b, bDev, aAgent.conversationId!, 'from B');
      expect(crossB.status).toBe(404);
      const hist = await history(a, aAgent.conversationId!, { limit: 200 });
      expect((hist.body.messages as Msg[]).some((m) => m.sender_device_id === bDev.deviceId)).toBe(false);
    });

    it('400 for a conversation id that is not a UUID', async () => {
      const res = await sendText(a, aDev, 'not-a-uuid', 'x');
      expect(res.status).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    });

    it('401 without a token, and with an agent device token (owner route)', async () => {
      const none = await t.request({ method: 'POST', url: `/api/v1/conversations/${aAgent.conversationId}/messages`, headers: { 'x-device-id': aDev.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64('c') } });
      expect(none.status).toBe(401);
      expect(typeof none.body.detail).toBe('string');
      const agentTok = await t.request({ method: 'POST', url: `/api/v1/conversations/${aAgent.conversationId}/messages`, headers: { ...aAgent.auth, 'x-device-id': aAgent.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64('c') } });
      expect([401, 403]).toContain(agentTok.status);
    });

    it('403 when X-Device-Id names a revoked owner device of the caller', async () => {
      const o = await newOwner(t, 'Revoked device tenant');
      const d1 = await registerOwnerDevice(t, o);
      const d2 = await registerOwnerDevice(t, o);
      const ag = await activeAgent(t, o);
      const convs = await t.request({ method: 'GET', url: `/api/v1/conversations?device_id=${d2.deviceId}`, headers: o.auth });
      const c2 = (convs.body.conversations as any[]).find((c) => c.agent_device_id === ag.deviceId);
      expect(c2).toBeDefined();
      const rev = await t.request({ method: 'PATCH', url: `/api/v1/devices/${d2.deviceId}/revoke`, headers: o.auth });
      expect(rev.status).toBe(200);
      const res = await sendText(o, d2, c2.conversation_id, 'after revoke');
      expect(res.status).toBe(403);
      expect((await sendText(o, d1, ag.conversationId!, 'still fine')).status).toBe(201);
    });
  });

  describe('GET /conversations/{id}/messages (history paging, design §7)', () => {
    let o: Owner;
    let od: OwnerDevice;
    let ag: Agent;
    let sentIds: string[];
    let all: Msg[];

    beforeAll(async () => {
      o = await newOwner(t, 'Paging');
      od = await registerOwnerDevice(t, o);
      ag = await activeAgent(t, o);
      sentIds = [];
      // 30 messages in 3 rounds of 10 concurrent sends: many share a millisecond.
      for (let round = 0; round < 3; round++) {
        const res = await Promise.all(Array.from({ length: 10 }, (_, i) => sendText(o, od, ag.conversationId!, `r${round}-${i}`)));
        for (const r of res) {
          expect(r.status).toBe(201);
          sentIds.push(r.body.message_id);
        }
      }
      const full = await history(o, ag.conversationId!, { limit: 200 });
      expect(full.status).toBe(200);
      all = full.body.messages;
    });

    it('full history holds every sent message once, oldest first, rounds in send order', () => {
      expect(all).toHaveLength(30);
      expect(new Set(all.map((m) => m.message_id))).toEqual(new Set(sentIds));
      // A round was sent only after the previous round was acknowledged.
      const pos = new Map(all.map((m, i) => [m.message_id, i]));
      for (let round = 1; round < 3; round++) {
        const prevMax = Math.max(...sentIds.slice((round - 1) * 10, round * 10).map((id) => pos.get(id)!));
        const curMin = Math.min(...sentIds.slice(round * 10, (round + 1) * 10).map((id) => pos.get(id)!));
        expect(prevMax).toBeLessThan(curMin);
      }
      for (let i = 1; i < all.length; i++) expect(Date.parse(all[i]!.timestamp)).toBeGreaterThanOrEqual(Date.parse(all[i - 1]!.timestamp) - 1000);
    });

    it('without since: the latest `limit` messages, oldest first, with next_cursor', async () => {
      const res = await history(o, ag.conversationId!, { limit: 7 });
      expect(res.status).toBe(200);
      expect((res.body.messages as Msg[]).map((m) => m.message_id)).toEqual(all.slice(-7).map((m) => m.message_id));
      expect(typeof res.body.next_cursor).toBe('string');
      // Nothing is newer than the latest page.
      const after = await history(o, ag.conversationId!, { limit: 7, since: res.body.next_cursor });
      expect(after.status).toBe(200);
      expect(after.body.messages).toEqual([]);
    });

    it('default limit applies when limit is omitted (50 >= 30 here)', async () => {
      const res = await history(o, ag.conversationId!);
      expect(res.status).toBe(200);
      expect(res.body.messages.map((m: Msg) => m.message_id)).toEqual(all.map((m) => m.message_id));
    });

    it('paging with since = next_cursor (limit 7) never skips or repeats messages', async () => {
      const pages = await pageAll(o, ag.conversationId!, 7, EPOCH);
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 7, 2]);
      expect(pages.flat().map((m) => m.message_id)).toEqual(all.map((m) => m.message_id));
    });

    it('messages sharing one millisecond are neither skipped nor repeated', async () => {
      const o2 = await newOwner(t, 'Same ms');
      const od2 = await registerOwnerDevice(t, o2);
      const ag2 = await activeAgent(t, o2);
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await sendText(o2, od2, ag2.conversationId!, `m${i}`);
        expect(r.status).toBe(201);
        ids.push(r.body.message_id);
      }
      // Fixture: put every message of this conversation on the same instant.
      const instant = '2030-01-02T03:04:05.678Z';
      await withTenant(t.app.parley.database.db, o2.tenantId, (tx) =>
        tx.execute(sql`update messages set created_at = ${instant}::timestamptz where conversation_id = ${ag2.conversationId}`),
      );
      const pages = await pageAll(o2, ag2.conversationId!, 7, EPOCH);
      expect(pages.flat().map((m) => m.message_id)).toEqual(ids);
      expect(pages.flat().every((m) => m.timestamp === instant)).toBe(true);
      // since as a timestamp is exclusive: the shared instant itself excludes all of them.
      const atInstant = await history(o2, ag2.conversationId!, { since: instant });
      expect(atInstant.status).toBe(200);
      expect(atInstant.body.messages).toEqual([]);
      const justBefore = await history(o2, ag2.conversationId!, { since: '2030-01-02T03:04:05.677Z', limit: 7 });
      expect(justBefore.body.messages.map((m: Msg) => m.message_id)).toEqual(ids.slice(0, 7));
    });

    it('since as an ISO timestamp answers the messages strictly after it', async () => {
      const pivot = all[12]!.timestamp;
      const expected = all.filter((m) => Date.parse(m.timestamp) > Date.parse(pivot)).map((m) => m.message_id);
      const res = await history(o, ag.conversationId!, { since: pivot, limit: 200 });
      expect(res.status).toBe(200);
      expect(res.body.messages.map((m: Msg) => m.message_id)).toEqual(expected);
      // Also with a numeric offset form of ISO 8601.
      const offset = new Date(Date.parse(pivot)).toISOString().replace('Z', '+00:00');
      const res2 = await history(o, ag.conversationId!, { since: offset, limit: 200 });
      expect(res2.status).toBe(200);
      expect(res2.body.messages.map((m: Msg) => m.message_id)).toEqual(expected);
    });

    it('a client catching up by cursor gets exactly the messages sent since', async () => {
      const latest = await history(o, ag.conversationId!, { limit: 1 });
      const cursor = latest.body.next_cursor as string;
      const r1 = await sendText(o, od, ag.conversationId!, 'late-1');
      const r2 = await sendText(o, od, ag.conversationId!, 'late-2');
      const res = await history(o, ag.conversationId!, { since: cursor });
      expect(res.body.messages.map((m: Msg) => m.message_id)).toEqual([r1.body.message_id, r2.body.message_id]);
      all = (await history(o, ag.conversationId!, { limit: 200 })).body.messages;
    });

    it('topic_id filters the history', async () => {
      const topic = await t.request({ method: 'POST', url: '/api/v1/topics', headers: o.auth, payload: { group_id: ag.groupId, name: 'Billing' } });
      expect(topic.status).toBe(201);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await sendText(o, od, ag.conversationId!, `topic-${i}`, { topic_id: topic.body.topic_id });
        expect(r.status).toBe(201);
        expect(r.body.topic_id).toBe(topic.body.topic_id);
        ids.push(r.body.message_id);
      }
      await sendText(o, od, ag.conversationId!, 'default topic again');
      const res = await history(o, ag.conversationId!, { topic_id: topic.body.topic_id });
      expect(res.status).toBe(200);
      expect(res.body.messages.map((m: Msg) => m.message_id)).toEqual(ids);
      const pages = await pageAll(o, ag.conversationId!, 2, EPOCH, { topic_id: topic.body.topic_id });
      expect(pages.flat().map((m) => m.message_id)).toEqual(ids);
      const def = await history(o, ag.conversationId!, { topic_id: ag.defaultTopicId, limit: 200 });
      expect(def.body.messages.length).toBeGreaterThan(0);
      expect(def.body.messages.every((m: Msg) => m.topic_id === ag.defaultTopicId)).toBe(true);
    });

    it('400 for a bad since, a bad limit or a bad topic_id', async () => {
      for (const q of [
        { since: 'yesterday' },
        { since: 'abc' },
        { since: '2024-13-45T99:00:00Z' },
        { limit: 201 },
        { limit: 0 },
        { limit: -1 },
        { limit: 'ten' },
        { topic_id: 'nope' },
      ] as Record<string, string | number>[]) {
        const res = await history(o, ag.conversationId!, q);
        expect(res.status, JSON.stringify(q)).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
      expect((await history(o, ag.conversationId!, { limit: 200 })).status).toBe(200);
    });

    it('400 for a since that names an impossible calendar date', async () => {
      for (const since of ['2024-02-30T00:00:00Z', '2023-04-31T12:00:00Z']) {
        const res = await history(o, ag.conversationId!, { since });
        expect(res.status, since).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
    });

    it('since at the edges of the timestamp range never answers 5xx', async () => {
      for (const since of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
        const res = await history(o, ag.conversationId!, { since, limit: 5 });
        expect([200, 400], `${since}: ${JSON.stringify(res.body)}`).toContain(res.status);
      }
    });

    it("404 for an unknown conversation and for another tenant's; 401 without a token", async () => {
      expect((await history(o, randomUUID())).status).toBe(404);
      const cross = await history(b, ag.conversationId!);
      expect(cross.status).toBe(404);
      expect(typeof cross.body.detail).toBe('string');
      const none = await t.request({ method: 'GET', url: `/api/v1/conversations/${ag.conversationId}/messages` });
      expect(none.status).toBe(401);
    });

    it.runIf(backend === 'postgres')('a reader following next_cursor sees a message whose transaction commits late', async () => {
      // Two writes in flight at once (the writer runs several transactions concurrently on
      // PostgreSQL): the first takes the lower sequence number but commits after the second.
      // A reader paging by cursor in between must still see the first one eventually.
      const o3 = await newOwner(t, 'Late commit');
      const od3 = await registerOwnerDevice(t, o3);
      const ag3 = await activeAgent(t, o3);
      const first = await sendText(o3, od3, ag3.conversationId!, 'm0');
      expect(first.status).toBe(201);
      const start = (await history(o3, ag3.conversationId!)).body.next_cursor as string;

      // Hold the next sequence value hostage in an open transaction (unique index on seq), so the
      // next insert that draws it waits until this transaction ends.
      const blocker = new pg.Client({ connectionString: t.config.databaseUrl });
      await blocker.connect();
      let slow: Promise<{ status: number; body: any }> | undefined;
      try {
        await holdNextMessageSeq(blocker, o3.tenantId, od3, ag3);
        slow = sendText(o3, od3, ag3.conversationId!, 'slow');
        await sleep(300);
        // A writer that serialises commits may hold this one back until 'slow' commits: fine too.
        const fastP = sendText(o3, od3, ag3.conversationId!, 'fast');
        await Promise.race([fastP, sleep(1500)]);
        // A client catching up while 'slow' is still uncommitted ...
        const seen: string[] = [];
        let cursor = start;
        const readAll = async () => {
          for (let i = 0; i < 10; i++) {
            const page = await history(o3, ag3.conversationId!, { since: cursor });
            expect(page.status).toBe(200);
            if (page.body.messages.length === 0) return;
            seen.push(...(page.body.messages as Msg[]).map((m) => m.message_id));
            cursor = page.body.next_cursor;
          }
        };
        await readAll();
        await blocker.query('rollback');
        const [slowRes, fast] = await Promise.all([slow, fastP]);
        expect(slowRes.status).toBe(201);
        expect(fast.status).toBe(201);
        // ... and again after everything committed, from where it left off.
        await readAll();
        // Both messages are committed and in the full history ...
        const full = (await history(o3, ag3.conversationId!, { limit: 200 })).body.messages.map((m: Msg) => m.message_id);
        expect(full).toEqual(expect.arrayContaining([slowRes.body.message_id, fast.body.message_id]));
        // ... and the client that followed next_cursor must have seen both, each once.
        expect(seen).toContain(fast.body.message_id);
        expect(seen, 'the late-committing message was skipped by cursor paging').toContain(slowRes.body.message_id);
        expect(new Set(seen).size).toBe(seen.length);
      } finally {
        await blocker.query('rollback').catch(() => undefined);
        await blocker.end();
        await slow?.catch(() => undefined);
      }
    });
  });

  describe('GET /conversations/{id}/keys', () => {
    it("answers the counterparty's public keys", async () => {
      for (const headers of [{ ...a.auth, 'x-device-id': aDev.deviceId }, a.auth]) {
        const res = await t.request({ method: 'GET', url: `/api/v1/conversations/${aAgent.conversationId}/keys`, headers });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          conversation_id: aAgent.conversationId,
          device_id: aAgent.deviceId,
          identity_public_key: aAgent.keys.identityPublicKey,
          ephemeral_public_key: aAgent.keys.ephemeralPublicKey,
          kind: 'agent',
          status: 'ACTIVE',
        });
        expect(res.body.fingerprint).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/);
      }
    });

    it("404 unknown or another tenant's conversation; 401 without a token; 400 bad X-Device-Id", async () => {
      expect((await t.request({ method: 'GET', url: `/api/v1/conversations/${randomUUID()}/keys`, headers: a.auth })).status).toBe(404);
      const cross = await t.request({ method: 'GET', url: `/api/v1/conversations/${bAgent.conversationId}/keys`, headers: a.auth });
      expect(cross.status).toBe(404);
      expect(JSON.stringify(cross.body)).not.toContain(bAgent.keys.identityPublicKey);
      expect((await t.request({ method: 'GET', url: `/api/v1/conversations/${aAgent.conversationId}/keys` })).status).toBe(401);
      const bad = await t.request({ method: 'GET', url: `/api/v1/conversations/${aAgent.conversationId}/keys`, headers: { ...a.auth, 'x-device-id': 'zzz' } });
      expect(bad.status).toBe(400);
    });
  });

  describe('topics', () => {
    const createTopic = (owner: Owner, payload: unknown) => t.request({ method: 'POST', url: '/api/v1/topics', headers: owner.auth, payload: payload as Record<string, unknown> });

    it('GET /topics?group_id= lists the group topics (default first); without group_id all of the tenant', async () => {
      const res = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${aAgent.groupId}`, headers: a.auth });
      expect(res.status).toBe(200);
      expect(res.body.topics.length).toBeGreaterThanOrEqual(1);
      expect(res.body.topics.find((x: any) => x.is_default)).toMatchObject({ topic_id: aAgent.defaultTopicId, group_id: aAgent.groupId, archived: false });
      for (const x of res.body.topics) expect(x.group_id).toBe(aAgent.groupId);

      const allA = await t.request({ method: 'GET', url: '/api/v1/topics', headers: a.auth });
      expect(allA.status).toBe(200);
      const ids = allA.body.topics.map((x: any) => x.topic_id);
      expect(ids).toContain(aAgent.defaultTopicId);
      expect(ids).not.toContain(bAgent.defaultTopicId);
    });

    it("GET /topics never shows another tenant's group; 401 without a token; 400 bad group_id", async () => {
      const cross = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${bAgent.groupId}`, headers: a.auth });
      expect([200, 404]).toContain(cross.status);
      if (cross.status === 200) expect(cross.body.topics).toEqual([]);
      expect((await t.request({ method: 'GET', url: '/api/v1/topics' })).status).toBe(401);
      expect((await t.request({ method: 'GET', url: '/api/v1/topics?group_id=xyz', headers: a.auth })).status).toBe(400);
    });

    it('POST /topics creates a topic: 201 {topic_id, group_id, name, is_default:false, archived:false}', async () => {
      const res = await createTopic(a, { group_id: aAgent.groupId, name: 'Deployments' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ group_id: aAgent.groupId, name: 'Deployments', is_default: false, archived: false });
      expect(res.body.topic_id).toMatch(/^[0-9a-f-]{36}$/);
      const list = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${aAgent.groupId}`, headers: a.auth });
      expect(list.body.topics.map((x: any) => x.topic_id)).toContain(res.body.topic_id);
      const convs = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: a.auth });
      const c = convs.body.conversations.find((x: any) => x.conversation_id === aAgent.conversationId);
      expect(c.topics.map((x: any) => x.topic_id)).toContain(res.body.topic_id);
    });

    it('POST /topics: 400 on bad bodies, 404 unknown or cross-tenant group, 401 without a token', async () => {
      for (const payload of [{}, { group_id: aAgent.groupId }, { name: 'x' }, { group_id: 'nope', name: 'x' }, { group_id: aAgent.groupId, name: '' }, { group_id: aAgent.groupId, name: 'x'.repeat(101) }]) {
        const res = await createTopic(a, payload);
        expect(res.status, JSON.stringify(payload)).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
      expect((await createTopic(a, { group_id: randomUUID(), name: 'x' })).status).toBe(404);
      const cross = await createTopic(a, { group_id: bAgent.groupId, name: 'sneaky' });
      expect(cross.status).toBe(404);
      const bTopics = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${bAgent.groupId}`, headers: b.auth });
      expect(bTopics.body.topics.map((x: any) => x.name)).not.toContain('sneaky');
      expect((await t.request({ method: 'POST', url: '/api/v1/topics', payload: { group_id: aAgent.groupId, name: 'x' } })).status).toBe(401);
    });

    it('PATCH /topics/{id} renames; 400 bad name, 404 unknown or cross-tenant, 401 without a token', async () => {
      const created = await createTopic(a, { group_id: aAgent.groupId, name: 'Old' });
      const id = created.body.topic_id;
      const res = await t.request({ method: 'PATCH', url: `/api/v1/topics/${id}`, headers: a.auth, payload: { name: 'New' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ topic_id: id, group_id: aAgent.groupId, name: 'New', is_default: false, archived: false });
      const list = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${aAgent.groupId}`, headers: a.auth });
      expect(list.body.topics.find((x: any) => x.topic_id === id).name).toBe('New');

      expect((await t.request({ method: 'PATCH', url: `/api/v1/topics/${id}`, headers: a.auth, payload: { name: '' } })).status).toBe(400);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/topics/${id}`, headers: a.auth, payload: {} })).status).toBe(400);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/topics/${randomUUID()}`, headers: a.auth, payload: { name: 'x' } })).status).toBe(404);
      const cross = await t.request({ method: 'PATCH', url: `/api/v1/topics/${bAgent.defaultTopicId}`, headers: a.auth, payload: { name: 'hijack' } });
      expect(cross.status).toBe(404);
      const bList = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${bAgent.groupId}`, headers: b.auth });
      expect(bList.body.topics.find((x: any) => x.topic_id === bAgent.defaultTopicId).name).not.toBe('hijack');
      expect((await t.request({ method: 'PATCH', url: `/api/v1/topics/${id}`, payload: { name: 'x' } })).status).toBe(401);
    });

    it('POST /topics/{id}/archive archives; the default topic answers 409; 404 unknown or cross-tenant; 401', async () => {
      const created = await createTopic(a, { group_id: aAgent.groupId, name: 'Temp' });
      const id = created.body.topic_id;
      const res = await t.request({ method: 'POST', url: `/api/v1/topics/${id}/archive`, headers: a.auth });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ topic_id: id, archived: true, is_default: false });

      const def = await t.request({ method: 'POST', url: `/api/v1/topics/${aAgent.defaultTopicId}/archive`, headers: a.auth });
      expect(def.status).toBe(409);
      expect(typeof def.body.detail).toBe('string');
      const list = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${aAgent.groupId}`, headers: a.auth });
      expect(list.body.topics.find((x: any) => x.topic_id === aAgent.defaultTopicId).archived).toBe(false);

      expect((await t.request({ method: 'POST', url: `/api/v1/topics/${randomUUID()}/archive`, headers: a.auth })).status).toBe(404);
      const cross = await t.request({ method: 'POST', url: `/api/v1/topics/${bAgent.defaultTopicId}/archive`, headers: a.auth });
      expect(cross.status).toBe(404);
      const bTopic = await createTopic(b, { group_id: bAgent.groupId, name: 'B only' });
      expect((await t.request({ method: 'POST', url: `/api/v1/topics/${bTopic.body.topic_id}/archive`, headers: a.auth })).status).toBe(404);
      const bList = await t.request({ method: 'GET', url: `/api/v1/topics?group_id=${bAgent.groupId}`, headers: b.auth });
      expect(bList.body.topics.find((x: any) => x.topic_id === bTopic.body.topic_id).archived).toBe(false);
      expect((await t.request({ method: 'POST', url: `/api/v1/topics/${id}/archive` })).status).toBe(401);
    });

    it('sending with a topic of another group (or another tenant, or unknown) answers 400', async () => {
      const second = await activeAgent(t, a);
      expect(second.groupId).not.toBe(aAgent.groupId);
      const otherGroupTopic = await createTopic(a, { group_id: second.groupId, name: 'Other group' });
      expect(otherGroupTopic.status).toBe(201);
      for (const topic_id of [otherGroupTopic.body.topic_id, second.defaultTopicId, bAgent.defaultTopicId, randomUUID()]) {
        const res = await sendText(a, aDev, aAgent.conversationId!, 'wrong topic', { topic_id });
        expect(res.status, topic_id).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
      // The right group's topic works.
      const own = await createTopic(a, { group_id: aAgent.groupId, name: 'Mine' });
      const ok = await sendText(a, aDev, aAgent.conversationId!, 'right topic', { topic_id: own.body.topic_id });
      expect(ok.status).toBe(201);
      expect(ok.body.topic_id).toBe(own.body.topic_id);
    });
  });
});
