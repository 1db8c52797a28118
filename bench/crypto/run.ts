/**
 * bench/crypto: end-to-end encryption cost per message in the SDK, next to the raw AEAD measured
 * in the same run (design §9):
 *
 *   aead      raw XChaCha20-Poly1305 seal (random 24-byte nonce) + open of the payload: the baseline;
 *   dr-alt    X3DH + Double Ratchet (RatchetSession: signed header, wire encoding), encrypt +
 *             decrypt, direction alternating every message (a DH ratchet step per message);
 *   dr-burst  the same, one-way bursts of 100 messages (symmetric ratchet only, mostly);
 *   mls2/3    MLS application messages through MlsClient: encrypt by one member, processMessage
 *             by every other member (1 or 2 decryptions per message); the sender rotates;
 *   ts-mls2   the mls2 traffic on ts-mls's own API (encode/decode included), to show what the
 *             MlsClient wrapper adds.
 *
 * One message = sealed/encrypted once and opened/decrypted by every receiver, then compared with
 * the payload. Everything runs in this process, one message at a time (no concurrency, no I/O).
 * Each scenario is measured in `--rounds` interleaved rounds of `--duration` ms after one warm-up
 * round; the table shows the median rate and its ratio to the baseline of the same payload size.
 *
 * A short table of single primitives (Ed25519, X25519, WebCrypto Ed25519) follows, to explain the
 * ratios; `--no-primitives` skips it.
 *
 * The SDK's crypto provider (`node` = node:crypto, `noble` = the pure-JavaScript
 * fallback) is the one `cryptoProvider()` picks unless `--providers node,noble` asks for several:
 * then every scenario and primitive is measured once per provider, each against the AEAD baseline
 * of the same provider (the MLS scenarios use ts-mls's own crypto either way).
 *
 *   npm run bench:crypto -- [--sizes 256,4096] [--duration 700] [--rounds 3] [--scenarios aead,dr-alt,...]
 *                           [--providers node,noble] [--json out.json] [--no-primitives]
 *
 * Environment equivalents: BENCH_SIZES, BENCH_DURATION_MS, BENCH_ROUNDS, BENCH_SCENARIOS,
 * BENCH_PROVIDERS. The run is bounded: (rounds + ½ warm-up) × duration × scenarios × sizes ×
 * providers must stay under 50 s (about 35 s in all by default, set-up included), and it stops
 * measuring at 58 s.
 */
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cryptoProvider, randomBytes, useCryptoProvider } from '../../packages/sdk/src/crypto/primitives.js';
import { measure, median, rate, table, type Sample, type Step } from './measure.js';
import { PRIMITIVES, SCENARIOS } from './scenarios.js';

const { values: argv } = parseArgs({
  options: {
    sizes: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    scenarios: { type: 'string' },
    providers: { type: 'string' },
    json: { type: 'string' },
    'no-primitives': { type: 'boolean' },
    help: { type: 'boolean' },
  },
  allowPositionals: false,
});
if (argv.help) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]);
  process.exit(0);
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

const env = process.env;
const sizes = (argv.sizes ?? env.BENCH_SIZES ?? '256,4096').split(',').map((s) => positiveInt('size', s.trim(), 0));
const durationMs = positiveInt('duration', argv.duration ?? env.BENCH_DURATION_MS, 700);
const rounds = positiveInt('rounds', argv.rounds ?? env.BENCH_ROUNDS, 3);
const wanted = (argv.scenarios ?? env.BENCH_SCENARIOS ?? SCENARIOS.map((s) => s.id).join(',')).split(',').map((s) => s.trim());
for (const id of wanted) if (!SCENARIOS.some((s) => s.id === id)) throw new Error(`unknown scenario "${id}" (${SCENARIOS.map((s) => s.id).join(', ')})`);
if (!wanted.includes('aead')) wanted.unshift('aead'); // the baseline is always measured
const scenarios = SCENARIOS.filter((s) => wanted.includes(s.id));
const providers = (argv.providers ?? env.BENCH_PROVIDERS ?? cryptoProvider().name).split(',').map((s) => s.trim());
for (const p of providers) if (p !== 'node' && p !== 'noble') throw new Error(`unknown provider "${p}" (node, noble)`);
for (const size of sizes) if (size > 256 * 1024) throw new Error('payload sizes are capped at 256 KiB (the server limit)');
const primitivesMs = argv['no-primitives'] ? 0 : 400;
const planned = providers.length * ((rounds + 0.5) * durationMs * scenarios.length * sizes.length + PRIMITIVES.length * primitivesMs * 1.25);
if (planned > 50_000) throw new Error(`planned ${Math.round(planned / 1000)} s of measurement; keep (rounds + 0.5) × duration × scenarios × sizes × providers under 50 s`);
const HARD_STOP_MS = 58_000;

