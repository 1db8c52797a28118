/**
 * The local cluster (design §8.32): `CLUSTER_INSTANCES` (default 2) Parley
 * instances on `PORT+1 … PORT+N` and HAProxy on `PORT`, sharing one PostgreSQL database
 * (`DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/parley`, created when missing), one
 * Redis (`REDIS_URL`, default `redis://127.0.0.1:6379`), one `DATA_DIR` (the development identity
 * provider's key: a token minted for one instance is valid on all) and one `SECRETS_KEY`
 * (generated into `DATA_DIR/secrets-key` once when unset). The first instance starts alone (it
 * applies migrations and makes the shared keys), then the others, then HAProxy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureDatabase } from '../db/ensure-database.js';
import { haproxyConfig, type Backend } from './haproxy.js';

export interface ClusterOptions {
  instances: number;
  host: string;
  /** The load balancer's port; instance i listens on port + i. */
  port: number;
  databaseUrl: string;
  redisUrl: string;
  dataDir: string;
  /** How to run one instance (default: the built service, `node packages/server/dist/main.js`). */
  command: string[];
  /** Extra environment of every instance. */
  env?: NodeJS.ProcessEnv;
  /** HAProxy binary (default `haproxy`, Debian package `haproxy`). */
  haproxy?: string;
  /** Where the instances' and HAProxy's output goes (default: inherited). */
  output?: 'inherit' | 'ignore';
}

export interface RunningCluster {
  /** The load balancer's base URL. */
  url: string;
  instances: { name: string; url: string; process: ChildProcess }[];
  haproxy: ChildProcess;
  /** Stop HAProxy and every instance (SIGTERM, then SIGKILL after 15 s). */
  stop(): Promise<void>;
}

async function waitReady(url: string, child: ChildProcess, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} was not ready within ${ms} ms`);
}

function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.kill('SIGKILL'), 15_000);
    p.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    p.kill('SIGTERM');
  });
}

/** Start the cluster (see the file comment). @throws when an instance or HAProxy fails to start. */
export async function startCluster(o: ClusterOptions): Promise<RunningCluster> {
  await ensureDatabase(o.databaseUrl);
  fs.mkdirSync(o.dataDir, { recursive: true });
  const stdio = o.output ?? 'inherit';
  const url = `http://${o.host}:${o.port}`;
  const started: RunningCluster['instances'] = [];
  let haproxy: ChildProcess | undefined;
  const stop = async () => {
    if (haproxy) await stopProcess(haproxy);
    await Promise.all(started.map((i) => stopProcess(i.process)));
  };
  try {
    const spawnInstance = (i: number) => {
      const port = o.port + i;
      const child = spawn(o.command[0]!, o.command.slice(1), {
        stdio: ['ignore', stdio, stdio],
        env: {
          // Per-IP rate limits count the client's address that HAProxy forwards (docs/operations.md).
          TRUST_PROXY: o.host,
          ...process.env,
          ...o.env,
          HOST: o.host,
          PORT: String(port),
          PUBLIC_URL: url,
          DATABASE_URL: o.databaseUrl,
          REDIS_URL: o.redisUrl,
          DATA_DIR: o.dataDir,
          DASHBOARD_DIR: o.env?.DASHBOARD_DIR ?? process.env.DASHBOARD_DIR ?? '',
        },
      });
      const inst = { name: `i${i}`, url: `http://${o.host}:${port}`, process: child };
      started.push(inst);
      return inst;
    };
    const first = spawnInstance(1);
    await waitReady(first.url, first.process);
    const rest = Array.from({ length: o.instances - 1 }, (_, k) => spawnInstance(k + 2));
    await Promise.all(rest.map((i) => waitReady(i.url, i.process)));
    const backends: Backend[] = started.map((i) => ({ name: i.name, host: o.host, port: Number(new URL(i.url).port) }));
    const cfg = path.join(o.dataDir, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig({ host: o.host, port: o.port, backends }));
    haproxy = spawn(o.haproxy ?? 'haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', stdio, stdio] });
    const lb = haproxy;
    await new Promise<void>((resolve, reject) => {
      lb.once('error', (err) => reject(new Error(`cannot start HAProxy (${o.haproxy ?? 'haproxy'}): ${err.message}; install it with "apt-get install -y haproxy"`)));
      lb.once('spawn', () => resolve());
    });
    await waitReady(url, lb);
    return { url, instances: started, haproxy: lb, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
