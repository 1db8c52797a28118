/**
 * Row-level security, for real (contract §1.4, design §4): every table with a `tenant_id` column has
 * RLS enabled and forced with a policy, and a query with no tenant filter inside the tenant scope
 * returns only that tenant's rows, even though the database connection itself is a superuser.
 * Runs on PGlite and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Tx } from '../../src/db/client.js';
import { APP_ROLE, withNoTenant, withTenant } from '../../src/db/tenant.js';
import { activeAgent, createInvite, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';
import { listingBody, marketAddr, operatorAuth } from '../../testing/marketplace-fixtures.js';

type Row = Record<string, unknown>;
const rowsOf = (res: unknown): Row[] => (res as { rows: Row[] }).rows;

/** Awaits a rejection and returns the database's own message (drizzle wraps it in `cause`). */
async function dbError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { message?: string; cause?: { message?: string } };
    return `${err.message ?? ''} | ${err.cause?.message ?? ''}`;
  }
  throw new Error('expected the statement to fail');
}
const RLS_VIOLATION = /violates row-level security policy/;

/** Tables the current schema is known to fill for both tenants in beforeAll. */
const SEEDED = ['memberships', 'invites', 'devices', 'device_challenges', 'conversation_groups', 'conversations', 'topics', 'messages', 'marketplace_listings'];

/**
 * The one documented exemption from "a scope sees only its tenant's rows" (migration 0021, policy
 * `published_listings_read`; docs/decisions.md "Marketplace"): PUBLISHED marketplace listings are a
 * public catalogue, readable in every scope, another tenant's and the anonymous one. Only rows of
 * this table with status 'published' are exempt; a foreign draft, paused or delisted listing is
 * still a leak. The marketplace test below checks the exemption itself.
 */
const PUBLIC_CATALOGUE = 'marketplace_listings';
const exempt = (table: string, r: Row) => table === PUBLIC_CATALOGUE && r.status === 'published';

