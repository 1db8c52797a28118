/**
 * The embedded database's single connection (db/single-connection.ts; docs/decisions.md "PGlite's
 * single connection"). A rental made once the signing-key cache had gone stale (60 s after start)
 * reloaded the SPT key from inside the rental's transaction and froze the embedded server for
 * good. Here: the guard turns such a statement into an error at once; the embedded server, run
 * past the first runs of every job with every key use stale, still rents, issues and validates
 * grants, renews device tokens and signs audit checkpoints; and no job run fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { outsideTransaction, SingleConnectionDeadlockError } from '../../src/db/single-connection.js';
import { activeAgent } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';
import { certifiedDeveloper, operatorAuth, publishedListing, renter } from '../../testing/marketplace-fixtures.js';

/** `p`, or a rejection naming `what` when it has not settled within `ms` (a hang fails the test instead of timing it out). */
/** Resolves when `p` rejects with the guard's error (drizzle wraps a failed query's error as its `cause`). */
const refused = (p: PromiseLike<unknown>) =>
  expect(Promise.resolve(p).then(() => 'resolved', (e: { cause?: unknown }) => e.cause ?? e)).resolves.toBeInstanceOf(SingleConnectionDeadlockError);

const within = <T>(what: string, p: Promise<T>, ms = 5_000): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);

describe.skipIf(backend !== 'pglite')('the single connection guard', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ inMemory: true });
  });
  afterAll(() => database.close());

  it('a statement on the database from inside its own transaction fails at once instead of waiting forever', async () => {
    const { db } = database;
    await within(
      'nested statement',
      db.transaction(async (tx) => {
        await refused(db.execute(sql`select 1`));
        await refused(db.transaction(async () => 1));
        // Deeper in the same async work, and inside a savepoint, the same.
        await tx.transaction(async () => {
          await refused(Promise.resolve().then(() => db.execute(sql`select 2`)));
        });
        expect((await tx.execute(sql`select 3 as n`)) as unknown).toMatchObject({ rows: [{ n: 3 }] });
      }),
    );
  });

  it('work started inside a transaction through outsideTransaction waits for it to end, then runs', async () => {
    const { db } = database;
    let later: Promise<unknown> | undefined;
    let committed = false;
    await db.transaction(async (tx) => {
      await tx.execute(sql`create table if not exists guard_probe (n int)`);
      await tx.execute(sql`insert into guard_probe values (1)`);
      later = outsideTransaction(() => db.execute(sql`select count(*)::int as n from guard_probe`)).then((r) => ({ committed, rows: (r as { rows: unknown[] }).rows }));
      committed = true;
    });
    await expect(within('outside work', later!)).resolves.toEqual({ committed: true, rows: [{ n: 1 }] });
    // After the transaction, statements on the database run as usual (also in callbacks it left behind).
    expect((await db.execute(sql`select 4 as n`)) as unknown).toMatchObject({ rows: [{ n: 4 }] });
  });
});

describe.skipIf(backend !== 'pglite')('the embedded server past its first job runs', () => {
  let t: TestApp;
  let dataDir: string;
  const exec = async <T>(q: ReturnType<typeof sql>) => ((await t.app.parley.database.db.execute(q)) as unknown as { rows: T[] }).rows;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-embedded-'));
    t = await startApp({
      dataDir,
      env: {
        RATE_LIMIT_ENROLL_PER_10MIN: '1000',
        JOB_POLL_INTERVAL_MS: '100',
        MARKETPLACE_RENTAL_POLL_MS: '100',
        DECISION_DEADLINE_INTERVAL_MS: '100',
        SPEND_ALERT_INTERVAL_MINUTES: '0.02',
        AUDIT_CHECKPOINT_INTERVAL_MINUTES: '0.02',
      },
      // Every use of a signing key finds its cache stale, as the first use 60 s after start does.
      overrides: { keyRefreshMs: 1, expiryJobIntervalMs: 100 },
    });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('every job runs without failing, and afterwards renting, grants, renewals and checkpoints answer', async () => {
    const op = await operatorAuth(t);
    const dev = await certifiedDeveloper(t, op);
    const buyer = await renter(t);
    const listingId = await publishedListing(t, dev);

    // Every cluster job is made due at once (their first runs are otherwise an interval away).
    await expect.poll(async () => (await exec<{ n: number }>(sql`select count(*)::int as n from scheduled_jobs`))[0]!.n, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    await exec(sql`update scheduled_jobs set next_run_at = now() - interval '1 second'`);
    await expect
      .poll(async () => (await exec<{ n: number }>(sql`select count(*)::int as n from scheduled_jobs where last_run_at is null`))[0]!.n, { timeout: 15_000 })
      .toBe(0);
    const runs = async () => (await t.app.parley.metrics.scrape()).body.split('\n').filter((l) => l.startsWith('parley_job_runs_total{'));
    const jobs = ['invite_expiry', 'held_expiry', 'decision_deadlines', 'audit_checkpoints', 'trust_recompute', 'telemetry_prune', 'spend_alerts', 'marketplace_payouts', 'marketplace_rentals'];
    const missing = async () => {
      const lines = await runs();
      return jobs.filter((j) => !lines.some((l) => l.includes(`job="${j}",outcome="ok"`)));
    };
    await expect.poll(missing, { timeout: 10_000 }).toEqual([]);

    const rent = await within('POST /marketplace/rentals', t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyer.owner.auth, payload: { listing_id: listingId, payment_method: 'pm_card_visa' } }));
    expect(rent.status, JSON.stringify(rent.body)).toBe(201);
    const shown = await within('GET /marketplace/rentals/{id}', t.request({ method: 'GET', url: `/api/v1/marketplace/rentals/${rent.body.rental_id}`, headers: buyer.owner.auth }));
    expect(shown.body.grant.spt_token).toMatch(/^ey/);

    const grant = await within('POST /grants', t.request({ method: 'POST', url: '/api/v1/grants', headers: dev.owner.auth, payload: { skill: 'research', device_id: dev.agent.deviceId } }));
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const valid = await within('POST /grants/validate', t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token: grant.body.token, skill: 'research', audience: t.config.publicUrl } }));
    expect(valid.body.valid, JSON.stringify(valid.body)).toBe(true);
    expect((await within('GET /grants/jwks', t.request({ method: 'GET', url: '/api/v1/grants/jwks' }))).body.keys.length).toBeGreaterThan(0);

    const agent = await within('an agent enrolls', activeAgent(t, dev.owner));
    const ch = await t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token/challenge` });
    const renewed = await within('device token renewal', t.request({ method: 'POST', url: `/api/v1/devices/${agent.deviceId}/token`, payload: { challenge: ch.body.challenge, signature: agent.keys.sign(ch.body.challenge) } }));
    expect(renewed.status).toBe(200);
    expect((await within('the renewed token is accepted', t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/pending`, headers: { authorization: `Bearer ${renewed.body.device_jwt}` } }))).status).toBe(200);
    expect((await within('GET /audit/checkpoint', t.request({ method: 'GET', url: '/api/v1/audit/checkpoint', headers: dev.owner.auth }))).status).toBe(200);
    expect((await within('GET /health', t.request({ method: 'GET', url: '/health' }))).status).toBe(200);

    // More polls and job runs after all that, and still nothing failed.
    const before = (await runs()).join('\n');
    await expect.poll(async () => (await runs()).join('\n'), { timeout: 10_000 }).not.toBe(before);
    expect((await runs()).filter((l) => /outcome="failed"/.test(l) && !/ 0$/.test(l))).toEqual([]);
  });
});
