/**
 * Start-up errors and stopping, on the service as a process (service-process.ts): a start that
 * cannot succeed prints one line naming the setting to fix and exits non-zero, before it touches
 * the data directory; a stop request during start-up stops it cleanly; and the process `npm start`
 * launched takes the service with it when it ends (SIGTERM forwarded by npm, SIGHUP not: then the
 * service notices that its parent is gone). Also the data-directory lock itself, in process.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/ops/data-dir-lock.js';
import { findPgBin, freePort, startOwnPostgres, type OwnPostgres } from '../../testing/own-services.js';
import { SERVICE_FROM_SOURCE, alive, killGroup, npmStartPackage, serviceEnv, spawnCollecting, waitReady, type Spawned } from '../../testing/service-process.js';
import { until } from '../../testing/until.js';

/** Background jobs made rare, so that a running service leaves its files alone while a test compares them. */
const QUIET_JOBS = { DECISION_DEADLINE_INTERVAL_MS: '600000', JOB_POLL_INTERVAL_MS: '600000', WEBHOOK_POLL_MS: '600000', MARKETPLACE_RENTAL_POLL_MS: '600000' };

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-startup-'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Run the service from source with `env` until it exits; answers its exit code and stderr's lines. */
async function startFails(env: Record<string, string>): Promise<{ code: number | null; lines: string[]; ms: number }> {
  const started = Date.now();
  const proc = spawnCollecting(SERVICE_FROM_SOURCE, { env: serviceEnv(env) });
  const code = await proc.exited;
  return { code, lines: proc.stderr().trim().split('\n'), ms: Date.now() - started };
}

/** Every file under `dir` with its size and modification time (ms), sorted by path. */
function snapshot(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      const st = fs.statSync(file);
      return `${path.relative(dir, file)} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** The pid written in `dataDir`'s lock file (the service's own process). */
const lockPid = (dataDir: string) => Number(fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').trim());

/** A process id that existed a moment ago and is gone now. */
function deadPid(): number {
  const done = spawnSync(process.execPath, ['-e', '']);
  return done.pid!;
}

describe('start-up errors: one line with the fix', () => {
  it('port in use: names the port and PORT, exits non-zero, creates no DATA_DIR', { timeout: 60_000 }, async () => {
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const dataDir = path.join(root, 'port-in-use');
      const { code, lines } = await startFails({ PORT: String(port), DATA_DIR: dataDir });
      expect(code).not.toBe(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^error: port ${port} on 127\\.0\\.0\\.1 is already in use: .*PORT`));
      expect(fs.existsSync(dataDir)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('unreachable DATABASE_URL: names DATABASE_URL with its password masked', { timeout: 60_000 }, async () => {
    const closed = await freePort();
    const { code, lines } = await startFails({ PORT: String(await freePort()), DATA_DIR: path.join(root, 'unreachable'), DATABASE_URL: `postgres://parley:s3cret-pw@127.0.0.1:${closed}/parley` });
    expect(code).not.toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`cannot reach PostgreSQL at DATABASE_URL=postgres://parley:***@127.0.0.1:${closed}/parley`);
    expect(lines[0]).not.toContain('s3cret-pw');
  });

  describe.skipIf(!findPgBin())('missing database (a PostgreSQL of the test)', () => {
    let own: OwnPostgres;
    beforeAll(async () => {
      own = await startOwnPostgres(findPgBin()!);
    }, 60_000);
    afterAll(() => own?.destroy());

    it('says how to create it; `npm run cli -- create-db` creates it', { timeout: 60_000 }, async () => {
      const url = own.url('parley_missing').replace('postgres@', 'postgres:pw-secret@');
      const { code, lines } = await startFails({ PORT: String(await freePort()), DATA_DIR: path.join(root, 'missing-db'), DATABASE_URL: url });
      expect(code).not.toBe(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('database "parley_missing" does not exist');
      expect(lines[0]).toContain('DATABASE_URL=postgres://postgres:***@127.0.0.1');
      expect(lines[0]).toContain('`npm run cli -- create-db`');
      expect(lines[0]).not.toContain('pw-secret');

      const created = execFileSync(process.execPath, ['--conditions=parley-source', '--import', 'tsx', 'packages/server/src/cli.ts', 'create-db'], { env: serviceEnv({ DATABASE_URL: url }), encoding: 'utf8' });
      expect(created).toContain('database "parley_missing" created');
      const client = new pg.Client({ connectionString: own.url('parley_missing') });
      await client.connect();
      expect((await client.query('select current_database() as db')).rows[0].db).toBe('parley_missing');
      await client.end();
    });
  });

  it('a second start on the same DATA_DIR stops at once and leaves its files as they were', { timeout: 90_000 }, async () => {
    const dataDir = path.join(root, 'shared');
    const port = await freePort();
    const first = spawnCollecting(SERVICE_FROM_SOURCE, { env: serviceEnv({ PORT: String(port), DATA_DIR: dataDir, ...QUIET_JOBS }) });
    try {
      await waitReady(`http://127.0.0.1:${port}`, first);
      expect(lockPid(dataDir)).toBe(first.child.pid);
      const before = snapshot(dataDir);
      expect(before.some((f) => f.startsWith(`pglite${path.sep}`))).toBe(true);

      const other = await startFails({ PORT: String(await freePort()), DATA_DIR: dataDir, ...QUIET_JOBS });
      expect(other.code).not.toBe(0);
      expect(other.lines).toEqual([`error: DATA_DIR ${dataDir} is in use by another Parley process (pid ${first.child.pid}): stop it first, or give this one its own DATA_DIR (and PORT)`]);
      // The same port too: the port is named, and whose it is.
      const samePort = await startFails({ PORT: String(port), DATA_DIR: dataDir, ...QUIET_JOBS });
      expect(samePort.code).not.toBe(0);
      expect(samePort.lines).toHaveLength(1);
      expect(samePort.lines[0]).toContain(`port ${port} on 127.0.0.1 is already in use: Parley (pid ${first.child.pid}, same DATA_DIR)`);
      expect(snapshot(dataDir)).toEqual(before);
      expect(await listening(port)).toBe(true);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
  });
});

