/**
 * bench/key-directory: what key transparency (design §8.39) costs, next to baselines measured in
 * the same run (docs/performance.md "Key directory"):
 *
 * 1. setup      An owner device's `SecureMessenger` starts a session with an agent device it
 *               never talked to and sends it the first message, with key transparency off
 *               (`keyTransparency: false`, the baseline) and on (the default), A/B alternating,
 *               in X3DH/PQXDH (four key-directory lookups and verifications) and in MLS (one):
 *               median, p95, ratio of the medians (sessions.ts). Target: on <= 1.5x off.
 * 2. directory  The server's `KeyDirectory` on a fresh PostgreSQL database (directory.ts):
 *               - verify: `verifyKeyLookup` on real lookup answers of the full directory, per
 *                 call, and its parts. Target: median < 5 ms;
 *               - append: `publish` of batches of 100 bindings, per append, at 1k, 10k and the
 *                 final size (100k), and the in-memory part (prefix tree + log) per append.
 *                 Target: logarithmic growth, with a factor 2 for noise: at n at most
 *                 2 x log2(n) / log2(1000) the figure at 1k (3.3x at 100k; linear growth is 100x);
 *               - catch-up: a second instance rebuilding the directory from the table at the
 *                 final size;
 *               - proofs: a lookup answer's JSON bytes, prefix path and audit path hashes at each
 *                 size. Target: logarithmic (prefix path mean <= log2 n + 3; audit path <=
 *                 ceil(log2 n), RFC 9162 §2.1.3).
 * Exit status 1 when a target is not met.
 *
 *   npm run bench:key-directory -- [--peers 40] [--entries 100000] [--scenarios setup,directory]
 *                                  [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Environment equivalents: BENCH_PEERS, BENCH_ENTRIES, BENCH_SCENARIOS, BENCH_DATABASE_URL (or
 * DATABASE_URL). Runs only against 127.0.0.1; creates a fresh database and drops it at the end.
 */
import { machineLine } from '../push/setup.js';
import { assertLoopback, benchArgs, num, runMain } from '../relay/cli.js';
import { fmt, printTable, ratio } from '../relay/report.js';
import { measureDirectory, type DirectoryResult } from './directory.js';
import { measureSetup, type SetupResult } from './sessions.js';
import type { Quantiles } from './stats.js';

const TARGET_SETUP_RATIO = 1.5;
const TARGET_VERIFY_MS = 5;
const TARGET_APPEND_GROWTH = 2;
const SCENARIOS = ['setup', 'directory'] as const;

type Row = [figure: string, value: string, target: string, met: string];
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const q = (x: Quantiles, d = 2) => `${fmt(x.p50, d)} / ${fmt(x.p95, d)} ms`;

function setupRows(results: SetupResult[]): { rows: Row[]; ok: boolean } {
  const rows: Row[] = [];
  let ok = true;
  for (const r of results) {
    const good = r.on.p50 / r.off.p50 <= TARGET_SETUP_RATIO;
    ok &&= good;
    const name = r.protocol === 'x3dh' ? 'X3DH/PQXDH' : 'MLS';
    rows.push([`set-up + first message, ${name}, KT off (p50 / p95; ${r.off.count} peers)`, q(r.off, 1), 'baseline', '']);
    rows.push([`set-up + first message, ${name}, KT on (p50 / p95)`, q(r.on, 1), '', '']);
    rows.push([`  of which ${fmt(r.lookups, 1)} key-directory lookups' round trips (p50 / p95)`, q(r.lookupMs, 1), '', '']);
    rows.push([`  ratio on / off (medians; p95s ${ratio(r.on.p95, r.off.p95)}; session: ${r.seen})`, ratio(r.on.p50, r.off.p50), `<= ${TARGET_SETUP_RATIO}x`, met(good)]);
  }
  return { rows, ok };
}