describe('row-level security', () => {
  let t: TestApp;
  let db: Db;
  let tables: string[];
  let twoPartyTables: string[] = [];
  const tenants: Record<'A' | 'B', { owner: Owner; dev: OwnerDevice; agent: Agent; published: string; draft: string }> = {} as never;
  let operator: { authorization: string };
  /** A rents B's published listing. */
  let rentalId: string;

  const raw = async (q: SQL) => rowsOf(await db.execute(q));
  const scoped = async (tenantId: string, q: SQL) => rowsOf(await withTenant(db, tenantId, (tx) => tx.execute(q)));
  /** The application role switched on, but app.tenant_id never set in this transaction. */
  const unscoped = (fn: (tx: Tx) => Promise<unknown>) =>
    db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('role', ${APP_ROLE}, true)`);
      return fn(tx);
    });

  async function seed(owner: Owner) {
    const dev = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    await createInvite(t, owner); // an active invite besides the consumed one
    const topic = await t.request({ method: 'POST', url: '/api/v1/topics', headers: owner.auth, payload: { group_id: agent.groupId, name: 'Ops' } });
    expect(topic.status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const m = await t.request({
        method: 'POST',
        url: `/api/v1/conversations/${agent.conversationId}/messages`,
        headers: { ...owner.auth, 'x-device-id': dev.deviceId },
        payload: { header_blob: Buffer.from('h').toString('base64'), ciphertext: Buffer.from(`c${i}`).toString('base64') },
      });
      expect(m.status).toBe(201);
    }
    // a renewal records its spent challenge (device_challenges)
    const ch = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token/challenge` });
    expect(ch.status).toBe(201);
    const renewed = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token`, payload: { challenge: ch.body.challenge, signature: agent.keys.sign(ch.body.challenge) } });
    expect(renewed.status).toBe(200);
    // marketplace: a certified hub identity bound to the agent, one published listing and one draft
    const identity = await t.request({
      method: 'POST',
      url: '/api/v1/hub/identities',
      headers: owner.auth,
      payload: { hub_address: marketAddr(), display_name: 'Listed agent', device_id: agent.deviceId, public_key: hubOwnerKey(), capabilities: ['research'] },
    });
    expect(identity.status).toBe(201);
    const tier = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${identity.body.id}/tier`, headers: operator, payload: { tier: 'certified', reason: 'rls seed' } });
    expect(tier.status, JSON.stringify(tier.body)).toBe(200);
    const listing = async (title: string) => {
      const res = await t.request({ method: 'POST', url: '/api/v1/marketplace/listings', headers: owner.auth, payload: listingBody(identity.body.hub_address, { title }) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.listing_id as string;
    };
    const published = await listing('Published listing');
    expect((await t.request({ method: 'POST', url: `/api/v1/marketplace/listings/${published}/publish`, headers: owner.auth })).status).toBe(200);
    const draft = await listing('Draft listing');
    return { owner, dev, agent, published, draft };
  }

  beforeAll(async () => {
    t = await startApp();
    db = t.app.parley.database.db;
    operator = await operatorAuth(t);
    tenants.A = await seed(await newOwner(t, 'Tenant A'));
    tenants.B = await seed(await newOwner(t, 'Tenant B'));
    const rental = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: tenants.A.owner.auth, payload: { listing_id: tenants.B.published, payment_method: 'pm_card_visa' } });
    expect(rental.status, JSON.stringify(rental.body)).toBe(201);
    expect(rental.body.status).toBe('active');
    rentalId = rental.body.rental_id;
    tables = (
      await raw(sql`select table_name from information_schema.columns
                    where table_schema = 'public' and column_name = 'tenant_id' order by table_name`)
    ).map((r) => r.table_name as string);
    twoPartyTables = (
      await raw(sql`select table_name from information_schema.columns
                    where table_schema = 'public' and column_name = 'partner_tenant_id' order by table_name`)
    ).map((r) => r.table_name as string);
  });
  afterAll(() => t?.close());

  it('the raw database connection is a superuser (so RLS must hold without relying on privileges)', async () => {
    const [r] = await raw(sql`select rolsuper from pg_roles where rolname = current_user`);
    expect(r!.rolsuper).toBe(true);
  });

  it('the application role is neither superuser nor BYPASSRLS, and tenant scope runs as it', async () => {
    const [role] = await raw(sql`select rolsuper, rolbypassrls from pg_roles where rolname = ${APP_ROLE}`);
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false });
    const [inScope] = await scoped(tenants.A.owner.tenantId, sql`select current_user as u, current_setting('app.tenant_id', true) as tid`);
    expect(inScope).toEqual({ u: APP_ROLE, tid: tenants.A.owner.tenantId });
    // The scope is transaction-local: afterwards the connection is the superuser again.
    const [after] = await raw(sql`select current_user as u, coalesce(current_setting('app.tenant_id', true), '') as tid`);
    expect(after!.u).not.toBe(APP_ROLE);
    expect(after!.tid).toBe('');
  });

  it('every table with tenant_id has RLS enabled and forced, with a tenant policy (USING and WITH CHECK)', async () => {
    expect(tables).toEqual(expect.arrayContaining(SEEDED));
    for (const table of tables) {
      const [cls] = await raw(sql`select c.relrowsecurity, c.relforcerowsecurity from pg_class c
                                  join pg_namespace n on n.oid = c.relnamespace
                                  where n.nspname = 'public' and c.relname = ${table} and c.relkind in ('r', 'p')`);
      expect(cls, `${table} is a table`).toBeDefined();
      expect(cls, `${table}: RLS enabled and forced`).toEqual({ relrowsecurity: true, relforcerowsecurity: true });
      const policies = await raw(sql`select policyname, permissive, cmd, qual, with_check from pg_policies
                                     where schemaname = 'public' and tablename = ${table}`);
      expect(policies.length, `${table}: has a policy`).toBeGreaterThan(0);
      const tenantPolicy = policies.find((p) => String(p.qual).includes('app.tenant_id') && String(p.qual).includes('tenant_id'));
      expect(tenantPolicy, `${table}: a policy compares tenant_id with app.tenant_id`).toBeDefined();
      expect(String(tenantPolicy!.with_check ?? tenantPolicy!.qual)).toContain('app.tenant_id');
      expect(tenantPolicy!.cmd).toBe('ALL');
      // Migration 0039: the scope is a scalar subquery, evaluated once per statement, not per row.
      for (const expr of [tenantPolicy!.qual, tenantPolicy!.with_check]) expect(String(expr), `${table}: scope read once per statement`).toMatch(/\(\s*SELECT\s+\(?\s*NULLIF\(current_setting\('app\.tenant_id'/i);
    }
  });

  it('a table enabled later gets the same policy, read once per statement (parley_enable_tenant_rls, migration 0039)', async () => {
    await raw(sql`create table rls_later_probe (id int primary key, tenant_id uuid not null)`);
    try {
      await raw(sql`select parley_enable_tenant_rls('rls_later_probe'::regclass)`);
      const [p] = await raw(sql`select qual, with_check, cmd from pg_policies where tablename = 'rls_later_probe' and policyname = 'tenant_isolation'`);
      expect(p?.cmd).toBe('ALL');
      for (const expr of [p!.qual, p!.with_check]) expect(String(expr)).toMatch(/tenant_id = \(\s*SELECT\s+\(?\s*NULLIF\(current_setting\('app\.tenant_id'/i);
      await raw(sql`insert into rls_later_probe values (1, ${tenants.A.owner.tenantId}), (2, ${tenants.B.owner.tenantId})`);
      expect((await scoped(tenants.A.owner.tenantId, sql`select id from rls_later_probe`)).map((r) => r.id)).toEqual([1]);
    } finally {
      await raw(sql`drop table rls_later_probe`);
    }
  });

  it('the tenants table is protected as well', async () => {
    const [cls] = await raw(sql`select relrowsecurity, relforcerowsecurity from pg_class c join pg_namespace n on n.oid = c.relnamespace
                                where n.nspname = 'public' and c.relname = 'tenants'`);
    expect(cls).toEqual({ relrowsecurity: true, relforcerowsecurity: true });
    const rows = await scoped(tenants.A.owner.tenantId, sql`select id from tenants`);
    expect(rows.map((r) => r.id)).toEqual([tenants.A.owner.tenantId]);
  });

  it('seed data exists for both tenants (the isolation checks below are not vacuous)', async () => {
    for (const table of SEEDED) {
      const rows = await raw(sql`select distinct tenant_id from ${sql.identifier(table)}`);
      const ids = rows.map((r) => r.tenant_id);
      expect(ids, table).toEqual(expect.arrayContaining([tenants.A.owner.tenantId, tenants.B.owner.tenantId]));
    }
  });

  it("a query with no tenant filter, inside A's scope, returns only A's rows (every tenant_id table)", async () => {
    for (const who of ['A', 'B'] as const) {
      const me = tenants[who].owner.tenantId;
      for (const table of tables) {
        // Two-party tables (A2A, federation) belong to both tenants named on the row.
        const twoParty = twoPartyTables.includes(table);
        const rows = await scoped(
          me,
          twoParty
            ? sql`select tenant_id, partner_tenant_id from ${sql.identifier(table)}`
            : table === PUBLIC_CATALOGUE
              ? sql`select tenant_id, status from ${sql.identifier(table)}`
              : sql`select tenant_id from ${sql.identifier(table)}`,
        );
        // Published listings of other tenants are the documented exemption (PUBLIC_CATALOGUE).
        const foreign = rows.filter((r) => r.tenant_id !== me && (!twoParty || r.partner_tenant_id !== me) && !exempt(table, r));
        expect(foreign, `${table} leaked rows of another tenant into ${who}'s scope`).toEqual([]);
        if (SEEDED.includes(table)) expect(rows.length, `${table} has ${who}'s rows`).toBeGreaterThan(0);
        // The superuser connection outside the scope sees more: the filter really is RLS.
        const [{ n: total } = { n: 0 }] = await raw(sql`select count(*)::int as n from ${sql.identifier(table)}`);
        if (SEEDED.includes(table)) expect(total as number, table).toBeGreaterThan(rows.length);
      }
    }
  });

  it('with the role switched but app.tenant_id unset (or empty), every table shows zero rows', async () => {
    for (const table of [...tables, 'tenants']) {
      // Published listings are readable without a tenant (PUBLIC_CATALOGUE): every other row must stay hidden.
      const rows = rowsOf(await unscoped((tx) => tx.execute(sql`select * from ${sql.identifier(table)}`))).filter((r) => !exempt(table, r));
      expect(rows, `${table} without a tenant scope`).toEqual([]);
      const empty = rowsOf(
        await unscoped(async (tx) => {
          await tx.execute(sql`select set_config('app.tenant_id', '', true)`);
          return tx.execute(sql`select * from ${sql.identifier(table)}`);
        }),
      ).filter((r) => !exempt(table, r));
      expect(empty, `${table} with an empty tenant scope`).toEqual([]);
    }
  });

  it("inserting a row for tenant B inside A's scope fails, and nothing is written", async () => {
    const A = tenants.A.owner.tenantId;
    const B = tenants.B.owner.tenantId;
    const inviteId = randomUUID();
    expect(
      await dbError(
        withTenant(db, A, (tx) =>
          tx.execute(sql`insert into invites (id, tenant_id, token_hash, status, created_by, expires_at)
                         values (${inviteId}, ${B}, ${'h-' + inviteId}, 'active', 'attacker', now() + interval '10 minutes')`),
        ),
      ),
    ).toMatch(RLS_VIOLATION);
    expect(await raw(sql`select id from invites where id = ${inviteId}`)).toEqual([]);

    const topicId = randomUUID();
    expect(
      await dbError(
        withTenant(db, A, (tx) =>
          tx.execute(sql`insert into topics (id, tenant_id, group_id, name) values (${topicId}, ${B}, ${tenants.B.agent.groupId}, 'planted')`),
        ),
      ),
    ).toMatch(RLS_VIOLATION);
    expect(await raw(sql`select id from topics where id = ${topicId}`)).toEqual([]);

    const membership = withTenant(db, A, (tx) => tx.execute(sql`insert into memberships (tenant_id, user_sub, role) values (${B}, 'attacker@example.com', 'OWNER_ADMIN')`));
    expect(await dbError(membership)).toMatch(RLS_VIOLATION);
    expect(await raw(sql`select * from memberships where user_sub = 'attacker@example.com'`)).toEqual([]);

    // The same insert for A itself succeeds (the failure above is the policy, not the statement).
    await withTenant(db, A, (tx) =>
      tx.execute(sql`insert into invites (id, tenant_id, token_hash, status, created_by, expires_at)
                     values (${inviteId}, ${A}, ${'h-' + inviteId}, 'active', 'test', now() + interval '10 minutes')`),
    );
    expect(await raw(sql`select tenant_id from invites where id = ${inviteId}`)).toEqual([{ tenant_id: A }]);
  });

  it("A's scope can neither update nor delete B's rows, nor move its own rows to B", async () => {
    const A = tenants.A.owner.tenantId;
    const B = tenants.B.owner.tenantId;
    const bTopic = tenants.B.agent.defaultTopicId;
    const updated = await scoped(A, sql`update topics set name = 'hijacked' where id = ${bTopic} returning id`);
    expect(updated).toEqual([]);
    const deleted = await scoped(A, sql`delete from messages where tenant_id = ${B} returning id`);
    expect(deleted).toEqual([]);
    const [bTopicRow] = await raw(sql`select name from topics where id = ${bTopic}`);
    expect(bTopicRow!.name).not.toBe('hijacked');
    const [{ n }] = (await raw(sql`select count(*)::int as n from messages where tenant_id = ${B}`)) as [{ n: number }];
    expect(n).toBeGreaterThan(0);

    expect(await dbError(scoped(A, sql`update topics set tenant_id = ${B} where id = ${tenants.A.agent.defaultTopicId}`))).toMatch(RLS_VIOLATION);
    const [aTopic] = await raw(sql`select tenant_id from topics where id = ${tenants.A.agent.defaultTopicId}`);
    expect(aTopic!.tenant_id).toBe(A);
  });

  it('platform tables without tenant_id are not readable by the application role', async () => {
    expect(await dbError(scoped(tenants.A.owner.tenantId, sql`select kid from signing_keys`))).toMatch(/permission denied/);
    const keys = await raw(sql`select kid from signing_keys`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it("marketplace listings: B's draft is invisible in A's scope and the anonymous one; B's PUBLISHED listing is readable there (published_listings_read) but not writable", async () => {
    const A = tenants.A.owner.tenantId;
    const B = tenants.B;
    const ids = (rows: Row[]) => rows.map((r) => r.id).sort();
    const both = sql`select id from marketplace_listings where id in (${B.published}, ${B.draft}, ${tenants.A.draft})`;
    // the superuser sees all three: the filtering below is RLS
    expect(ids(await raw(both))).toEqual([B.published, B.draft, tenants.A.draft].sort());
    expect(ids(await scoped(A, both))).toEqual([B.published, tenants.A.draft].sort());
    expect(ids(await scoped(B.owner.tenantId, both))).toEqual([B.published, B.draft].sort());
    expect(ids(rowsOf(await withNoTenant(db, (tx) => tx.execute(both))))).toEqual([B.published]);
    expect(ids(rowsOf(await unscoped((tx) => tx.execute(both))))).toEqual([B.published]);
    // every row the anonymous scope sees is published
    const anon = rowsOf(await withNoTenant(db, (tx) => tx.execute(sql`select status from marketplace_listings`)));
    expect(anon.length).toBeGreaterThanOrEqual(2);
    expect(anon.every((r) => r.status === 'published')).toBe(true);

    // Reading is all: A's scope (and the anonymous one) can neither change nor remove B's published listing, nor plant one for B.
    expect(await scoped(A, sql`update marketplace_listings set title = 'hijacked' where id = ${B.published} returning id`)).toEqual([]);
    expect(await scoped(A, sql`delete from marketplace_listings where id = ${B.published} returning id`)).toEqual([]);
    expect(await scoped(A, sql`select id from marketplace_listings where id = ${B.published} for update`)).toEqual([]);
    expect(rowsOf(await withNoTenant(db, (tx) => tx.execute(sql`update marketplace_listings set status = 'delisted' where id = ${B.published} returning id`)))).toEqual([]);
    expect(await raw(sql`select title, status from marketplace_listings where id = ${B.published}`)).toEqual([{ title: 'Published listing', status: 'published' }]);
    expect(await dbError(scoped(A, sql`update marketplace_listings set tenant_id = ${B.owner.tenantId} where id = ${tenants.A.draft}`))).toMatch(RLS_VIOLATION);

    // Over the API: the draft is 404 for A and for anonymous callers, the published listing is not.
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/listings/${B.draft}`, headers: tenants.A.owner.auth })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/listings/${B.draft}` })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/listings/${B.published}`, headers: tenants.A.owner.auth })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/marketplace/listings/${B.published}` })).status).toBe(200);
  });

  it('marketplace rentals are two-party rows: the renter and the developer see the rental, no scope without a tenant does', async () => {
    const q = sql`select id, tenant_id, partner_tenant_id from marketplace_rentals where id = ${rentalId}`;
    expect(await scoped(tenants.A.owner.tenantId, q)).toEqual([{ id: rentalId, tenant_id: tenants.A.owner.tenantId, partner_tenant_id: tenants.B.owner.tenantId }]);
    expect((await scoped(tenants.B.owner.tenantId, q)).map((r) => r.id)).toEqual([rentalId]);
    expect(rowsOf(await withNoTenant(db, (tx) => tx.execute(q)))).toEqual([]);
  });

  it('the ledger: the application role can neither read nor write ledger_entries/ledger_transactions; parley_ledger_sums refuses another tenant', async () => {
    const A = tenants.A.owner.tenantId;
    const B = tenants.B.owner.tenantId;
    // the rental's charge is in the ledger (the denials below are not about empty tables)
    const [{ n: entries }] = (await raw(sql`select count(*)::int as n from ledger_entries where party_tenant_id in (${A}, ${B})`)) as [{ n: number }];
    expect(entries).toBeGreaterThanOrEqual(3);
    for (const table of ['ledger_entries', 'ledger_transactions']) {
      expect(await dbError(scoped(A, sql`select * from ${sql.identifier(table)}`)), table).toMatch(/permission denied/);
      expect(await dbError(withNoTenant(db, (tx) => tx.execute(sql`select * from ${sql.identifier(table)}`))), table).toMatch(/permission denied/);
      expect(await dbError(scoped(A, sql`delete from ${sql.identifier(table)}`)), table).toMatch(/permission denied/);
    }
    const txId = randomUUID();
    expect(await dbError(scoped(A, sql`insert into ledger_transactions (id, kind, reference) values (${txId}, 'charge', ${'forged-' + txId})`))).toMatch(/permission denied/);
    expect(await dbError(scoped(A, sql`update ledger_entries set amount_cents = 0`))).toMatch(/permission denied/);
    expect(await raw(sql`select id from ledger_transactions where id = ${txId}`)).toEqual([]);
    // the appending function refuses an unbalanced transaction
    const unbalanced = JSON.stringify([{ account: 'developer_payable', party_tenant_id: A, amount_cents: -100 }, { account: 'renter_charges', party_tenant_id: A, amount_cents: 99 }]);
    expect(await dbError(scoped(A, sql`select parley_ledger_post(${txId}::uuid, 'charge', ${'forged-' + txId}, null, null, null, ${unbalanced}::jsonb)`))).toMatch(/unbalanced/);
    expect(await raw(sql`select id from ledger_transactions where id = ${txId}`)).toEqual([]);
    // sums: one's own tenant only
    const own = await scoped(A, sql`select account, kind, amount_cents::int as amount_cents from parley_ledger_sums(${A}::uuid)`);
    expect(own).toEqual(expect.arrayContaining([{ account: 'renter_charges', kind: 'charge', amount_cents: 5000 }]));
    expect(await dbError(scoped(A, sql`select * from parley_ledger_sums(${B}::uuid)`))).toMatch(/ledger sums of another tenant/);
    expect(await dbError(scoped(B, sql`select * from parley_ledger_sums(${A}::uuid)`))).toMatch(/ledger sums of another tenant/);
    expect(await dbError(withNoTenant(db, (tx) => tx.execute(sql`select * from parley_ledger_sums(${A}::uuid)`)))).toMatch(/ledger sums of another tenant/);
    // and even the connection owner cannot rewrite history (append-only triggers)
    expect(await dbError(raw(sql`update ledger_entries set amount_cents = amount_cents where party_tenant_id = ${A}`))).toMatch(/append-only/);
  });

  it("over the API, each owner sees only its own tenant's devices, conversations and topics", async () => {
    const A = tenants.A;
    const B = tenants.B;
    const devs = await t.request({ method: 'GET', url: '/api/v1/devices', headers: A.owner.auth });
    expect(devs.status).toBe(200);
    const ids = devs.body.devices.map((d: { device_id: string }) => d.device_id);
    expect(ids).toEqual(expect.arrayContaining([A.dev.deviceId, A.agent.deviceId]));
    expect(ids).not.toContain(B.dev.deviceId);
    expect(ids).not.toContain(B.agent.deviceId);
    const topics = await t.request({ method: 'GET', url: '/api/v1/topics', headers: B.owner.auth });
    expect(topics.body.topics.every((x: { group_id: string }) => x.group_id === B.agent.groupId)).toBe(true);
    const invites = await t.request({ method: 'GET', url: '/api/v1/invites', headers: B.owner.auth });
    expect(invites.status).toBe(200);
    expect(invites.body.invites.map((i: { device_id: string | null }) => i.device_id)).not.toContain(A.agent.deviceId);
  });
});