const started = performance.now();
const cpu = os.cpus();
console.log(`bench:crypto  node ${process.version}  ${cpu[0]?.model ?? 'cpu'} × ${cpu.length}  load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`sizes ${sizes.join(', ')} B; ${rounds} rounds × ${durationMs} ms per scenario after a warm-up round; median shown`);
for (const p of providers) {
  const info = useCryptoProvider(p as 'node' | 'noble');
  console.log(`crypto provider ${info.name}: ${info.implementation}`);
}
console.log('');

interface Row {
  provider: string;
  size: number;
  id: string;
  label: string;
  receivers: number;
  rates: number[];
  median: number;
}

const rows: Row[] = [];
let stoppedEarly = false;
for (const size of sizes) {
  const payload = randomBytes(size);
  const steps: { provider: string; id: string; step: Step; samples: Sample[] }[] = [];
  for (const provider of providers) {
    useCryptoProvider(provider as 'node' | 'noble');
    for (const s of scenarios) steps.push({ provider, id: s.id, step: await s.setup(payload), samples: [] });
  }
  // Round 0 warms up (JIT, key caches); rounds interleave scenarios and providers so drift hits them alike.
  for (let round = 0; round <= rounds && !stoppedEarly; round++) {
    for (const x of steps) {
      if (performance.now() - started > HARD_STOP_MS) {
        stoppedEarly = true;
        break;
      }
      useCryptoProvider(x.provider as 'node' | 'noble');
      const sample = await measure(x.step, round === 0 ? durationMs / 2 : durationMs);
      if (round > 0) x.samples.push(sample);
    }
  }
  for (const x of steps) {
    const s = scenarios.find((sc) => sc.id === x.id)!;
    if (x.samples.length === 0) continue;
    const rates = x.samples.map(rate);
    rows.push({ provider: x.provider, size, id: s.id, label: s.label, receivers: s.receivers, rates, median: median(rates) });
  }
}

const fmtRate = (r: number) => (r >= 100 ? Math.round(r).toLocaleString('en-US') : r.toFixed(1));
const out: string[][] = [];
for (const r of rows) {
  const base = rows.find((b) => b.provider === r.provider && b.size === r.size && b.id === 'aead')!;
  const ratio = r.median / base.median;
  const spread = r.rates.length > 1 ? `${fmtRate(Math.min(...r.rates))}–${fmtRate(Math.max(...r.rates))}` : '';
  out.push([
    r.provider,
    `${r.size} B`,
    r.id,
    fmtRate(r.median),
    spread,
    (1e6 / r.median).toFixed(1),
    String(r.receivers),
    ratio >= 0.1 ? `${ratio.toFixed(2)}x` : `${ratio.toFixed(4)}x`,
    r.id === 'aead' ? '1' : `${Math.round(1 / ratio).toLocaleString('en-US')}`,
    r.label,
  ]);
}
console.log(
  table(
    ['provider', 'payload', 'scenario', 'msgs/s', 'range', 'µs/msg', 'decrypts', 'vs AEAD', 'AEAD-equiv', 'what'],
    out,
    [false, false, false, true, true, true, true, true, true, false],
  ),
);
console.log('\nvs AEAD = msgs/s ÷ raw AEAD msgs/s (same provider, same size); AEAD-equiv = how many raw seal+open pairs fit in one message.');
const prim: { provider: string; id: string; label: string; us: number }[] = [];
if (primitivesMs > 0 && !stoppedEarly) {
  for (const provider of providers) {
    useCryptoProvider(provider as 'node' | 'noble');
    for (const p of PRIMITIVES) {
      if (p.independent && provider !== providers[0]) continue;
      const step = p.setup();
      await measure(step, primitivesMs / 4);
      const r = rate(await measure(step, primitivesMs));
      prim.push({ provider, id: p.id, label: p.label, us: 1e6 / r });
    }
  }
  console.log('\nprimitives (same run):');
  console.log(table(['provider', 'primitive', 'µs/op', 'what'], prim.map((p) => [p.provider, p.id, p.us.toFixed(1), p.label]), [false, false, true, false]));
}
if (stoppedEarly) console.log(`stopped early at ${Math.round(HARD_STOP_MS / 1000)} s: some rounds are missing`);
console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);

if (argv.json) {
  fs.writeFileSync(
    argv.json,
    JSON.stringify({ node: process.version, cpu: cpu[0]?.model, cores: cpu.length, durationMs, rounds, providers, rows, primitives: prim }, null, 2) + '\n',
  );
}
