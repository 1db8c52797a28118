/**
 * The service as a separate process, as `npm start` runs it but from the sources (tests of
 * start-up errors, signals and the README tour): `node --conditions=parley-source --import tsx
 * packages/server/src/main.ts`, directly or through a real `npm start` whose script is the
 * repository's own start script pointed at the sources.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { until } from './until.js';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN_SOURCE = path.join(REPO_ROOT, 'packages/server/src/main.ts');
/** tsx's loader (its package's only export) as a file URL, so that `--import` finds it from any working directory. */
const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** The service's command line from the sources. */
export const SERVICE_FROM_SOURCE = [process.execPath, '--conditions=parley-source', '--import', TSX_LOADER, MAIN_SOURCE];

/** The environment a test service runs with: this process's, without settings that would change what is tested, plus `env`. */
export function serviceEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, PUBLIC_URL: _u, HOST: _h, PORT: _p, REDIS_URL: _r, OIDC_ISSUER: _i, OIDC_AUDIENCE: _a, OIDC_JWKS_URL: _j, npm_lifecycle_event: _e, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'warn', ...env };
}

/** A spawned process with its output so far. */
export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null after a signal) once the process ended. */
  exited: Promise<number | null>;
}

/** Spawn `argv` collecting its output; `detached` puts it in its own process group (kill with -pid). */
export function spawnCollecting(argv: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; detached?: boolean }): Spawned {
  const child = spawn(argv[0]!, argv.slice(1), { env: opts.env, cwd: opts.cwd ?? REPO_ROOT, detached: opts.detached ?? false, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Whether `url`'s `/readyz` answers 200. */
async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/readyz`)).ok;
  } catch {
    return false;
  }
}

/** Wait until the service at `url` is ready; fails early with its output when `proc` exits. */
export async function waitReady(url: string, proc: Spawned, timeoutMs = 60_000): Promise<void> {
  await until(
    `${url} to be ready`,
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`the service exited with ${proc.child.exitCode}: ${proc.stderr()}${proc.stdout()}`);
      return (await ready(url)) ? true : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Whether process `pid` still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Send `signal` to process group `pid` (a detached child and everything it started), ignoring a group already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * A directory whose `package.json` has the repository's own `start` script with the built entry
 * point (`packages/server/dist/main.js`) replaced by the sources, so that `npm start` there runs
 * the same process tree (npm → the script's shell → node) on the code under test.
 */
export function npmStartPackage(): string {
  const root = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const entry = 'packages/server/dist/main.js';
  if (!root.scripts.start.includes(entry)) throw new Error(`the start script no longer runs ${entry}: ${root.scripts.start}`);
  const start = root.scripts.start.replace(entry, `--conditions=parley-source --import ${TSX_LOADER} ${MAIN_SOURCE}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-npm-start-'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'parley-start-under-test', private: true, type: 'module', scripts: { start } }));
  return dir;
}
