/**
 * The hot-path tenant writer (db/tenant-writer.ts): the statement runs in the tenant's scope
 * (application role, `app.tenant_id`) under the advisory lock and is answered after COMMIT; a
 * failing statement writes nothing; on PostgreSQL the pipelined writer's next write, sent once the
 * first holds the lock, runs after the first committed; `genericPlan` plans a statement once; a
 * killed connection is replaced.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ROLE } from '../../src/db/tenant.js';
import { openTenantWriter, type TenantWriter } from '../../src/db/tenant-writer.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';

let t: TestApp;
let writer: TenantWriter;
const connectionErrors: Error[] = [];
const tenantId = randomUUID();
const lockKey = `test-writer:${tenantId}`;

beforeAll(async () => {
  t = await startApp();
  const { db } = t.app.parley.database;
  await db.execute(sql.raw(`create table tw_probe (id int primary key, tenant text not null)`));
  await db.execute(sql.raw(`grant all on tw_probe to ${APP_ROLE}`));
  writer = openTenantWriter(t.app.parley.database, { onConnectionError: (err) => connectionErrors.push(err) });
});
afterAll(async () => {
  await writer?.close();
  await t?.close();
});

const count = async () => Number(((await t.app.parley.database.db.execute(sql`select count(*)::int as n from tw_probe`)) as unknown as { rows: { n: number }[] }).rows[0]!.n);

describe(`tenant writer (${backend})`, () => {
  it('runs the statement as the application role in the tenant scope and reports the lock once', async () => {
    let locked = 0;
    const rows = await writer.write<{ tenant: string; role: string }>({
      tenantId,
      lockKey,
      name: 'tw_scope',
      statement: sql`select current_setting('app.tenant_id') as tenant, current_user as role`,
      onLocked: () => locked++,
    });
    expect(rows).toEqual([{ tenant: tenantId, role: APP_ROLE }]);
    expect(locked).toBe(1);
  });

  it('writes nothing when the statement fails, and the next write succeeds', async () => {
    let locked = 0;
    const err = await writer
      .write({ tenantId, lockKey, name: 'tw_dup', statement: sql`insert into tw_probe (id, tenant) values (1, 'a'), (1, 'b')`, onLocked: () => locked++ })
      .then(() => undefined, (e: Error & { cause?: Error }) => e);
    // drizzle (PGlite) wraps the driver's error as its cause.
    expect(`${err?.message} ${err?.cause?.message}`).toMatch(/duplicate key/);
    expect(locked).toBe(1);
    expect(await count()).toBe(0);
    const rows = await writer.write<{ id: number }>({ tenantId, lockKey, name: 'tw_one', statement: sql`insert into tw_probe (id, tenant) values (2, current_setting('app.tenant_id')) returning id` });
    expect(rows).toEqual([{ id: 2 }]);
    expect(await count()).toBe(1);
  });
  it('with pipelineCommit (COMMIT in the same round trip): a good statement is committed, a failing one writes nothing and the next write succeeds', async () => {
    const before = await count();
    const rows = await writer.write<{ id: number }>({ tenantId, name: 'tw_early', pipelineCommit: true, statement: sql`insert into tw_probe (id, tenant) values (50, current_setting('app.tenant_id')) returning id` });
    expect(rows).toEqual([{ id: 50 }]);
    expect(await count()).toBe(before + 1);
    const err = await writer
      .write({ tenantId, lockKey, name: 'tw_early_dup', pipelineCommit: true, statement: sql`insert into tw_probe (id, tenant) values (51, 'a'), (51, 'b')` })
      .then(() => undefined, (e: Error & { cause?: Error }) => e);
    expect(`${err?.message} ${err?.cause?.message}`).toMatch(/duplicate key/);
    expect(await count()).toBe(before + 1);
    const scope = await writer.write<{ tenant: string; role: string }>({ tenantId, name: 'tw_early_scope', pipelineCommit: true, statement: sql`select current_setting('app.tenant_id') as tenant, current_user as role` });
    expect(scope).toEqual([{ tenant: tenantId, role: APP_ROLE }]);
  });
});

describe.skipIf(backend !== 'postgres')('pipelined tenant writer (postgres)', () => {
  it('refuses a tenant id that is not a UUID or a lock key with other characters (they are inlined), writing nothing', async () => {
    const before = await count();
    const statement = sql`insert into tw_probe (id, tenant) values (3, 'bad')`;
    await expect(writer.write({ tenantId: "x'; drop table tw_probe; --", lockKey, name: 'tw_bad', statement })).rejects.toThrow(/not a UUID/);
    await expect(writer.write({ tenantId, lockKey: "k', 0)); drop table tw_probe; --", name: 'tw_bad', statement })).rejects.toThrow(/lock key/);
    expect(await count()).toBe(before);
  });

  it('genericPlan: the named statement runs on its generic plan from the first execution; without it, on custom plans', async () => {
    const plans = (name: string, genericPlan: boolean) =>
      writer.write<{ g: number; c: number }>({
        tenantId,
        name,
        chain: true, // the same connection every time: prepared statements are per connection
        genericPlan,
        statement: sql`select generic_plans::int as g, custom_plans::int as c from pg_prepared_statements where name = ${name} and ${1}::int = 1`,
      });
    for (let i = 0; i < 2; i++) await plans('tw_generic', true);
    const [generic] = await plans('tw_generic', true);
    expect(generic!.c).toBe(0);
    expect(generic!.g).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < 2; i++) await plans('tw_custom', false);
    const [custom] = await plans('tw_custom', false);
    expect(custom!.c).toBeGreaterThanOrEqual(2);
  });

  it('a write sent once the previous one holds the lock runs after that one committed', async () => {
    const before = await count();
    let second: Promise<{ n: number }[]> | undefined;
    const first = writer.write({
      tenantId,
      lockKey,
      name: 'tw_slow_insert',
      // Holds the lock for a while before inserting, so the second write is queued behind it in PostgreSQL.
      statement: sql`insert into tw_probe (id, tenant) select 100, 'first' from pg_sleep(0.3) returning id`,
      onLocked: () => {
        second = writer.write<{ n: number }>({ tenantId, lockKey, name: 'tw_count', statement: sql`select count(*)::int as n from tw_probe` });
      },
    });
    await first;
    expect(second).toBeDefined();
    // The second statement ran after the first committed: it sees the first's row.
    expect(await second!).toEqual([{ n: before + 1 }]);
  });

  it('chained writes of a tenant run in the order sent, one after the other, each reporting its lock once sent; a failing one between them writes nothing', async () => {
    const before = await count();
    const locked: string[] = [];
    // Sent back to back without waiting: the first sleeps before inserting, yet the later ones run
    // after it committed (the third counts the rows), and the failing second stops nothing.
    const first = writer.write<{ id: number }>({
      tenantId,
      lockKey,
      name: 'tw_chain_slow',
      chain: true,
      statement: sql`insert into tw_probe (id, tenant) select 200, 'first' from pg_sleep(0.2) returning id`,
      onLocked: () => locked.push('first'),
    });
    const second = writer.write({ tenantId, lockKey, name: 'tw_chain_dup', chain: true, statement: sql`insert into tw_probe (id, tenant) values (201, 'a'), (201, 'b')`, onLocked: () => locked.push('second') });
    const third = writer.write<{ n: number }>({ tenantId, lockKey, name: 'tw_chain_count', chain: true, statement: sql`select count(*)::int as n from tw_probe`, onLocked: () => locked.push('third') });
    // Reported once each write was sent, before any answer.
    await new Promise((r) => setTimeout(r, 50));
    expect(locked).toEqual(['first', 'second', 'third']);
    expect(await first).toEqual([{ id: 200 }]);
    await expect(second).rejects.toThrow(/duplicate key/);
    expect(await third).toEqual([{ n: before + 1 }]);
    expect(await count()).toBe(before + 1);
  });

  it('replaces a connection that was killed', async () => {
    await writer.write({ tenantId, lockKey, name: 'tw_one_col', statement: sql`select 1 as one` });
    const { db } = t.app.parley.database;
    await db.execute(sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'parley-tenant-writer' and datname = current_database()`);
    let ok = 0;
    for (let i = 0; i < 6 && ok < 2; i++) {
      // A write may land on a connection that has not yet learnt it was killed; it fails and is replaced.
      ok += await writer.write({ tenantId, lockKey, name: 'tw_one_col', statement: sql`select 1 as one` }).then(
        () => 1,
        () => 0,
      );
    }
    expect(ok).toBe(2);
    expect(connectionErrors.length).toBeGreaterThan(0);
  });
});