function directoryRows(d: DirectoryResult, entries: number): { rows: Row[]; ok: boolean } {
  const rows: Row[] = [];
  let ok = true;
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
  const verifyOk = d.verify.p50 < TARGET_VERIFY_MS;
  ok &&= verifyOk;
  rows.push([`verifyKeyLookup at ${k(entries)} (p50 / p95)`, q(d.verify), `< ${TARGET_VERIFY_MS} ms`, met(verifyOk)]);
  rows.push([`  with a consistency proof (${k(entries - 1000)} -> ${k(d.finalSize)})`, q(d.verifyWithConsistency), '', '']);
  rows.push(['  a device verified before (VRF output cached by the client)', q(d.verifyKnownDevice), '', '']);
  for (const p of d.parts) rows.push([`  part: ${p.name}`, q(p.q, 3), '', '']);
  const first = d.sizes[0]!;
  for (const s of d.sizes) {
    // Logarithmic: at most TARGET_APPEND_GROWTH x (log2 n / log2 n0) the figure at the first size n0.
    const bound = (TARGET_APPEND_GROWTH * Math.log2(s.size)) / Math.log2(first.size);
    const growthOk = s === first || s.publishPerAppendMs <= bound * first.publishPerAppendMs;
    const memOk = s === first || s.memoryPerAppendMs <= bound * first.memoryPerAppendMs;
    ok &&= growthOk && memOk;
    const target = s === first ? 'reference' : `<= ${fmt(bound, 1)}x the ${k(first.size)} figure`;
    rows.push([`append at ${k(s.size)}: publish, batch of 100 (per append)`, `${fmt(s.publishPerAppendMs * 1000, 0)} µs`, target, s === first ? '' : met(growthOk)]);
    rows.push([`append at ${k(s.size)}: in memory (prefix tree + log, per append)`, `${fmt(s.memoryPerAppendMs * 1000, 1)} µs`, target, s === first ? '' : met(memOk)]);
  }
  rows.push([`catch-up of a second instance at ${k(d.finalSize)}`, `${fmt(d.catchUpMs, 0)} ms (${fmt((1000 * d.catchUpMs) / d.finalSize, 1)} µs/entry)`, '-', '']);
  rows.push([`  of which reading the table's pages`, `${fmt(d.catchUpReadMs, 0)} ms (${fmt((1000 * d.catchUpReadMs) / d.finalSize, 1)} µs/entry)`, '', '']);
  for (const s of d.sizes) {
    const log2 = Math.log2(s.size);
    const proofOk = s.prefixPath.mean <= log2 + 3 && s.auditPath.max <= Math.ceil(log2);
    ok &&= proofOk;
    rows.push([`lookup answer at ${k(s.size)}: JSON bytes (mean / max)`, `${fmt(s.answerBytes.mean, 0)} / ${s.answerBytes.max} B`, '', '']);
    rows.push([
      `  prefix path / audit path hashes (mean, max)`,
      `${fmt(s.prefixPath.mean, 1)}, ${s.prefixPath.max} / ${fmt(s.auditPath.mean, 1)}, ${s.auditPath.max}`,
      `<= ${fmt(log2 + 3, 1)} / <= ${Math.ceil(log2)}`,
      met(proofOk),
    ]);
  }
  return { rows, ok };
}

runMain(async () => {
  const arg = benchArgs(import.meta.url, ['peers', 'entries']);
  const peers = Math.floor(num('--peers', arg('peers', 'BENCH_PEERS'), 40));
  const entries = Math.floor(num('--entries', arg('entries', 'BENCH_ENTRIES'), 100_000));
  const scenarios = new Set((arg('scenarios', 'BENCH_SCENARIOS') ?? SCENARIOS.join(',')).split(',').map((s) => s.trim()));
  for (const s of scenarios) if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`unknown scenario "${s}" (${SCENARIOS.join(', ')})`);
  const adminUrl = arg('database-url', 'BENCH_DATABASE_URL') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(adminUrl);
  if (entries < 2000 || entries % 100 !== 0) throw new Error('--entries must be a multiple of 100, at least 2000');
  const sizes = [...new Set([1000, 10_000, entries].filter((s) => s <= entries))];
  console.log(machineLine());
  const rows: Row[] = [];
  let ok = true;
  if (scenarios.has('setup')) {
    console.log(`\nsession set-up: ${peers} peers (+1 warm-up), PGlite in memory`);
    const r = setupRows(await measureSetup(peers, console.log));
    rows.push(...r.rows);
    ok &&= r.ok;
  }
  if (scenarios.has('directory')) {
    console.log(`\nkey directory: ${entries} entries on PostgreSQL`);
    const d = await measureDirectory(adminUrl, entries, sizes, console.log);
    console.log(`  ${d.backend}`);
    const r = directoryRows(d, entries);
    rows.push(...r.rows);
    ok &&= r.ok;
  }
  console.log(`\n${machineLine()}\n`);
  printTable(['figure', 'value', 'target', 'met'], rows);
  return ok ? 0 : 1;
});
