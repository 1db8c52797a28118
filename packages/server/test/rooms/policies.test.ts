/**
 * Policies and held messages (contract §2.7, §3.8, §4.9; design §8.3, §8.5): policy CRUD over HTTP
 * (validation, auth, tenant isolation), `decide` writing `policy_evaluations`, and the held
 * message life cycle held -> approved | denied | expired with releasers and ciphertext removal.
 */
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { heldMessages, policyAllowCounts, policyEvaluations, roomEnvelopes, roomMessages, rooms } from '../../src/db/schema/index.js';
import { withTenant } from '../../src/db/tenant.js';
import type { EvaluationContext } from '../../src/modules/policies/engine.js';
import { PolicyService } from '../../src/modules/policies/service.js';
import type { HeldRecord, HoldInput } from '../../src/modules/policies/types.js';
import { Notifier } from '../../src/realtime/notifier.js';
import type { BusEvent } from '../../src/realtime/bus.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('policies and held messages', () => {
  let t: TestApp;
  let db: Db;
  let owner: Owner;
  let other: Owner;
  let agent: Agent;

  beforeAll(async () => {
    t = await startApp();
    db = t.app.parley.database.db;
    owner = await newOwner(t);
    other = await newOwner(t, 'Other');
    agent = await activeAgent(t, owner);
  });
  afterAll(() => t.close());

  const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = owner.auth) =>
    t.request({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const createPolicy = (body: unknown, auth = owner.auth) => api('POST', '/policies', body, auth);

  /** A room row of the owner's tenant (rooms themselves are another module's). */
  async function newRoom(tenantId = owner.tenantId): Promise<string> {
    const id = randomUUID();
    await withTenant(db, tenantId, (tx) => tx.insert(rooms).values({ id, tenantId, timelineId: randomUUID(), name: 'ops', createdBy: 'test' }));
    return id;
  }

  /** A room message with one envelope carrying ciphertext, and a held message pointing at it. */
  async function heldEnvelope(service: PolicyService = t.app.parley.policies, tenantId = owner.tenantId) {
    const roomId = await newRoom(tenantId);
    const messageId = randomUUID();
    const envelopeId = randomUUID();
    const sender = randomUUID();
    const recipient = randomUUID();
    const heldId = await withTenant(db, tenantId, async (tx) => {
      await tx.insert(roomMessages).values({ id: messageId, tenantId, roomId, senderDeviceId: sender, messageType: 'artifact', priority: 'high' });
      await tx.insert(roomEnvelopes).values({ id: envelopeId, tenantId, roomMessageId: messageId, recipientDeviceId: recipient, headerBlob: Buffer.from('h'), ciphertext: Buffer.from('secret'), outcome: 'held' });
      return service.hold(tx, tenantId, { roomId, envelopeId, senderDeviceId: sender, recipientDeviceId: recipient, policyId: null, messageType: 'artifact', priority: 'high' });
    });
    return { heldId, roomId, envelopeId, sender, recipient };
  }

  const envelope = async (tenantId: string, id: string) => withTenant(db, tenantId, async (tx) => (await tx.select().from(roomEnvelopes).where(eq(roomEnvelopes.id, id)))[0]!);
  const heldRow = async (tenantId: string, id: string) => withTenant(db, tenantId, async (tx) => (await tx.select().from(heldMessages).where(eq(heldMessages.id, id)))[0]!);

  describe('policy CRUD', () => {
    it('creates a tenant-wide policy with defaults (201) and lists it', async () => {
      const res = await createPolicy({ name: 'hold urgent', conditions: { priorities: ['urgent'] }, action: 'hold' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        policy_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'hold urgent',
        scope: { room_id: null, skill: null },
        priority: 0,
        conditions: { priorities: ['urgent'] },
        action: 'hold',
        enabled: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const list = await api('GET', '/policies');
      expect(list.status).toBe(200);
      expect(list.body.policies.map((p: any) => p.policy_id)).toContain(res.body.policy_id);
    });

    it('keeps every condition key it accepts, and lists by priority (highest first)', async () => {
      const conditions = {
        message_types: ['artifact'],
        priorities: ['high', 'urgent'],
        sender_kinds: ['agent'],
        recipient_kinds: ['owner'],
        sender_device_ids: [agent.deviceId],
        recipient_device_ids: [randomUUID()],
        sender_hub_addresses: ['alpha-bot'],
        sender_tier_below: 'certified',
        hours_utc: { from: 22, to: 6 },
        rate_per_minute_over: 30,
        cross_tenant: false,
      };
      const res = await createPolicy({ name: 'everything', conditions, action: 'notify', priority: 50, enabled: false, scope: { skill: 'deploy' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ conditions, priority: 50, enabled: false, scope: { room_id: null, skill: 'deploy' } });
      const list = (await api('GET', '/policies')).body.policies;
      expect(list[0].policy_id).toBe(res.body.policy_id);
    });

    it('scopes a policy to a room of the tenant; another tenant’s or an unknown room is 404', async () => {
      const roomId = await newRoom();
      const ok = await createPolicy({ name: 'room', scope: { room_id: roomId }, conditions: {}, action: 'block' });
      expect(ok.status).toBe(201);
      expect(ok.body.scope).toEqual({ room_id: roomId, skill: null });
      const foreign = await newRoom(other.tenantId);
      expect((await createPolicy({ name: 'x', scope: { room_id: foreign }, conditions: {}, action: 'block' })).status).toBe(404);
      expect((await createPolicy({ name: 'x', scope: { room_id: randomUUID() }, conditions: {}, action: 'block' })).status).toBe(404);
    });

    it('refuses bad input with 400: unknown condition keys, bad action, bad values, both scopes', async () => {
      const bad: unknown[] = [
        { name: 'x', conditions: { bogus: true }, action: 'hold' },
        { name: 'x', conditions: { message_types: ['text'], MESSAGE_TYPES: ['text'] }, action: 'hold' },
        { name: 'x', conditions: { hours_utc: { from: 1, to: 2, tz: 'CET' } }, action: 'hold' },
        { name: 'x', conditions: { hours_utc: { from: 1, to: 24 } }, action: 'hold' },
        { name: 'x', conditions: {}, action: 'quarantine' },
        { name: 'x', conditions: {}, action: 'BLOCK' },
        { name: 'x', conditions: { sender_tier_below: 'unverified' }, action: 'hold' },
        { name: 'x', conditions: { sender_kinds: ['robot'] }, action: 'hold' },
        { name: 'x', conditions: { message_types: [] }, action: 'hold' },
        { name: 'x', conditions: { rate_per_minute_over: -1 }, action: 'hold' },
        { name: 'x', conditions: { sender_device_ids: ['not-a-uuid'] }, action: 'hold' },
        { name: 'x', conditions: 'all', action: 'hold' },
        { name: 'x', action: 'hold' },
        { conditions: {}, action: 'hold' },
        { name: '', conditions: {}, action: 'hold' },
        { name: 'x', conditions: {}, action: 'hold', scope: { room_id: randomUUID(), skill: 'deploy' } },
        { name: 'x', conditions: {}, action: 'hold', scope: { tenant: 'all' } },
        { name: 'x', conditions: {}, action: 'hold', priority: 1.5 },
      ];
      for (const body of bad) {
        const res = await createPolicy(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
      expect((await createPolicy({ name: 'x', conditions: { bogus: 1 }, action: 'hold' })).body.detail).toContain('bogus');
    });

    it('answers 401 without auth and 403 for a device token', async () => {
      const body = { name: 'x', conditions: {}, action: 'hold' };
      expect((await t.request({ method: 'POST', url: '/api/v1/policies', payload: body })).status).toBe(401);
      expect((await t.request({ method: 'GET', url: '/api/v1/policies' })).status).toBe(401);
      expect((await createPolicy(body, agent.auth)).status).toBe(403);
      expect((await api('GET', '/policies', undefined, agent.auth)).status).toBe(403);
      expect((await api('GET', '/policies/held-messages', undefined, agent.auth)).status).toBe(403);
      expect((await api('POST', `/policies/held-messages/${randomUUID()}/approve`, undefined, agent.auth)).status).toBe(403);
      expect((await api('POST', `/policies/held-messages/${randomUUID()}/deny`, {})).status).toBe(404);
      expect((await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${randomUUID()}/deny` })).status).toBe(401);
    });

    it('updates any subset of fields (PATCH), re-scoping included', async () => {
      const p = (await createPolicy({ name: 'p', conditions: { message_types: ['text'] }, action: 'notify', scope: { skill: 'deploy' } })).body;
      const res = await api('PATCH', `/policies/${p.policy_id}`, { action: 'block', enabled: false, conditions: { cross_tenant: true }, scope: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ policy_id: p.policy_id, name: 'p', action: 'block', enabled: false, conditions: { cross_tenant: true }, scope: { room_id: null, skill: null } });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(p.updated_at));
      const roomId = await newRoom();
      expect((await api('PATCH', `/policies/${p.policy_id}`, { scope: { room_id: roomId } })).body.scope).toEqual({ room_id: roomId, skill: null });
      expect((await api('PATCH', `/policies/${p.policy_id}`, { name: 'renamed' })).body).toMatchObject({ name: 'renamed', action: 'block', scope: { room_id: roomId } });

      expect((await api('PATCH', `/policies/${p.policy_id}`, {})).status).toBe(400);
      expect((await api('PATCH', `/policies/${p.policy_id}`, { conditions: { nope: 1 } })).status).toBe(400);
      expect((await api('PATCH', `/policies/${p.policy_id}`, { action: 'maybe' })).status).toBe(400);
      expect((await api('PATCH', `/policies/${p.policy_id}`, { scope: { room_id: randomUUID() } })).status).toBe(404);
      expect((await api('PATCH', '/policies/not-a-uuid', { name: 'x' })).status).toBe(400);
      expect((await api('PATCH', '/policies/held-messages', { name: 'x' })).status).toBe(400);
      expect((await api('PATCH', `/policies/${randomUUID()}`, { name: 'x' })).status).toBe(404);
      expect((await api('PATCH', `/policies/${p.policy_id}`, { name: 'x' }, other.auth)).status).toBe(404);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/policies/${p.policy_id}`, payload: { name: 'x' } })).status).toBe(401);
    });

    it('deletes (204, then 404) and keeps tenants apart', async () => {
      const p = (await createPolicy({ name: 'gone', conditions: {}, action: 'allow' })).body;
      expect((await api('GET', '/policies', undefined, other.auth)).body.policies).toEqual([]);
      expect((await api('DELETE', `/policies/${p.policy_id}`, undefined, other.auth)).status).toBe(404);
      expect((await api('DELETE', `/policies/${p.policy_id}`)).status).toBe(204);
      expect((await api('DELETE', `/policies/${p.policy_id}`)).status).toBe(404);
      expect((await api('DELETE', '/policies/nope')).status).toBe(400);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/policies/${p.policy_id}` })).status).toBe(401);
    });
  });

  describe('decide', () => {
    it('evaluates enabled policies, writes one policy_evaluations row per non-allow item and counts the allows per sender and kind', async () => {
      const owner2 = await newOwner(t, 'Decider');
      const mk = async (body: object) => (await createPolicy({ conditions: {}, ...body }, owner2.auth)).body.policy_id as string;
      const holdArtifacts = await mk({ name: 'hold artifacts', conditions: { message_types: ['artifact'] }, action: 'hold' });
      const notifyUrgent = await mk({ name: 'notify urgent', conditions: { priorities: ['urgent'] }, action: 'notify' });
      await mk({ name: 'disabled block', action: 'block', enabled: false });
      const policies = t.app.parley.policies;
      const sender = randomUUID();
      const base: EvaluationContext = {
        roomId: null,
        messageType: 'text',
        priority: 'normal',
        senderKind: 'agent',
        recipientKind: 'owner',
        senderDeviceId: sender,
        recipientDeviceId: randomUUID(),
        senderHubAddress: null,
        senderTier: 'unverified',
        crossTenant: false,
        now: new Date(),
      };
      const subjects = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const other = randomUUID();
      const evaluations = await withTenant(db, owner2.tenantId, async (tx) => {
        // No enabled policy reads the rate: the lazy count is never called.
        const noRate = () => Promise.reject(new Error('senderRate must not be called'));
        return policies.decide(tx, owner2.tenantId, [
          { ctx: { ...base, messageType: 'artifact', priority: 'urgent' }, subjectKind: 'room_envelope', subjectId: subjects[0]!, defaultOutcome: 'allow' },
          { ctx: base, subjectKind: 'room_envelope', subjectId: subjects[1]!, defaultOutcome: 'allow' },
          { ctx: { ...base, recipientDeviceId: null }, subjectKind: 'a2a_message', subjectId: subjects[2]!, defaultOutcome: 'hold' },
          { ctx: base, subjectKind: 'room_envelope', subjectId: subjects[3]!, defaultOutcome: 'allow' },
          { ctx: { ...base, senderDeviceId: other }, subjectKind: 'room_envelope', subjectId: subjects[4]!, defaultOutcome: 'allow' },
        ], noRate);
      });
      expect(evaluations).toEqual([
        { outcome: 'hold', policyId: holdArtifacts, matched: [holdArtifacts, notifyUrgent] },
        { outcome: 'allow', policyId: null, matched: [] },
        { outcome: 'hold', policyId: null, matched: [] },
        { outcome: 'allow', policyId: null, matched: [] },
        { outcome: 'allow', policyId: null, matched: [] },
      ]);
      const rows = await withTenant(db, owner2.tenantId, (tx) => tx.select().from(policyEvaluations).where(eq(policyEvaluations.senderDeviceId, sender)));
      expect(rows.map((r) => r.subjectId).sort()).toEqual([subjects[0]!, subjects[2]!].sort());
      const bySubject = new Map(rows.map((r) => [r.subjectId, r]));
      expect(bySubject.get(subjects[0]!)).toMatchObject({ tenantId: owner2.tenantId, subjectKind: 'room_envelope', outcome: 'hold', policyId: holdArtifacts, matchedPolicyIds: [holdArtifacts, notifyUrgent] });
      // Allowed deliveries are counted, per sender and subject kind, at the same transaction time.
      const allows = await withTenant(db, owner2.tenantId, (tx) => tx.select().from(policyAllowCounts).where(inArray(policyAllowCounts.senderDeviceId, [sender, other])));
      expect(allows.map((a) => [a.senderDeviceId, a.subjectKind, a.allows]).sort()).toEqual([[sender, 'room_envelope', 2], [other, 'room_envelope', 1]].sort());
      expect(new Set([...rows, ...allows].map((r) => r.createdAt.getTime())).size).toBe(1);
      expect(bySubject.get(subjects[2]!)).toMatchObject({ subjectKind: 'a2a_message', outcome: 'hold', recipientDeviceId: null });
      for (const r of rows) expect(r.durationUs).toBeGreaterThanOrEqual(0);
      // Invisible to another tenant.
      expect(await withTenant(db, owner.tenantId, (tx) => tx.select().from(policyEvaluations).where(eq(policyEvaluations.senderDeviceId, sender)))).toEqual([]);
      expect(await withTenant(db, owner.tenantId, (tx) => tx.select().from(policyAllowCounts).where(eq(policyAllowCounts.senderDeviceId, sender)))).toEqual([]);
      // An empty batch writes nothing.
      expect(await withTenant(db, owner2.tenantId, (tx) => policies.decide(tx, owner2.tenantId, []))).toEqual([]);
    });

    it('counts the sender rate lazily: once per decide, only while an enabled policy reads it', async () => {
      const owner3 = await newOwner(t, 'Rates');
      const policies = t.app.parley.policies;
      const base: EvaluationContext = {
        roomId: null,
        messageType: 'text',
        priority: 'normal',
        senderKind: 'agent',
        recipientKind: 'agent',
        senderDeviceId: randomUUID(),
        recipientDeviceId: randomUUID(),
        senderHubAddress: null,
        senderTier: 'unverified',
        crossTenant: false,
        now: new Date(),
      };
      let calls = 0;
      const decide = (rate: number, ctx: EvaluationContext = base) =>
        withTenant(db, owner3.tenantId, (tx) =>
          policies.decide(
            tx,
            owner3.tenantId,
            [0, 1].map(() => ({ ctx, subjectKind: 'room_envelope' as const, subjectId: randomUUID(), defaultOutcome: 'allow' as const })),
            () => {
              calls++;
              return Promise.resolve(rate);
            },
          ),
        );
      expect((await decide(9)).map((e) => e.outcome)).toEqual(['allow', 'allow']);
      expect(calls).toBe(0);
      const p = (await createPolicy({ name: 'burst', conditions: { rate_per_minute_over: 5 }, action: 'hold' }, owner3.auth)).body;
      expect((await decide(9)).map((e) => e.outcome)).toEqual(['hold', 'hold']);
      expect(calls).toBe(1);
      expect((await decide(5)).map((e) => e.outcome)).toEqual(['allow', 'allow']);
      expect(calls).toBe(2);
      // A context that carries the rate already is not counted again.
      expect((await decide(0, { ...base, senderRatePerMinute: 6 })).map((e) => e.outcome)).toEqual(['hold', 'hold']);
      expect(calls).toBe(2);
      await api('PATCH', `/policies/${p.policy_id}`, { enabled: false }, owner3.auth);
      expect((await decide(9)).map((e) => e.outcome)).toEqual(['allow', 'allow']);
      expect(calls).toBe(2);
    });

    it('alerts the owners with policy_alert', async () => {
      const seen: BusEvent[] = [];
      const off = t.app.parley.bus.subscribe((e) => seen.push(e));
      const data = { room_id: randomUUID(), policy_id: randomUUID(), sender_device_id: randomUUID(), recipient_device_id: randomUUID(), message_type: 'text' };
      await t.app.parley.policies.alert(owner.tenantId, data);
      off();
      expect(seen).toContainEqual({ type: 'frame', to: { ownersOfTenant: owner.tenantId }, event: 'policy_alert', data });
    });
  });

  describe('held messages', () => {
    const released: HeldRecord[] = [];
    const statusAtRelease: string[] = [];
    beforeAll(() => {
      t.app.parley.policies.registerReleaser('room', async (held) => {
        // Read on a fresh transaction: the approval must already be committed.
        statusAtRelease.push((await heldRow(held.tenantId, held.id)).status);
        released.push(held);
      });
    });

    const list = (auth = owner.auth, query = '') => api('GET', `/policies/held-messages${query}`, undefined, auth);
    const decide = (id: string, what: 'approve' | 'deny', auth = owner.auth) => api('POST', `/policies/held-messages/${id}/${what}`, undefined, auth);

    it('lists held messages without ciphertext; other tenants see none of them', async () => {
      const h = await heldEnvelope();
      const res = await list();
      expect(res.status).toBe(200);
      const item = res.body.held_messages.find((x: any) => x.held_message_id === h.heldId);
      expect(item).toEqual({
        held_message_id: h.heldId,
        room_id: h.roomId,
        channel_id: null,
        rental_id: null,
        sender_device_id: h.sender,
        recipient_device_id: h.recipient,
        policy_id: null,
        message_type: 'artifact',
        priority: 'high',
        status: 'held',
        created_at: expect.any(String),
        expires_at: expect.any(String),
        decided_at: null,
      });
      const ttlMs = Date.parse(item.expires_at) - Date.parse(item.created_at);
      expect(Math.abs(ttlMs - 72 * 3600 * 1000)).toBeLessThan(60_000);
      expect(JSON.stringify(res.body)).not.toContain(Buffer.from('secret').toString('base64'));
      expect((await list(other.auth)).body.held_messages).toEqual([]);
      expect((await list(owner.auth, '?status=bogus')).status).toBe(400);
      expect((await t.request({ method: 'GET', url: '/api/v1/policies/held-messages' })).status).toBe(401);
    });

    it('approves once: the releaser runs once, after commit, with the held record; a second decision is 409', async () => {
      const h = await heldEnvelope();
      const before = released.length;
      const res = await decide(h.heldId, 'approve');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ held_message_id: h.heldId, status: 'approved', decided_at: expect.any(String) });
      expect(released.slice(before)).toEqual([
        { id: h.heldId, tenantId: owner.tenantId, roomId: h.roomId, envelopeId: h.envelopeId, senderDeviceId: h.sender, recipientDeviceId: h.recipient, policyId: null, messageType: 'artifact', priority: 'high' },
      ]);
      expect(statusAtRelease.at(-1)).toBe('approved');
      expect((await heldRow(owner.tenantId, h.heldId)).decidedBy).toBe(owner.sub);
      expect((await envelope(owner.tenantId, h.envelopeId)).ciphertext).not.toBeNull();

      expect((await decide(h.heldId, 'approve')).status).toBe(409);
      expect((await decide(h.heldId, 'deny')).status).toBe(409);
      expect(released.length).toBe(before + 1);
      expect((await list()).body.held_messages.map((x: any) => x.held_message_id)).not.toContain(h.heldId);
      expect((await list(owner.auth, '?status=approved')).body.held_messages.map((x: any) => x.held_message_id)).toContain(h.heldId);
    });

    it('denies: the envelope loses its ciphertext and is blocked; nothing is released; 409 afterwards', async () => {
      const h = await heldEnvelope();
      const before = released.length;
      const res = await decide(h.heldId, 'deny');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ held_message_id: h.heldId, status: 'denied' });
      const env = await envelope(owner.tenantId, h.envelopeId);
      expect(env).toMatchObject({ ciphertext: null, headerBlob: null, outcome: 'blocked' });
      expect(released.length).toBe(before);
      expect((await decide(h.heldId, 'deny')).status).toBe(409);
      expect((await decide(h.heldId, 'approve')).status).toBe(409);
    });

    it('keeps tenants apart: another tenant’s decision is 404 and changes nothing', async () => {
      const h = await heldEnvelope();
      expect((await decide(h.heldId, 'approve', other.auth)).status).toBe(404);
      expect((await decide(h.heldId, 'deny', other.auth)).status).toBe(404);
      expect((await decide(randomUUID(), 'approve')).status).toBe(404);
      expect((await decide('not-a-uuid', 'approve')).status).toBe(400);
      expect((await heldRow(owner.tenantId, h.heldId)).status).toBe('held');
    });

    it('expires held messages past their time (expireDue): status expired, ciphertext gone, approve 409', async () => {
      const h = await heldEnvelope();
      const policies = t.app.parley.policies;
      expect(await policies.expireDue(new Date())).toBe(0);
      const later = new Date(Date.now() + t.config.heldMessageTtlMs + 1000);
      expect(await policies.expireDue(later)).toBeGreaterThanOrEqual(1);
      expect((await heldRow(owner.tenantId, h.heldId)).status).toBe('expired');
      expect(await envelope(owner.tenantId, h.envelopeId)).toMatchObject({ ciphertext: null, headerBlob: null, outcome: 'blocked' });
      expect((await decide(h.heldId, 'approve')).status).toBe(409);
      const expired = (await list(owner.auth, '?status=expired')).body.held_messages;
      expect(expired.find((x: any) => x.held_message_id === h.heldId)).toMatchObject({ status: 'expired', decided_at: expect.any(String) });
    });

    it('answers a lapsed message as expired before the job ran, and refuses to approve it (409)', async () => {
      const instant = new PolicyService({ db, notifier: new Notifier(t.app.parley.bus), heldTtlMs: 0 });
      const h = await heldEnvelope(instant);
      expect((await list()).body.held_messages.map((x: any) => x.held_message_id)).not.toContain(h.heldId);
      const expired = (await list(owner.auth, '?status=expired')).body.held_messages;
      expect(expired.find((x: any) => x.held_message_id === h.heldId)?.status).toBe('expired');
      const before = released.length;
      expect((await decide(h.heldId, 'approve')).status).toBe(409);
      expect(released.length).toBe(before);
      expect((await heldRow(owner.tenantId, h.heldId)).status).toBe('expired');
      expect((await envelope(owner.tenantId, h.envelopeId)).ciphertext).toBeNull();
    });

    it('holds A2A items too: a held row without a room is released by the a2a releaser', async () => {
      const a2a: HeldRecord[] = [];
      t.app.parley.policies.registerReleaser('a2a', async (held) => void a2a.push(held));
      const input: HoldInput = { channelId: randomUUID(), senderDeviceId: randomUUID(), recipientDeviceId: randomUUID(), policyId: randomUUID(), messageType: 'text', priority: 'normal' };
      const id = await withTenant(db, owner.tenantId, (tx) => t.app.parley.policies.hold(tx, owner.tenantId, input));
      const listed = (await list()).body.held_messages.find((x: any) => x.held_message_id === id);
      expect(listed).toMatchObject({ room_id: null, channel_id: input.channelId, policy_id: input.policyId });
      expect((await decide(id, 'approve')).status).toBe(200);
      expect(a2a).toEqual([{ id, tenantId: owner.tenantId, ...input }]);
    });
  });
});
