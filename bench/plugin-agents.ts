/**
 * Shared by the benchmarks that drive agents through their local plugin in the bench process
 * (bench/mcp, bench/a2a): latency summaries of sequential samples, a timer, and API-key agents
 * each running the SDK's agent runtime and its local plugin, bound to a certified hub identity.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bytesToBase64, ed25519Keygen } from '../packages/sdk/src/crypto/primitives.js';
import { KeyFileSource, startApiKeyAgent, startPlugin, type AgentRuntime, type RunningPlugin, type StartPluginOptions } from '../packages/sdk/src/node/index.js';
import { call, type BenchServer } from './relay/setup.js';

/** p50 / p99 / mean of a set of samples (ms); a quantile is the sample at `floor(q * n)` of the sorted set. */
export interface LatencyStats {
  p50: number;
  p99: number;
  mean: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/** {@link LatencyStats} of `samples` (NaN for an empty set). */
export function summary(samples: number[]): LatencyStats {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

/** Wall-clock time of `fn` in ms (`process.hrtime`). */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** An API-key agent of {@link pluginAgents}: its key, runtime, plugin, hub address and state directory. */
export interface PluginAgent {
  key: string;
  rt: AgentRuntime;
  plugin: RunningPlugin;
  address: string;
  dir: string;
}

/** What {@link pluginAgents} answers: `add` one agent; `close` stops them all and removes their state. */
export interface PluginAgents {
  /**
   * A new API key of the tenant, its agent runtime (`startApiKeyAgent`, state sealed with a key
   * file) with `rt.ready` awaited, its plugin on 127.0.0.1:0 (`plugin` options added to
   * the defaults), and a hub identity `bench-{name}-{time}` registered to its device and set
   * `certified` (trust score 0.9) in the database.
   */
  add(name: string, plugin?: Pick<StartPluginOptions, 'a2aUpstream' | 'a2a'>): Promise<PluginAgent>;
  /** Close the plugins and runtimes (newest first) and remove the state directories. */
  close(): Promise<void>;
}

/**
 * Agents of the tenant whose owner sends `ownerAuth`, on `server`; `bench` names their state
 * directories; `fsync: false` turns off the fsync of their state writes (default on, as agents run).
 */
export function pluginAgents(server: BenchServer, ownerAuth: Record<string, string>, bench: string, options: { fsync?: boolean } = {}): PluginAgents {
  const { app } = server;
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const dirs: string[] = [];
  const stops: (() => Promise<unknown>)[] = [];
  return {
    async add(name, pluginOptions = {}) {
      const { key } = await call(app, 'POST', '/api-keys', 201, ownerAuth, { name });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-bench-${bench}-${name}-`));
      dirs.push(dir, `${dir}.key`);
      const rt = await startApiKeyAgent({ apiKey: key, server: base, stateDir: dir, protection: new KeyFileSource(`${dir}.key`), fsync: options.fsync ?? true, log: () => undefined });
      stops.push(() => rt.stop());
      await rt.ready;
      const plugin = await startPlugin({ backend: rt, stateDir: dir, port: 0, fsync: options.fsync ?? true, ...pluginOptions });
      stops.push(() => plugin.close());
      const address = `bench-${name}-${Date.now().toString(36)}`;
      await call(app, 'POST', '/hub/register', 201, ownerAuth, { hub_address: address, display_name: name, device_id: rt.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
      await server.sql.query(`update hub_identities set trust_tier = 'certified', trust_score = 0.9 where hub_address = $1`, [address]);
      return { key, rt, plugin, address, dir };
    },
    async close() {
      for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}
