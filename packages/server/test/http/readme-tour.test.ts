/**
 * The README's "A five-minute tour", as a reader runs it: its shell block taken from README.md and
 * run as ONE bash script (`-e -o pipefail`: any failing step fails it) against a service started
 * like `npm start` on a non-default port, with `PORT` and `DATA_DIR` set once in the script's
 * environment. The script runs in a scratch checkout (the repository's package.json, packages and
 * node_modules linked in) so that the files it writes can be checked: all under `.parley/`.
 * Also: `owner-token` with another DATA_DIR than the service's warns, naming its DATA_DIR, and the
 * service's 401 says why.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../testing/own-services.js';
import { REPO_ROOT, SERVICE_FROM_SOURCE, killGroup, serviceEnv, spawnCollecting, waitReady, type Spawned } from '../../testing/service-process.js';

/** The first ```sh block after the "## A five-minute tour" heading. */
function tourScript(): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## A five-minute tour\n'));
  const match = /\n```sh\n([\s\S]*?)\n```\n/.exec(section);
  if (!match) throw new Error('README.md: no ```sh block in "A five-minute tour"');
  return match[1]!;
}

describe('README tour', () => {
  let dir: string;
  let checkout: string;
  let dataDir: string;
  let port: number;
  let service: Spawned;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-tour-'));
    dataDir = path.join(dir, 'data');
    checkout = path.join(dir, 'checkout');
    fs.mkdirSync(checkout);
    for (const name of ['package.json', 'packages', 'node_modules']) fs.symlinkSync(path.join(REPO_ROOT, name), path.join(checkout, name));
    port = await freePort();
    service = spawnCollecting(SERVICE_FROM_SOURCE, { env: serviceEnv({ PORT: String(port), DATA_DIR: dataDir }) });
    await waitReady(`http://127.0.0.1:${port}`, service);
  });

  afterAll(async () => {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs pasted as one block on a non-default port, each step waiting for what it needs, and writes only under .parley/', { timeout: 180_000 }, async () => {
    expect(port).not.toBe(8080);
    const scriptFile = path.join(dir, 'tour.sh');
    fs.writeFileSync(scriptFile, tourScript());
    const tour = spawnCollecting(['bash', '-e', '-o', 'pipefail', scriptFile], { cwd: checkout, env: serviceEnv({ PORT: String(port), DATA_DIR: dataDir }), detached: true });
    let code: number | null;
    try {
      code = await tour.exited;
    } finally {
      killGroup(tour.child.pid); // a listener left behind by a failed run
    }
    expect(code, `${tour.stderr()}\n${tour.stdout()}`).toBe(0);

    const listener = fs.readFileSync(path.join(checkout, '.parley/tour/listener.log'), 'utf8').split('\n');
    const has = (prefix: string) => listener.some((line) => line.startsWith(prefix));
    expect(listener.slice(0, 2)).toEqual(['connected', 'ready: caught up on 0 missed messages']);
    for (const prefix of ['{"event":"message"', '{"event":"room_message"', '{"event":"rental_message"', 'closed 4001 device revoked']) expect(has(prefix), prefix).toBe(true);

    const out = tour.stdout();
    expect(out.match(/"valid":\s*true/g)?.length, 'audit chain, inclusion and consistency proofs').toBeGreaterThanOrEqual(3);
    expect(out).toMatch(/"status":"PENDING"/); // the enrollment
    expect(out).toMatch(/"rental_id":"[^"]+".*"status":"active"/);
    expect(out).toContain('"balanced":true');
    expect(out).toContain('"REVOKED"');
    expect(out).toContain('{"detail":"device revoked"}');
    expect(tour.stderr()).not.toContain('will refuse this token');

    // Every file the tour wrote is under .parley/, which git ignores.
    expect(fs.readdirSync(checkout).sort()).toEqual(['.parley', 'node_modules', 'package.json', 'packages']);
    expect(fs.readdirSync(path.join(checkout, '.parley/tour'))).toContain('agent-keys.json');
    expect(() => execFileSync('git', ['-C', REPO_ROOT, 'check-ignore', '-q', '.parley/tour/agent-keys.json'])).not.toThrow();
  });

  it("owner-token minted with another DATA_DIR warns, naming it, and the service's 401 says why", { timeout: 60_000 }, async () => {
    const otherDir = path.join(dir, 'other-data');
    const cli = spawnCollecting([process.execPath, '--conditions=parley-source', '--import', 'tsx', 'packages/server/src/cli.ts', 'owner-token', '--sub', 'alice@example.com'], {
      env: serviceEnv({ PORT: String(port), DATA_DIR: otherDir }),
    });
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toContain(`will refuse this token (401)`);
    expect(cli.stderr()).toContain(`DATA_DIR=${otherDir}`);
    const token = cli.stdout().trim();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/invites`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/another development identity key.*DATA_DIR/);
  });
});
