/**
 * Federation agreements (contract §2.12, §4.13; docs/decisions.md "Federation agreements"): propose,
 * list from both sides with roles, partner-only accept, derived expiry, renewal by both parties
 * (one asks, the other accepts; at most 365 days ahead), revoke, one live
 * agreement per tenant pair, third-tenant isolation, and FederationService.activeAgreementBetween
 * (used by A2A).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const DAY = 24 * 3600 * 1000;
const inDays = (n: number) => new Date(Date.now() + n * DAY).toISOString();
const URL = '/api/v1/federation/agreements';

describe('federation agreements', () => {
  let t: TestApp;
  /** Proposer and partner of the main flow, and an outsider. */
  let a: Owner;
  let b: Owner;
  let c: Owner;

  const propose = (owner: { auth: Record<string, string> }, body: Record<string, unknown>) => t.request({ method: 'POST', url: URL, headers: owner.auth, payload: body });
  const terms = (partner: Owner, extra: Record<string, unknown> = {}) => ({
    partner_tenant_id: partner.tenantId,
    trust_floor: 0.8,
    allowed_capabilities: ['translate'],
    audit_sharing: true,
    expires_at: inDays(30),
    ...extra,
  });
  const action = (owner: Owner, id: string, verb: 'accept' | 'renew' | 'revoke', payload?: Record<string, unknown>) =>
    t.request({ method: 'POST', url: `${URL}/${id}/${verb}`, headers: owner.auth, ...(payload ? { payload } : {}) });
  const list = async (owner: Owner) => {
    const res = await t.request({ method: 'GET', url: URL, headers: owner.auth });
    expect(res.status).toBe(200);
    return res.body.agreements as Record<string, unknown>[];
  };
  const active = (x: Owner, y: Owner) => t.app.parley.federation.activeAgreementBetween(x.tenantId, y.tenantId);
  /** Move an agreement's expiry into the past with the superuser handle (no RLS). */
  const expire = (id: string) => t.app.parley.database.db.execute(sql`update federation_agreements set expires_at = now() - interval '1 minute' where id = ${id}`);
  /** A fresh proposer/partner pair with a pending agreement. */
  async function pendingPair() {
    const p = await newOwner(t, 'Proposer');
    const q = await newOwner(t, 'Partner');
    const res = await propose(p, terms(q));
    expect(res.status).toBe(201);
    return { p, q, id: res.body.id as string };
  }

  beforeAll(async () => {
    t = await startApp();
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
    c = await newOwner(t, 'Tenant C');
  });
  afterAll(() => t.close());

  it('propose -> partner sees it -> partner accepts -> active from both sides; a third tenant sees nothing', async () => {
    const expiresAt = inDays(30);
    const res = await propose(a, terms(b, { partner_tenant_id: b.tenantId.toUpperCase(), expires_at: expiresAt, allowed_capabilities: ['translate', 'summarize', 'translate'] }));
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    expect(res.body).toMatchObject({
      tenant_id: a.tenantId,
      partner_tenant_id: b.tenantId,
      trust_floor: 0.8,
      allowed_capabilities: ['translate', 'summarize'],
      audit_sharing: true,
      expires_at: expiresAt,
      status: 'pending',
      role: 'proposer',
      accepted_at: null,
    });
    expect(await active(a, b)).toBeNull();

    expect((await list(a)).find((x) => x.id === id)).toMatchObject({ role: 'proposer', status: 'pending' });
    expect((await list(b)).find((x) => x.id === id)).toMatchObject({ role: 'partner', status: 'pending', tenant_id: a.tenantId });
    expect(await list(c)).toEqual([]);

    // Only the partner accepts: the proposer is refused (403), an outsider cannot see it (404).
    expect((await action(a, id, 'accept')).status).toBe(403);
    expect((await action(c, id, 'accept')).status).toBe(404);
    const ok = await action(b, id, 'accept');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id, status: 'active', role: 'partner' });
    expect(Number.isNaN(Date.parse(ok.body.accepted_at))).toBe(false);
    expect((await action(b, id, 'accept')).status).toBe(409);

    const want = { id, trust_floor: 0.8, allowed_capabilities: ['translate', 'summarize'], expires_at: expiresAt };
    expect(await active(a, b)).toEqual(want);
    expect(await active(b, a)).toEqual(want);
    expect(await active(a, c)).toBeNull();
    expect(await active(c, a)).toBeNull();
    expect(await list(c)).toEqual([]);
  });

  it('allows at most one live agreement per tenant pair, in either direction (409)', async () => {
    const { p, q, id } = await pendingPair();
    expect((await propose(p, terms(q))).status).toBe(409);
    expect((await propose(q, terms(p))).status).toBe(409);
    expect((await action(q, id, 'accept')).status).toBe(200);
    expect((await propose(q, terms(p))).status).toBe(409);
    // Once revoked, the pair may agree anew.
    expect((await action(p, id, 'revoke')).status).toBe(200);
    expect((await propose(q, terms(p))).status).toBe(201);
  });

  it('defaults allowed_capabilities to [] (all) and audit_sharing to false', async () => {
    const q = await newOwner(t, 'Defaults');
    const res = await propose(a, { partner_tenant_id: q.tenantId, trust_floor: 0, expires_at: inDays(1) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ allowed_capabilities: [], audit_sharing: false, trust_floor: 0 });
  });

  it('refuses bad proposals: 400 for bad input or the own tenant, 404 for an unknown partner', async () => {
    const q = await newOwner(t, 'Target');
    const bad: Record<string, unknown>[] = [
      {},
      { ...terms(q), partner_tenant_id: 'nope' },
      { ...terms(q), partner_tenant_id: undefined },
      { ...terms(q), trust_floor: 1.5 },
      { ...terms(q), trust_floor: -0.1 },
      { ...terms(q), trust_floor: undefined },
      { ...terms(q), allowed_capabilities: [''] },
      { ...terms(q), allowed_capabilities: [{}] },
      { ...terms(q), audit_sharing: 'maybe' },
      { ...terms(q), expires_at: 'tomorrow' },
      { ...terms(q), expires_at: undefined },
      { ...terms(q), expires_at: new Date(Date.now() - 1000).toISOString() },
      terms(a, { partner_tenant_id: a.tenantId }),
    ];
    for (const body of bad) {
      const res = await propose(a, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    const unknown = await propose(a, terms(q, { partner_tenant_id: randomUUID() }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/partner tenant/);
    // None of the above created anything with q.
    expect(await list(q)).toEqual([]);
  });

  it('needs an owner token on every route: 401 without or with a bad one, 403 with a device token', async () => {
    const agent = await activeAgent(t, a);
    const id = randomUUID();
    const routes: [string, string, Record<string, unknown> | undefined][] = [
      ['POST', URL, terms(b)],
      ['GET', URL, undefined],
      ['POST', `${URL}/${id}/accept`, undefined],
      ['POST', `${URL}/${id}/renew`, { expires_at: inDays(5) }],
      ['POST', `${URL}/${id}/revoke`, undefined],
    ];
    for (const [method, url, payload] of routes) {
      const req = (headers: Record<string, string>) => t.request({ method: method as 'GET' | 'POST', url, headers, ...(payload ? { payload } : {}) });
      expect((await req({})).status, `${method} ${url}`).toBe(401);
      expect((await req({ authorization: 'Bearer nope' })).status).toBe(401);
      expect((await req(agent.auth)).status).toBe(403);
    }
  });

  it('answers 400 for malformed ids and 404 for unknown ones on accept, renew and revoke', async () => {
    for (const verb of ['accept', 'renew', 'revoke'] as const) {
      const payload = verb === 'renew' ? { expires_at: inDays(5) } : undefined;
      expect((await action(a, 'nope', verb, payload)).status).toBe(400);
      expect((await action(a, randomUUID(), verb, payload)).status).toBe(404);
    }
  });

  it('expires when expires_at passes: status expired, not active, cannot be accepted', async () => {
    const { p, q, id } = await pendingPair();
    expect((await action(q, id, 'accept')).status).toBe(200);
    expect(await active(p, q)).not.toBeNull();
    await expire(id);
    expect((await list(p)).find((x) => x.id === id)?.status).toBe('expired');
    expect((await list(q)).find((x) => x.id === id)?.status).toBe('expired');
    expect(await active(p, q)).toBeNull();
    expect(await active(q, p)).toBeNull();

    const pending = await pendingPair();
    await expire(pending.id);
    const acc = await action(pending.q, pending.id, 'accept');
    expect(acc.status).toBe(409);
    expect(acc.body.detail).toMatch(/expired/);
    // An expired agreement is not live: the pair may propose anew.
    expect((await propose(pending.q, terms(pending.p))).status).toBe(201);
  });

  describe('renew', () => {
    it('a renewal asked by one party waits for the other party to accept it; the term holds meanwhile', async () => {
      const { p, q, id } = await pendingPair();
      const accepted = await action(q, id, 'accept');
      expect(accepted.status).toBe(200);
      const term = accepted.body.expires_at as string;
      const later = inDays(60);
      const asked = await action(p, id, 'renew', { expires_at: later });
      expect(asked.status).toBe(200);
      expect(asked.body).toMatchObject({ status: 'active', expires_at: term, role: 'proposer', renewal: { expires_at: later, proposed_by: 'proposer' } });
      expect((await active(q, p))?.expires_at).toBe(term);
      expect((await list(q)).find((x) => x.id === id)).toMatchObject({ expires_at: term, renewal: { expires_at: later, proposed_by: 'proposer' } });
      // The asking side cannot accept its own request; the other side does.
      expect((await action(p, id, 'accept')).status).toBe(403);
      const ok = await action(q, id, 'accept');
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ status: 'active', expires_at: later, renewal: null, role: 'partner' });
      expect((await active(p, q))?.expires_at).toBe(later);
      // Nothing left to accept.
      expect((await action(q, id, 'accept')).status).toBe(409);
      // The other direction works the same; a later request replaces an earlier one.
      expect((await action(q, id, 'renew', { expires_at: inDays(80) })).body.renewal).toMatchObject({ proposed_by: 'partner' });
      const evenLater = inDays(90);
      expect((await action(q, id, 'renew', { expires_at: evenLater })).body.renewal).toEqual({ expires_at: evenLater, proposed_by: 'partner' });
      expect((await action(q, id, 'accept')).status).toBe(403);
      expect((await action(p, id, 'accept')).body).toMatchObject({ expires_at: evenLater, renewal: null });
    });

    it('one party alone cannot extend an agreement (to year 9999 or at all), and no expiry lies beyond 365 days', async () => {
      const { p, q, id } = await pendingPair();
      const accepted = await action(q, id, 'accept');
      const term = accepted.body.expires_at as string;
      expect((await action(q, id, 'renew', { expires_at: '9999-12-31T00:00:00.000Z' })).status).toBe(400);
      expect((await action(q, id, 'renew', { expires_at: inDays(366) })).status).toBe(400);
      expect((await action(q, id, 'renew', { expires_at: inDays(364) })).status).toBe(200);
      expect((await active(p, q))?.expires_at).toBe(term);
      expect((await list(q)).find((x) => x.id === id)?.expires_at).toBe(term);
      const r = await newOwner(t, 'Far');
      expect((await propose(p, terms(r, { expires_at: inDays(366) }))).status).toBe(400);
      expect((await propose(p, terms(r, { expires_at: '9999-12-31T00:00:00.000Z' }))).status).toBe(400);
    });

    it('refuses an expiry in the past or not later than the current one (400), and bad bodies; the proposer changes its pending proposal, the partner cannot', async () => {
      const { p, q, id } = await pendingPair();
      expect((await action(p, id, 'renew', { expires_at: new Date(Date.now() - 1000).toISOString() })).status).toBe(400);
      expect((await action(p, id, 'renew', { expires_at: inDays(10) })).status).toBe(400);
      expect((await action(p, id, 'renew', { expires_at: 'soon' })).status).toBe(400);
      expect((await action(p, id, 'renew', {})).status).toBe(400);
      expect((await action(q, id, 'renew', { expires_at: inDays(40) })).status).toBe(403);
      const later = inDays(40);
      const res = await action(p, id, 'renew', { expires_at: later });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'pending', expires_at: later, renewal: null });
    });

    it("an expired agreement comes back only with both parties: one asks, the other accepts", async () => {
      const { p, q, id } = await pendingPair();
      expect((await action(q, id, 'accept')).status).toBe(200);
      await expire(id);
      const later = inDays(20);
      const res = await action(q, id, 'renew', { expires_at: later });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'expired', renewal: { expires_at: later, proposed_by: 'partner' } });
      expect(await active(p, q)).toBeNull();
      expect((await action(q, id, 'accept')).status).toBe(403);
      expect(await active(p, q)).toBeNull();
      const ok = await action(p, id, 'accept');
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ status: 'active', expires_at: later, renewal: null });
      expect(await active(p, q)).toMatchObject({ id, expires_at: later });
    });

    it('refuses to revive an expired agreement while the pair has another live one (409), and a lapsed renewal (409)', async () => {
      const { p, q, id } = await pendingPair();
      await expire(id);
      expect((await action(p, id, 'renew', { expires_at: inDays(20) })).status).toBe(200);
      expect((await propose(q, terms(p))).status).toBe(201);
      expect((await action(q, id, 'accept')).status).toBe(409);

      const other = await pendingPair();
      expect((await action(other.q, other.id, 'accept')).status).toBe(200);
      expect((await action(other.p, other.id, 'renew', { expires_at: inDays(40) })).status).toBe(200);
      await t.app.parley.database.db.execute(sql`update federation_agreements set renewal_expires_at = now() - interval '1 minute' where id = ${other.id}`);
      const lapsed = await action(other.q, other.id, 'accept');
      expect(lapsed.status).toBe(409);
      expect(lapsed.body.detail).toMatch(/lapsed/);
    });

    it('is invisible to a third tenant (404)', async () => {
      const { id } = await pendingPair();
      expect((await action(c, id, 'renew', { expires_at: inDays(50) })).status).toBe(404);
    });
  });

  describe('revoke', () => {
    it('either party revokes; revoked is terminal (409 on accept, renew and revoke)', async () => {
      for (const revoker of ['proposer', 'partner'] as const) {
        const { p, q, id } = await pendingPair();
        expect((await action(q, id, 'accept')).status).toBe(200);
        const res = await action(revoker === 'proposer' ? p : q, id, 'revoke');
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id, status: 'revoked', role: revoker });
        expect(await active(p, q)).toBeNull();
        expect(await active(q, p)).toBeNull();
        expect((await list(p)).find((x) => x.id === id)?.status).toBe('revoked');
        expect((await action(q, id, 'accept')).status).toBe(409);
        expect((await action(p, id, 'renew', { expires_at: inDays(50) })).status).toBe(409);
        expect((await action(p, id, 'revoke')).status).toBe(409);
        // Revoked stays revoked after its expiry passes.
        await expire(id);
        expect((await list(q)).find((x) => x.id === id)?.status).toBe('revoked');
      }
    });

    it('revokes a pending agreement, and is invisible to a third tenant (404)', async () => {
      const { p, id } = await pendingPair();
      expect((await action(c, id, 'revoke')).status).toBe(404);
      expect((await action(p, id, 'revoke')).body.status).toBe('revoked');
    });
  });
});
