/**
 * bench/dashboard: the owners' web app's time to interactive and shipped JavaScript (
 * "Time to interactive on the embedded default (server already running) and the size
 * of the shipped JavaScript (gzip)").
 *
 * Set-up: the built service (`node packages/server/dist/main.js`, what `npm start` runs) on the
 * embedded default (PGlite in a fresh DATA_DIR, in-process bus, dev identity provider) with the
 * built app, started once and warmed up before measuring; Debian's Chromium (playwright-core,
 * headless). The app is copied to a temporary folder next to a baseline page, `baseline.html`: one
 * external script that enables a button, served by the same server with the same headers.
 *
 * Measured, `--runs` (10) times each, in ms from navigation start (`performance.now()` in the
 * page when the control is usable):
 *   baseline        the baseline page's button enabled (a cold browser context each time);
 *   sign-in cold    `/sign-in`: the e-mail field of the development sign-in enabled, cold cache;
 *   sign-in warm    the same after a reload (HTTP cache warm: hashed assets are immutable);
 *   first sign-in   from pressing "Sign in" to the Agents screen's heading for a new owner
 *                   (tenant created, owner-device keys made and sealed in IndexedDB, device
 *                   registered, MLS KeyPackages published, socket open);
 *   returning       the same for an owner whose keys are already in this browser.
 * And the JavaScript in `dist/assets`: raw and gzip bytes, in total and for the first page
 * (the entry and the chunks `index.html` preloads).
 *
 *   npm run bench:dashboard -- [--runs 10]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { launch } from '../../packages/dashboard/e2e/browser.js';
import { freePort } from '@parley/server/testing';
import { benchArgs, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { SERVICE_NODE_FLAGS } from '../../packages/server/src/ops/node-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'packages/dashboard/dist');


async function waitHealthy(url: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not become healthy');
}

/** Sizes of the shipped JavaScript: all chunks, and the ones the first page loads. */
export function jsSizes(dist: string): { all: { raw: number; gzip: number; files: number }; first: { raw: number; gzip: number; files: number } } {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const first = new Set([...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]!));
  const all = { raw: 0, gzip: 0, files: 0 };
  const initial = { raw: 0, gzip: 0, files: 0 };
  for (const f of fs.readdirSync(path.join(dist, 'assets')).filter((n) => n.endsWith('.js'))) {
    const bytes = fs.readFileSync(path.join(dist, 'assets', f));
    const gz = gzipSync(bytes, { level: 9 }).length;
    for (const t of first.has(f) ? [all, initial] : [all]) {
      t.raw += bytes.length;
      t.gzip += gz;
      t.files++;
    }
  }
  return { all, first: initial };
}

async function readyAt(page: Page, selector: string): Promise<number> {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel) as HTMLInputElement | HTMLButtonElement | null;
    return !!el && !el.disabled;
  }, selector);
  return page.evaluate(() => performance.now());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))] ?? NaN;

async function main(): Promise<number> {
  const arg = benchArgs(import.meta.url, ['runs']);
  const runs = num('runs', arg('runs', 'BENCH_RUNS'), 10);
  if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('build the app first: npm run build');
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-site-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-data-'));
  fs.cpSync(DIST, site, { recursive: true });
  fs.writeFileSync(path.join(site, 'baseline.html'), '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baseline</title><script type="module" src="/baseline.js"></script></head><body><button id="go" disabled>Go</button></body></html>');
  fs.writeFileSync(path.join(site, 'baseline.js'), "document.getElementById('go').disabled = false;\n");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(ROOT, 'packages/server/dist/main.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DASHBOARD_DIR: site, LOG_LEVEL: 'warn', RATE_LIMITS: 'off' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let browser: Browser | undefined;
  try {
    await waitHealthy(base);
    browser = await launch();
    const b = browser;
    const cold = async (url: string, sel: string) => {
      const ctx = await b.newContext();
      const page = await ctx.newPage();
      await page.goto(url);
      const t = await readyAt(page, sel);
      await ctx.close();
      return t;
    };
    // Warm-up: the server's first requests, Chromium's first start.
    await cold(`${base}/baseline.html`, '#go');
    await cold(`${base}/sign-in`, '#email');
    const rows: Record<string, number[]> = { baseline: [], 'sign-in cold': [], 'sign-in warm': [], 'first sign-in': [], returning: [] };
    for (let i = 0; i < runs; i++) {
      rows.baseline!.push(await cold(`${base}/baseline.html`, '#go'));
      rows['sign-in cold']!.push(await cold(`${base}/sign-in`, '#email'));
      const ctx = await b.newContext();
      const page = await ctx.newPage();
      await page.goto(`${base}/sign-in`);
      await readyAt(page, '#email');
      await page.reload();
      rows['sign-in warm']!.push(await readyAt(page, '#email'));
      const email = `bench-${i}-${Date.now()}@example.com`;
      for (const key of ['first sign-in', 'returning'] as const) {
        await page.fill('#email', email);
        const t0 = Date.now();
        await page.click('button[type="submit"]');
        await page.getByRole('heading', { level: 1, name: 'Agents & devices' }).waitFor({ timeout: 60_000 });
        await page.getByText('open', { exact: true }).waitFor({ timeout: 60_000 });
        rows[key]!.push(Date.now() - t0);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await readyAt(page, '#email');
      }
      await ctx.close();
    }
    const baseline = median(rows.baseline!);
    console.log(`bench/dashboard: ${runs} runs each, Chromium ${b.version()}, ${os.cpus().length} CPUs, Node ${process.version}`);
    printTable(
        ['measure', 'median ms', 'p90 ms', 'x baseline'],
        Object.entries(rows).map(([k, v]) => [k, fmt(median(v)), fmt(p90(v)), k === 'baseline' || k === 'first sign-in' || k === 'returning' ? '' : ratio(median(v), baseline)]),
    );
    const s = jsSizes(DIST);
    const kb = (n: number) => fmt(n / 1024, 1);
    printTable(
        ['JavaScript', 'files', 'raw KiB', 'gzip KiB'],
        [
          ['first page (entry + preloaded chunks)', String(s.first.files), kb(s.first.raw), kb(s.first.gzip)],
          ['all chunks (every screen)', String(s.all.files), kb(s.all.raw), kb(s.all.gzip)],
        ],
    );
    return 0;
  } finally {
    await browser?.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    fs.rmSync(site, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
