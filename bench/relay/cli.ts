/**
 * The command line of the benchmarks that drive the real app on PostgreSQL (bench/relay,
 * bench/rooms): the options they share (argv, else environment), `--help` (the run file's header
 * comment), the loopback guard and the process exit status.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Throws unless `url` names a loopback host: the benchmarks create and drop databases. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) throw new Error(`refusing to run against ${host}: 127.0.0.1 only`);
}

/** Parse a positive number option (argv or environment), `fallback` when absent. */
export function num(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

/** Reads the string option `name` from the command line, else environment variable `envName`. */
export type ArgReader = (name: string, envName: string) => string | undefined;

const COMMON_ARGS = ['duration', 'warmup', 'messages', 'window', 'rate', 'database-url', 'scenarios'] as const;

/**
 * Parse the command line: the common string options (`--duration --warmup --messages --window
 * --rate --database-url --scenarios`), the benchmark's own string options `own`, and `--help`,
 * which prints the header comment of the file at `moduleUrl` (the run file's `import.meta.url`)
 * and exits 0. Unknown options and positionals throw.
 */
export function benchArgs(moduleUrl: string, own: readonly string[]): ArgReader {
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  for (const n of [...COMMON_ARGS, ...own]) options[n] = { type: 'string' };
  const { values } = parseArgs({ options, allowPositionals: false });
  if (values.help) {
    console.log(fs.readFileSync(fileURLToPath(moduleUrl), 'utf8').split('*/')[0]);
    process.exit(0);
  }
  return (name, envName) => {
    const v = values[name];
    return typeof v === 'string' ? v : process.env[envName];
  };
}

/** The options every such benchmark takes, validated. */
export interface CommonOptions {
  /** Seconds of measurement per (saturation) phase, after `warmupS` seconds of warm-up. */
  durationS: number;
  warmupS: number;
  /** End a measured window early after this many messages. */
  messages: number | undefined;
  /** Most unacknowledged messages per sender. */
  window: number;
  /** Offered load of the paced (open-loop) phase, messages/s over all senders; 0 skips that phase. */
  rate: number;
  /** `--rate N%`: the paced phase offers N% of the saturation msgs/s measured just before (then `rate` is 0). */
  rateOfSaturation?: number;
  /** PostgreSQL URL (an admin user; loopback only) under which the bench database is created. */
  adminUrl: string;
  scenarios: Set<string>;
  /** Bytes of random ciphertext per message (per envelope in a room message). */
  ciphertextBytes: number;
}

/**
 * Read and check the common options (environment: BENCH_DURATION_S, BENCH_WARMUP_S,
 * BENCH_MESSAGES, BENCH_WINDOW, BENCH_RATE, BENCH_DATABASE_URL or DATABASE_URL, BENCH_SCENARIOS)
 * with the benchmark's `defaults`; `defaults.scenarios` lists the known scenarios (all run by
 * default). Throws on a bad value, an unknown scenario or a database that is not on the loopback.
 */
export function commonOptions(arg: ArgReader, defaults: { durationS: number; warmupS: number; window: number; rate: number | `${number}%`; scenarios: readonly string[] }): CommonOptions {
  const known = defaults.scenarios;
  const scenarios = new Set((arg('scenarios', 'BENCH_SCENARIOS') ?? known.join(',')).split(',').map((s) => s.trim()));
  for (const s of scenarios) if (!known.includes(s)) throw new Error(`unknown scenario "${s}" (${known.join(', ')})`);
  const adminUrl = arg('database-url', 'BENCH_DATABASE_URL') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(adminUrl);
  const messages = arg('messages', 'BENCH_MESSAGES');
  const rate = arg('rate', 'BENCH_RATE') ?? String(defaults.rate);
  return {
    durationS: num('duration', arg('duration', 'BENCH_DURATION_S'), defaults.durationS),
    warmupS: num('warmup', arg('warmup', 'BENCH_WARMUP_S'), defaults.warmupS),
    messages: messages ? Math.floor(num('messages', messages, 1)) : undefined,
    window: Math.floor(num('window', arg('window', 'BENCH_WINDOW'), defaults.window)),
    ...(rate?.endsWith('%')
      ? { rate: 0, rateOfSaturation: num('rate', rate.slice(0, -1), 50) / 100 }
      : { rate: rate === '0' ? 0 : num('rate', rate, 0) }),
    adminUrl,
    scenarios,
    ciphertextBytes: 200,
  };
}

/** Run the benchmark's `main` and exit with its status (1 after printing an error it threw). */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
