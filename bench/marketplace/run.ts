/**
 * bench/marketplace: the marketplace's two hot paths (issue "Listing search p50/p99 at 10,000
 * published listings next to a bare SQL query of the same filter; rentals created per second end
 * to end on the embedded processor"; design §8.23, §8.35, §9), each next to a baseline measured
 * in the same run.
 *
 * Set-up: the real app (buildApp) on a fresh PostgreSQL database, RATE_LIMITS=off,
 * LOG_LEVEL=silent, listening on 127.0.0.1, the embedded local payment processor. `--developers`
 * (4) developer tenants, each with an ACTIVE agent device and a hub identity certified through
 * the API by a platform operator (developer 0 enterprise, the others certified); `--listings`
 * (10,000) PUBLISHED listings inserted directly with SQL, round-robin over the developers
 * (deterministic pseudo-random titles "<adjective> <noun> and <noun> agent" over 10 adjectives and
 * 20 nouns, descriptions naming two more nouns, 12 categories, 1–4 of 30 capabilities, four
 * pricing models, prices log-uniform 1–1,000 USD, trust tier of the identity, published in the
 * last 30 days), then `search_document` filled by one UPDATE with the expression of
 * `refreshSearchDocument` and a VACUUM ANALYZE (seed.ts). One renter tenant (owner JWT) is the
 * authenticated caller of both measurements.
 *
 *   search   for each filter of the mix (seed.ts FILTERS: newest, one-word text, two-word text,
 *            category, capability, tier, price range, combined), `--requests` (200) requests after
 *            20 warm-up ones, one at a time, each a different value where the filter has one.
 *            Per request, in turn and with the same filter:
 *              http  `GET /api/v1/marketplace/listings?…` (default limit 20) with `fetch` from
 *                    THIS process to the listening server (keep-alive), body read and parsed;
 *              sql   baseline: the SELECT the service runs (`listingWhere` of listings-repo.ts,
 *                    the same rank, ORDER BY and LIMIT 21, built with drizzle's QueryBuilder) on
 *                    a plain `pg` client (superuser: no RLS, no transaction, unnamed statement);
 *              tx    diagnostic: the same SELECT inside begin / set_config(tenant, role
 *                    parley_app) / commit on that client, as `withTenant` runs it (RLS applies).
 *            The first request of each filter checks that HTTP and SQL answer the same ids.
 *   rentals  `--clients` (8) concurrent keep-alive HTTP clients in a separate Node process
 *            (load.ts), closed loop, `POST /api/v1/marketplace/rentals {listing_id,
 *            payment_method: pm_card_visa}` over 1,000 of the listings cycled (the local
 *            processor succeeds synchronously: 201 `active`, charge posted to the ledger, SPT
 *            issued, audited in both tenants' chains); `--warmup` (2) s + `--duration` (10) s.
 *            Baseline, same clients, same renter, same run, measured just before: `GET
 *            /api/v1/marketplace/payment-method`, the cheapest authenticated marketplace route
 *            (HTTP, owner-JWT verification, one tenant-scoped transaction with one
 *            single-row SELECT): the ratio is what a rental costs beyond a minimal authenticated
 *            round trip through the same stack. Checks afterwards: marketplace_rentals gained
 *            exactly the acknowledged rentals, all `active`, and the operator's ledger check
 *            answers balanced. The server's SQL statements and transactions per rental are counted
 *            by wrapping `pg.Client.prototype.query` in this process (the load runs elsewhere).
 *            Lock order: a rental takes both tenants' audit-chain locks twice — at creation in
 *            ascending tenant-id order (appendAuditToParties), at activation the developer's
 *            first (grant.issued) and then both in ascending order — so concurrent rentals whose
 *            renter id sorts BELOW the developer's can deadlock (PostgreSQL aborts one: HTTP 500,
 *            the rental stays `pending`). `rentals` therefore rents only listings of developers
 *            whose tenant id sorts below the renter's (the bench creates renter tenants until at
 *            least half of the developers qualify), and must run without errors;
 *   rentals-any  diagnostic: the same over the listings of every developer, reporting the
 *            failures, the rows left `pending` and PostgreSQL's deadlock counter, without
 *            failing the run.
 *
 * Runs only against 127.0.0.1; creates a fresh database and drops it at the end.
 *
 *   npm run bench:marketplace -- [--listings 10000] [--developers 4] [--requests 200]
 *                                [--clients 8] [--duration 10] [--warmup 2]
 *                                [--scenarios search,rentals,rentals-any]
 *                                [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_LISTINGS, BENCH_DEVELOPERS, BENCH_REQUESTS, BENCH_CLIENTS,
 * BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_SCENARIOS, BENCH_DATABASE_URL (or DATABASE_URL).
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { desc, sql as dsql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { marketplaceListings as L } from '../../packages/server/src/db/schema/index.js';
import { APP_ROLE } from '../../packages/server/src/db/tenant.js';
import { SEARCH_CONFIG } from '../../packages/server/src/modules/hub/repo.js';
import { listingWhere, type ListingFilter } from '../../packages/server/src/modules/marketplace/listings-repo.js';
import { benchArgs, commonOptions, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { call, machineLines, newTenant, startBenchServer } from '../relay/setup.js';
import { countSql } from '../relay/sql-count.js';
import type { HttpLoadResult, HttpLoadSpec } from './load.js';
import { FILTERS, provisionDevelopers, seedListings } from './seed.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

// ---------------------------------------------------------------- options

const arg = benchArgs(import.meta.url, ['listings', 'developers', 'requests', 'clients']);
const opts = {
  ...commonOptions(arg, { durationS: 10, warmupS: 2, window: 1, rate: 1, scenarios: ['search', 'rentals', 'rentals-any'] }),
  listings: Math.floor(num('listings', arg('listings', 'BENCH_LISTINGS'), 10_000)),
  developers: Math.floor(num('developers', arg('developers', 'BENCH_DEVELOPERS'), 4)),
  requests: Math.floor(num('requests', arg('requests', 'BENCH_REQUESTS'), 200)),
  clients: Math.floor(num('clients', arg('clients', 'BENCH_CLIENTS'), 8)),
};
if (opts.listings > 200_000) throw new Error('listings is capped at 200,000');
if (opts.developers > 20) throw new Error('developers is capped at 20');
if (opts.requests > 2000) throw new Error('requests per filter is capped at 2,000');
if (opts.clients > 64) throw new Error('clients is capped at 64');
if (3 * (opts.durationS + opts.warmupS) > 120) throw new Error('the rental phases are capped at 120 s in total');
const SEARCH_WARMUP = 20;
/** Each filter's loop also stops after this many seconds, whatever `--requests` says. */
const FILTER_CAP_S = 30;
const PAGE = 20;
const RENTAL_LISTINGS = 1000;

