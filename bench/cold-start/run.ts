/**
 * bench/cold-start: first start of the built service on a fresh data directory (* "from the command to `/health` 200 on a fresh PGlite data directory in under 3 s").
 *
 * Each run spawns `node packages/server/dist/main.js` (what `npm start` runs, without npm's own
 * start-up) with `DATA_DIR` set to a directory that does not exist yet (so PGlite starts from
 * the build's seed and the dev identity provider's key and the secrets key are made) on a free
 * loopback port, and polls `GET /health` every 10 ms. Measured: ms from just before the spawn to
 * the first 200. The process is then stopped (SIGTERM) and its directory removed before the next
 * run. Also measured, as a floor: `node -e ""` (the runtime's own start-up) the same number of
 * times. Also reported: the CPU time (user + system, all threads) the service used until the
 * 200, from `/proc` — less sensitive to other work on the machine than the wall time. The 1-minute
 * load average before each run is printed: other work on the machine inflates the times.
 *
 *   npm run build && npm run bench:cold-start -- [--runs 10] [--entry packages/server/dist/main.js]
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '@parley/server/testing';
import { SERVICE_NODE_FLAGS } from '../../packages/server/src/ops/node-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');


/** One GET /health: its status, or 0 when the connection failed. */
function health(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(5_000, () => req.destroy());
  });
}

/** CPU time (user + system, ms) process `pid` has used so far; undefined where `/proc` is missing. */
function cpuMs(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks (100/s on Linux).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Ms from spawning `entry` on a fresh data directory to the first 200 from `/health`, and the CPU ms the service used until then. */
async function coldStart(entry: string): Promise<{ ms: number; cpu: number | undefined }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cold-'));
  const port = await freePort();
  let stderr = '';
  const t0 = performance.now();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, entry], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: path.join(dir, 'data'), PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  try {
    for (;;) {
      if (exited) throw new Error(`the server exited before it was healthy:\n${stderr}`);
      if ((await health(port)) === 200) return { ms: performance.now() - t0, cpu: cpuMs(child.pid!) };
      if (performance.now() - t0 > 120_000) throw new Error('not healthy after 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exit;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function summary(xs: number[]): { min: number; median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return { min: s[0]!, median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, max: s[s.length - 1]! };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, entry: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]);
    return;
  }
  const runs = Number(values.runs ?? 10);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got "${values.runs}"`);
  const entry = path.resolve(ROOT, values.entry ?? 'packages/server/dist/main.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} does not exist: run npm run build first`);

  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '']);
    node.push(performance.now() - t0);
  }
  const times: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const load = os.loadavg()[0]!.toFixed(1);
    const { ms, cpu } = await coldStart(entry);
    times.push(ms);
    if (cpu !== undefined) cpus.push(cpu);
    console.log(`run ${i + 1}/${runs}: ${ms.toFixed(0)} ms to /health 200, ${cpu ?? '-'} ms CPU (load ${load})`);
  }
  const s = summary(times);
  const n = summary(node);
  console.log(`\n${path.relative(ROOT, entry)}, ${runs} runs, ${os.cpus().length} CPUs, Node ${process.version}`);
  console.log(`cold start to /health 200: min ${s.min.toFixed(0)}  median ${s.median.toFixed(0)}  max ${s.max.toFixed(0)} ms`);
  if (cpus.length > 0) {
    const c = summary(cpus);
    console.log(`CPU used until then:       min ${c.min.toFixed(0)}  median ${c.median.toFixed(0)}  max ${c.max.toFixed(0)} ms (user + system, all threads)`);
  }
  console.log(`node -e "" (floor):        min ${n.min.toFixed(0)}  median ${n.median.toFixed(0)}  max ${n.max.toFixed(0)} ms`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