describe('stopping what `npm start` started', () => {
  /** `npm start` (the repository's start script, on the sources) in its own process group. */
  function npmStart(env: Record<string, string>): Spawned {
    return spawnCollecting(['npm', 'start'], { cwd: npmStartPackage(), env: serviceEnv(env), detached: true });
  }

  it.each(['SIGTERM', 'SIGHUP'] as const)('%s to the npm process stops the service: no listener, no process, no lock left', { timeout: 90_000 }, async (signal) => {
    const dataDir = path.join(root, `npm-${signal}`);
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, LOCK_FILE), `${deadPid()}\n`); // a stale lock of a crashed run: taken over
    const port = await freePort();
    const npm = npmStart({ PORT: String(port), DATA_DIR: dataDir });
    try {
      await waitReady(`http://127.0.0.1:${port}`, npm);
      const service = lockPid(dataDir);
      expect(service).not.toBe(npm.child.pid);
      process.kill(npm.child.pid!, signal);
      await npm.exited;
      await until('the service process to end', async () => (alive(service) ? undefined : true), 20_000, 50);
      expect(await listening(port)).toBe(false);
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      killGroup(npm.child.pid);
    }
  });

  it('Ctrl-C during start-up (SIGINT to the whole process group) says it stopped and exits 0', { timeout: 90_000 }, async () => {
    const dataDir = path.join(root, 'ctrl-c');
    const port = await freePort();
    const npm = npmStart({ PORT: String(port), DATA_DIR: dataDir });
    try {
      // The lock is taken after the stop handlers are in place and long before the app is up.
      const service = await until('the service to lock its DATA_DIR', async () => (fs.existsSync(path.join(dataDir, LOCK_FILE)) ? lockPid(dataDir) : undefined), 60_000, 20);
      killGroup(npm.child.pid, 'SIGINT');
      expect(await npm.exited).toBe(0);
      expect(npm.stderr()).toContain('Parley stopped (SIGINT during start-up)');
      expect(npm.stderr()).not.toMatch(/^error:|\n\s+at /m);
      await until('the service process to end', async () => (alive(service) ? undefined : true), 20_000, 50);
      expect(await listening(port)).toBe(false);
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      killGroup(npm.child.pid);
    }
  });
});

describe('DATA_DIR lock', () => {
  it('takes over a stale lock, refuses a live holder naming its pid, and releases only its own', () => {
    const dir = path.join(root, 'lock-unit');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, LOCK_FILE);
    for (const stale of [deadPid(), process.pid]) {
      fs.writeFileSync(file, `${stale}\n`);
      const lock = lockDataDir(dir);
      expect(fs.readFileSync(file, 'utf8')).toBe(`${process.pid}\n`);
      lock.release();
      expect(fs.existsSync(file)).toBe(false);
    }
    // A live Node.js process (this one's parent, the test runner) holds it.
    fs.writeFileSync(file, `${process.ppid}\n`);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dir)).toThrow(`(pid ${process.ppid})`);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${process.ppid}\n`);
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE]);
  });
});