// ---------------------------------------------------------------- helpers

const quantile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

/** The SELECT of listings-repo.ts `searchListings` (first page), as text and parameters. */
const qb = new QueryBuilder();
const CFG = dsql.raw(`'${SEARCH_CONFIG}'::regconfig`);
function searchSql(f: ListingFilter, limit: number): { sql: string; params: unknown[] } {
  const rank = f.text ? dsql<number>`ts_rank(${L.searchDocument}, websearch_to_tsquery(${CFG}, ${f.text}))::float8` : dsql<number>`0::float8`;
  const order = f.text ? [desc(rank), desc(L.id)] : [desc(L.publishedAt), desc(L.id)];
  return qb.select({ row: L, rank }).from(L).where(listingWhere(f)).orderBy(...order).limit(limit).toSQL();
}


function forkLoad(spec: HttpLoadSpec): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'load.ts'), [], { cwd: repoRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const limit = setTimeout(() => child.kill('SIGKILL'), spec.warmupMs + spec.durationMs + 60_000);
    child.once('message', (m: { result?: HttpLoadResult; error?: string }) => {
      clearTimeout(limit);
      if (m.result) resolve(m.result);
      else reject(new Error(m.error ?? 'load generator failed'));
    });
    child.once('exit', (code) => {
      clearTimeout(limit);
      reject(new Error(`${spec.label}: load generator exited with ${code}`));
    });
    child.send({ spec });
  });
}

// ---------------------------------------------------------------- search

interface SearchOutcome {
  name: string;
  describe: string;
  requests: number;
  /** Mean listings per answer (of at most 20). */
  rows: number;
  http: number[];
  bare: number[];
  tx: number[];
}

