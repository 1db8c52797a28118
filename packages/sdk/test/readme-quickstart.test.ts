/**
 * The SDK quick start (`packages/sdk/README.md`) cannot rot: its code blocks are the example files
 * byte for byte, the npm scripts it names run those files, and both examples run as child
 * processes (what `npm run -s example:agent` / `example:owner` start) against a real server: the
 * agent enrolls with an invite (the owner approves it after comparing fingerprints), or runs on an
 * API key, and answers the owner client's question and decision request end to end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { waitFor as poll, type Poll } from './wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const sdk = path.join(root, 'packages/sdk');
const EXAMPLES = ['custom-agent.ts', 'owner-client.ts'];
const SCRIPTS: Record<string, string> = { 'example:agent': 'custom-agent.ts', 'example:owner': 'owner-client.ts' };

const waitFor = <T>(get: Poll<T>, what: string, timeoutMs = 30_000) => poll(get, what, timeoutMs, 20);

/** Every ```ts block of the README introduced by a link to an example file: file name -> block text. */
function readmeBlocks(readme: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const m of readme.matchAll(/\[`examples\/([\w-]+\.ts)`\]\(examples\/\1\):\n\n```ts\n([\s\S]*?)```\n/g)) blocks.set(m[1]!, m[2]!);
  return blocks;
}

interface Child {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

/**
 * Run an example as `npm run -s example:…` does (the tsx command with the source condition), in
 * `cwd` (its `.parley/` gets the state), with only the PARLEY_* variables given.
 */
function example(file: string, cwd: string, vars: Record<string, string>): Child {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PARLEY_')));
  const tsx = path.join(root, 'node_modules/.bin/tsx');
  const child = spawn(tsx, ['--conditions=parley-source', path.join(sdk, 'examples', file)], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, ...vars } });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}

describe('the SDK README quick start', () => {
  it('shows the example files byte for byte, and the npm scripts run them', () => {
    const blocks = readmeBlocks(fs.readFileSync(path.join(sdk, 'README.md'), 'utf8'));
    expect([...blocks.keys()].sort()).toEqual([...EXAMPLES].sort());
    for (const file of EXAMPLES) expect(blocks.get(file), file).toBe(fs.readFileSync(path.join(sdk, 'examples', file), 'utf8'));
    const scripts = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    for (const [name, file] of Object.entries(SCRIPTS)) expect(scripts[name]).toBe(`tsx --conditions=parley-source packages/sdk/examples/${file}`);
  });

  describe('the examples against a real server', () => {
    let t: TestApp;
    const children: ChildProcess[] = [];
    const dirs: string[] = [];
    const tempDir = (label: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-quickstart-${label}-`));
      dirs.push(dir);
      return dir;
    };
    beforeAll(async () => {
      t = await startApp({ listen: true });
    });
    afterAll(async () => {
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
      await t?.close();
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    });

    async function newOwner(label: string) {
      const ownerJwt = await t.ownerToken(`${label}-${Date.now()}@example.com`);
      const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
      owner.setTenantId((await owner.createTenant({ name: label })).tenant_id);
      return { owner, ownerJwt };
    }

    /** Run the owner example to its end and check the agent's two answers. */
    async function ownerTalks(ownerJwt: string) {
      const dir = tempDir('owner');
      const run = example('owner-client.ts', dir, { PARLEY_URL: t.baseUrl, PARLEY_OWNER_TOKEN: ownerJwt });
      children.push(run.child);
      expect(await run.exit, run.output()).toBe(0);
      expect(run.output()).toContain('agent: text "I read 7 words. Call your model here."');
      expect(run.output()).toContain('agent: decision answer: canary (chose "Canary first" for "Deploy the new model?")');
      expect(fs.readdirSync(path.join(dir, '.parley')).sort()).toEqual(['owner', 'owner.key']);
    }

    /** Stop a running agent example as Ctrl-C does. */
    async function stop(agent: Child) {
      agent.child.kill('SIGINT');
      expect(await agent.exit).toBe(0);
      expect(agent.output()).toContain('agent ended: stopped');
    }

    it('the agent enrolls with an invite, the owner approves it, and it answers the owner client', async () => {
      const { owner, ownerJwt } = await newOwner('Quickstart');
      const invite = await owner.createInvite({ label: 'quickstart agent' });
      const dir = tempDir('agent');
      const agent = example('custom-agent.ts', dir, { PARLEY_URL: t.baseUrl, PARLEY_INVITE: invite.token });
      children.push(agent.child);
      const pending = await waitFor(async () => (await owner.listDevices()).devices.find((d) => d.kind === 'agent' && d.status === 'PENDING'), 'the pending agent');
      await waitFor(() => agent.output().includes(`fingerprint ${pending.fingerprint}`), 'the same fingerprint printed by the agent');
      expect(pending.name).toBe('quickstart agent');
      await owner.approveDevice(pending.device_id);
      await waitFor(() => agent.output().includes(`agent ${pending.device_id} running`), 'the agent running');
      // The defaults: state in .parley/custom-agent, sealed under .parley/custom-agent.key (made on the first run).
      expect(fs.statSync(path.join(dir, '.parley/custom-agent.key')).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(dir, '.parley/custom-agent/agent.json'), 'latin1')).not.toMatch(/device_jwt/);

      await ownerTalks(ownerJwt);
      await stop(agent);
    }, 90_000);

    it('the agent runs on an API key and answers the owner client', async () => {
      const { owner, ownerJwt } = await newOwner('Quickstart key');
      const { key } = await owner.createApiKey({ name: 'quickstart-key-agent' });
      const dir = tempDir('key-agent');
      const agent = example('custom-agent.ts', dir, { PARLEY_URL: t.baseUrl, PARLEY_API_KEY: key, PARLEY_STATE_DIR: '.parley/key-agent' });
      children.push(agent.child);
      await waitFor(() => /agent \S+ running/.test(agent.output()), 'the agent running');

      await ownerTalks(ownerJwt);
      await stop(agent);
      expect(fs.readdirSync(path.join(dir, '.parley')).sort()).toEqual(['custom-agent.key', 'key-agent']);
    }, 90_000);
  });
});
