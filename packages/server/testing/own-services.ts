/**
 * A test's OWN PostgreSQL and Redis servers, which it may restart or stop (pg-restart.test.ts,
 * cluster-faults.test.ts). PostgreSQL: initdb + pg_ctl in a temp directory on a free port of
 * 127.0.0.1 (as user `postgres`, else `nobody`, through runuser when the tests run as root, since
 * initdb refuses root). Redis: `redis-server` on a free port with no persistence. Both are found
 * on the machine (`pg_config --bindir` or /usr/lib/postgresql/<version>/bin; `redis-server` on
 * PATH); {@link findPgBin} / {@link findRedisServer} answer undefined when missing so suites can
 * skip with that reason.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding initdb and pg_ctl: `pg_config --bindir`, else the newest /usr/lib/postgresql/<version>/bin. */
export function findPgBin(): string | undefined {
  const has = (dir: string) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'));
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (has(dir)) return dir;
  } catch {
    /* no pg_config on PATH */
  }
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((v) => path.join(root, v, 'bin')).find(has);
}

/** The `redis-server` binary on PATH, or undefined. */
export function findRedisServer(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether HAProxy is installed (`apt-get install -y haproxy`; the cluster tests need it). */
export const hasHaproxy = (() => {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** How a test runs one service instance from the sources (startCluster's `command`). */
export const INSTANCE_FROM_SOURCE = [process.execPath, '--conditions=parley-source', '--import', 'tsx', fileURLToPath(new URL('../src/main.ts', import.meta.url))];

/** initdb refuses root: run the server as `postgres` (or `nobody`) through runuser then. */
export function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { name, uid, gid };
    } catch {
      /* no such user */
    }
  }
  throw new Error('running as root and neither user postgres nor nobody exists to run PostgreSQL');
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether `port` of 127.0.0.1 can be bound now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive free ports of 127.0.0.1 (a cluster's load balancer and its instances), the
 * first one returned; picked below the ephemeral range so outgoing connections do not take them.
 */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => canBind(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** A running PostgreSQL of the test's own (trust auth, user `postgres`). */
export interface OwnPostgres {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (default database `postgres`). */
  url(database?: string): string;
  /** `pg_ctl restart -m fast`; resolves once it accepts connections again (the event loop keeps running meanwhile). */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast` (resolves once it is down). */
  stop(): Promise<void>;
  /** `pg_ctl start` after {@link stop} (resolves once it accepts connections). */
  start(): Promise<void>;
  /** Stop it (`-m immediate`) and delete its directory. */
  destroy(): void;
}

/** initdb a new cluster in a temp directory and start it on a free port. */
export async function startOwnPostgres(bin: string): Promise<OwnPostgres> {
  const user = serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pg-'));
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  const run = (tool: string, args: string[]) => {
    const cmd = path.join(bin, tool);
    const [file, argv] = user ? ['runuser', ['-u', user.name, '--', cmd, ...args]] : [cmd, args];
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  };
  const ctlArgs = (...args: string[]) => ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, ...args];
  const ctl = (...args: string[]) => run('pg_ctl', ctlArgs(...args));
  const ctlAsync = (...args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const cmd = path.join(bin, 'pg_ctl');
      const [file, argv] = user ? ['runuser', ['-u', user.name, '--', cmd, ...ctlArgs(...args)]] : [cmd, ctlArgs(...args)];
      execFile(file, argv, { timeout: 60_000 }, (err) => (err ? reject(err) : resolve()));
    });
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  ctl('start');
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    restart: () => ctlAsync('restart', '-m', 'fast'),
    stop: () => ctlAsync('stop', '-m', 'fast'),
    start: () => ctlAsync('start'),
    destroy: () => {
      try {
        ctl('stop', '-m', 'immediate');
      } catch {
        /* already stopped */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A `redis-server` of the test's own, which it may stop and start again on the same port. */
export interface OwnRedis {
  port: number;
  url: string;
  running(): boolean;
  /** Start it (again) and wait until it answers. */
  start(): Promise<void>;
  /** Stop it (SIGTERM; SIGKILL after 5 s) and wait for the exit. */
  stop(): Promise<void>;
  /** Freeze it (SIGSTOP): connections stay open and nothing answers — an unreachable Redis. */
  pause(): void;
  /** Thaw it (SIGCONT). */
  resume(): void;
}

/** Start `redis-server` on a free port of 127.0.0.1 without persistence. */
export async function startOwnRedis(binary: string): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.setTimeout(1_000);
      s.once('connect', () => s.write('PING\r\n'));
      s.once('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
      s.once('error', () => resolve(false));
      s.once('timeout', () => (s.destroy(), resolve(false)));
    });
  const own: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    running: alive,
    async start() {
      if (alive()) return;
      const p = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
      child = p;
      const end = Date.now() + 15_000;
      while (!(await answers())) {
        if (p.exitCode !== null) throw new Error(`redis-server exited with ${p.exitCode} (port ${port})`);
        if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port} within 15 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      const p = child;
      if (!p || !alive()) return;
      await new Promise<void>((resolve) => {
        const kill = setTimeout(() => p.kill('SIGKILL'), 5_000);
        p.once('exit', () => (clearTimeout(kill), resolve()));
        p.kill('SIGTERM');
      });
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
  await own.start();
  return own;
}