async function searchPhase(baseUrl: string, auth: Record<string, string>, tenantId: string, databaseUrl: string): Promise<{ outcomes: SearchOutcome[]; failures: string[] }> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const outcomes: SearchOutcome[] = [];
  const failures: string[] = [];
  try {
    for (const [name, def] of Object.entries(FILTERS)) {
      const o: SearchOutcome = { name, describe: def.describe, requests: 0, rows: 0, http: [], bare: [], tx: [] };
      const stopAt = performance.now() + FILTER_CAP_S * 1000;
      for (let i = 0; i < SEARCH_WARMUP + opts.requests && performance.now() < stopAt; i++) {
        const s = def.make(i);
        const q = searchSql(s.filter, PAGE + 1);

        let t = performance.now();
        const res = await fetch(`${baseUrl}/api/v1/marketplace/listings?${new URLSearchParams(s.query).toString()}`, { headers: auth });
        const body = (await res.json()) as { listings?: { listing_id: string }[] };
        const httpMs = performance.now() - t;
        if (res.status !== 200 || !body.listings) throw new Error(`search ${name}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);

        t = performance.now();
        const bare = await c.query({ text: q.sql, values: q.params, rowMode: 'array' });
        const bareMs = performance.now() - t;

        t = performance.now();
        await c.query('begin');
        await c.query(`select set_config('app.tenant_id', $1, true), set_config('role', $2, true)`, [tenantId, APP_ROLE]);
        await c.query({ text: q.sql, values: q.params, rowMode: 'array' });
        await c.query('commit');
        const txMs = performance.now() - t;

        if (i === 0) {
          const idCol = bare.fields.findIndex((f) => f.name === 'id');
          const sqlIds = bare.rows.slice(0, PAGE).map((r: unknown[]) => String(r[idCol]));
          const httpIds = body.listings.map((l) => l.listing_id);
          if (JSON.stringify(sqlIds) !== JSON.stringify(httpIds)) failures.push(`${name}: HTTP answered ${httpIds.length} ids, bare SQL ${sqlIds.length}, not the same list`);
          if (httpIds.length === 0) failures.push(`${name}: the first search found nothing`);
        }
        if (i < SEARCH_WARMUP) continue;
        o.requests++;
        o.rows += body.listings.length;
        o.http.push(httpMs);
        o.bare.push(bareMs);
        o.tx.push(txMs);
      }
      o.rows /= Math.max(1, o.requests);
      outcomes.push(o);
      console.log(`# search ${name}: ${o.requests} requests, http p50 ${fmt(quantile(o.http, 0.5), 2)} ms, bare SQL p50 ${fmt(quantile(o.bare, 0.5), 2)} ms`);
    }
  } finally {
    await c.end();
  }
  return { outcomes, failures };
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const started = Date.now();
  const server = await startBenchServer(opts.adminUrl);
  const { app, sql, databaseUrl } = server;
  const baseUrl = server.wsUrl.replace(/^ws/, 'http').replace(/\/api\/v1\/ws$/, '');
  const sqlCounts = countSql();
  const checks: string[] = [];
  let ok = true;
  try {
    let t = Date.now();
    const devs = await provisionDevelopers(app, opts.developers);
    const provisionMs = Date.now() - t;
    t = Date.now();
    const listingIds = await seedListings(sql, devs, opts.listings);
    const seedMs = Date.now() - t;
    // The renter: a tenant whose id sorts above at least half of the developers' (see "lock order" in the header).
    let renter = await newTenant(app, 'bench-renter-0@example.com', 'Bench renter');
    const below = (id: string) => devs.filter((d) => d.tenantId < id).length;
    for (let i = 1; i < 20 && below(renter.tenantId) < Math.ceil(devs.length / 2); i++) renter = await newTenant(app, `bench-renter-${i}@example.com`, 'Bench renter');
    const safeDevs = new Set(devs.filter((d) => d.tenantId < renter.tenantId).map((d) => d.tenantId));
    if (safeDevs.size === 0) throw new Error('no developer tenant id sorts below the renter tenant id');
    const stats = (
      await sql.query<{ n: string; ent: string; docs: string; size: string }>(
        `select count(*) as n, count(*) filter (where trust_tier = 'enterprise') as ent, count(search_document) as docs,
                pg_size_pretty(pg_total_relation_size('marketplace_listings')) as size
         from marketplace_listings where status = 'published'`,
      )
    ).rows[0]!;
    if (Number(stats.n) !== opts.listings || Number(stats.docs) !== opts.listings) throw new Error(`seeded ${stats.n} published listings with ${stats.docs} search documents, expected ${opts.listings}`);

    console.log(
      [
        ...(await machineLines(sql)),
        `${stats.n} published listings (${stats.ent} enterprise-tier, the rest certified) over ${opts.developers} developer tenants; table + indexes ${stats.size}; ` +
          `provisioning ${provisionMs} ms (API), SQL seed + search documents + vacuum analyze ${seedMs} ms`,
        `search: ${opts.requests} measured requests per filter after ${SEARCH_WARMUP} warm-up ones, one at a time, page of ${PAGE}, caller = the renter's owner JWT; ` +
          `HTTP with fetch from the bench process to the server listening on 127.0.0.1`,
        `rentals: ${opts.clients} concurrent clients in a separate process, warm-up ${opts.warmupS} s + measured ${opts.durationS} s per scenario, ${RENTAL_LISTINGS} listings cycled, pm_card_visa (local processor)`,
        `load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min)`,
      ]
        .map((l) => `# ${l}`)
        .join('\n'),
    );

    let searchTable: string | undefined;
    if (opts.scenarios.has('search')) {
      const { outcomes, failures } = await searchPhase(baseUrl, renter.auth, renter.tenantId, databaseUrl);
      for (const f of failures) {
        ok = false;
        checks.push(`search ${f}`);
      }
      if (failures.length === 0) checks.push(`search: for every filter the first HTTP answer listed the same ids, in the same order, as the bare SQL`);
      console.log('\nlisting search (ms per request; ratio = HTTP / bare SQL)');
      searchTable = printTable(
        ['filter', 'n', 'rows', 'HTTP p50', 'HTTP p99', 'SQL p50', 'SQL p99', 'p50 ratio', 'p99 ratio', 'tenant tx p50', 'tenant tx p99'],
        outcomes.map((o) => {
          const [h50, h99, s50, s99] = [quantile(o.http, 0.5), quantile(o.http, 0.99), quantile(o.bare, 0.5), quantile(o.bare, 0.99)];
          return [o.name, String(o.requests), fmt(o.rows, 1), fmt(h50, 2), fmt(h99, 2), fmt(s50, 2), fmt(s99, 2), ratio(h50, s50), ratio(h99, s99), fmt(quantile(o.tx, 0.5), 2), fmt(quantile(o.tx, 0.99), 2)];
        }),
      );
      console.log('\nfilters:');
      for (const o of outcomes) console.log(`  ${o.name}: ${o.describe}`);
    }

    let rentalTable: string | undefined;
    if (opts.scenarios.has('rentals') || opts.scenarios.has('rentals-any')) {
      const put = await app.inject({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: renter.auth, payload: { payment_method: 'pm_card_visa' } });
      if (put.statusCode !== 200) throw new Error(`PUT payment-method: ${put.statusCode} ${put.body}`);
      const base = { headers: renter.auth, clients: opts.clients, warmupMs: opts.warmupS * 1000, durationMs: opts.durationS * 1000 };
      const runs: { label: string; r: HttpLoadResult; statements: number; transactions: number }[] = [];
      const deadlocks = async () => Number((await sql.query<{ n: string }>(`select deadlocks as n from pg_stat_database where datname = current_database()`)).rows[0]!.n);
      const rentalRows = async () => {
        const rows = (await sql.query<{ status: string; n: string }>(`select status, count(*) as n from marketplace_rentals group by status`)).rows;
        return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
      };
      const operator = { authorization: `Bearer ${await app.parley.devIdp!.mint('bench-operator@example.com', { operator: true })}` };
      const measure = async (spec: HttpLoadSpec) => {
        await sql.query('checkpoint');
        const before = { ...sqlCounts };
        const r = await forkLoad(spec);
        runs.push({ label: spec.label, r, statements: sqlCounts.statements - before.statements, transactions: sqlCounts.transactions - before.transactions });
        console.log(`# ${spec.label}: ${fmt(r.requests / (r.measuredMs / 1000), 1)}/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, ${r.errors} errors`);
        return r;
      };
      /** A rental scenario over the listings of `devIds`; answers what it left in marketplace_rentals. */
      const rentalScenario = async (label: string, devIds: Set<string>, strict: boolean) => {
        const pool = listingIds.filter((_, i) => devIds.has(devs[i % devs.length]!.tenantId)).slice(0, RENTAL_LISTINGS);
        const bodies = pool.map((id) => JSON.stringify({ listing_id: id, payment_method: 'pm_card_visa' }));
        const [rowsBefore, dlBefore] = [await rentalRows(), await deadlocks()];
        const r = await measure({ ...base, label, url: `${baseUrl}/api/v1/marketplace/rentals`, method: 'POST', bodies, expectStatus: 201 });
        const [rowsAfter, dlAfter] = [await rentalRows(), await deadlocks()];
        const delta = Object.fromEntries(Object.keys(rowsAfter).map((k) => [k, rowsAfter[k]! - (rowsBefore[k] ?? 0)]));
        const added = Object.values(delta).reduce((a, b) => a + b, 0);
        const ledger = await call(app, 'GET', '/marketplace/ledger/verify', 200, operator);
        const good = r.errors === 0 && delta.active === r.totalOk && added === r.totalOk && ledger.balanced === true;
        if (strict && !good) ok = false;
        checks.push(
          `${label}: ${r.totalOk} answered 201 (warm-up included), ${r.errors} failed${r.firstError ? ` (first: ${r.firstError.slice(0, 120)})` : ''}; ` +
            `marketplace_rentals gained ${added} rows (${Object.entries(delta).map(([k, v]) => `${v} ${k}`).join(', ')}); PostgreSQL deadlocks +${dlAfter - dlBefore}; ` +
            `ledger check: balanced=${String(ledger.balanced)}, ${ledger.transactions} transactions${good ? '' : strict ? '  ^ FAILED' : '  (diagnostic: not an exit failure)'}`,
        );
      };
      await measure({ ...base, label: 'GET payment-method (baseline)', url: `${baseUrl}/api/v1/marketplace/payment-method`, method: 'GET', expectStatus: 200 });
      if (runs[0]!.r.errors > 0) {
        ok = false;
        checks.push(`baseline: ${runs[0]!.r.errors} failed requests, first: ${runs[0]!.r.firstError}`);
      }
      if (opts.scenarios.has('rentals')) await rentalScenario(`POST rentals, ${safeDevs.size} developers with tenant id < renter's`, safeDevs, true);
      if (opts.scenarios.has('rentals-any')) await rentalScenario(`POST rentals, all ${devs.length} developers`, new Set(devs.map((d) => d.tenantId)), false);

      const baseline = runs[0]!.r;
      const rate = (r: HttpLoadResult) => r.requests / (r.measuredMs / 1000);
      console.log('\nrequests/s answered as expected with ' + opts.clients + ' concurrent clients (closed loop); latency in ms of those; SQL per success counted over warm-up + measured window');
      rentalTable = printTable(
        ['scenario', 'requests/s', 'p50 ms', 'p90 ms', 'p99 ms', 'vs baseline', 'errors', 'SQL statements / req', 'transactions / req'],
        runs.map(({ label, r, statements, transactions }) => [
          label,
          fmt(rate(r), 1),
          fmt(r.p50, 2),
          fmt(r.p90, 2),
          fmt(r.p99, 2),
          ratio(rate(r), rate(baseline)),
          String(r.errors),
          fmt(statements / Math.max(1, r.totalOk), 1),
          fmt(transactions / Math.max(1, r.totalOk), 1),
        ]),
      );
      console.log(`\nload generator CPU in the measured windows: ${runs.map(({ label, r }) => `${label} ${fmt((100 * r.clientCpuMs) / r.measuredMs, 0)}%`).join(', ')} of one core`);
    }

    console.log('\nchecks:');
    for (const c of checks) console.log(`  ${c}`);
    console.log(`  => ${ok ? 'OK' : 'FAILED'}`);
    console.log('\nmarkdown:');
    if (searchTable) console.log(`\n${searchTable}`);
    if (rentalTable) console.log(`\n${rentalTable}`);
    console.log(`\ntotal run time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await server.dispose();
  }
  return ok ? 0 : 1;
}

runMain(main);
