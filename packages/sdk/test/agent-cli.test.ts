/**
 * The `parley-agent` command as a real child process (`tsx packages/sdk/src/node/agent-cli.ts`,
 * what `npm run agent` runs) against a real server: enroll with an invite (polling the status no
 * faster than contract §8's 5 s), the owner approves, the agent echoes end to end; stopped with
 * SIGINT and resumed with `run` from its state directory, it continues the same session; revoked,
 * it exits 0 with a message (close 4001). Usage errors exit 2. An API-key agent (`run --api-key`)
 * registers its keys on the first connection, serves the local plugin (owner messages in its
 * inbox, replies through it), reports with `status`, and resumes as the same device without the key.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { main } from '../src/node/agent-cli.js';
import { ownerSide } from '../testing/owner-side.js';
import { sleep, waitFor as poll, type Poll } from './wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(root, 'packages/sdk/src/node/agent-cli.ts');

const waitFor = <T>(get: Poll<T>, what: string, timeoutMs = 20_000) => poll(get, what, timeoutMs, 20);

interface Agent {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function agentCommand(args: string[], env: NodeJS.ProcessEnv = {}): Agent {
  const child = spawn(process.execPath, ['--conditions=parley-source', '--import', 'tsx', script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}

/** Every file of a state directory, as latin1 text to search. */
const stateBytes = (dir: string) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => fs.readFileSync(path.join(dir, e.name), 'latin1'))
    .join('\n');

describe('parley-agent command', () => {
  let t: TestApp;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('usage errors exit 2', async () => {
    const none = agentCommand([]);
    children.push(none.child);
    expect(await none.exit).toBe(2);
    expect(none.output()).toMatch(/usage:/);
    const bad = agentCommand(['enroll', '--server', t.baseUrl, '--insecure-plain-store']);
    children.push(bad.child);
    expect(await bad.exit).toBe(2);
    expect(bad.output()).toMatch(/--invite/);
  });

  it('enrolls, echoes end to end, resumes with run, and exits on revocation', async () => {
    const ownerJwt = await t.ownerToken(`cli-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    await owner.createTenant({ name: 'CLI' });
    const { messenger, received, events, rt } = await ownerSide(owner, ownerJwt, t.baseUrl);

    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-agent-cli-'));
    dirs.push(stateDir);
    const invite = await owner.createInvite();
    const keyFile = `${stateDir}.key`;
    dirs.push(keyFile);
    const enrolling = agentCommand(['enroll', '--invite', invite.token, '--server', t.baseUrl, '--state-dir', stateDir, '--key-file', keyFile, '--name', 'cli-agent']);
    children.push(enrolling.child);
    const pending = await waitFor(() => events.find((e) => e.event === 'device_pending')?.data, 'device_pending');
    // The owner compares the fingerprint of device_pending with the one the agent prints.
    await waitFor(() => enrolling.output().includes(`fingerprint ${pending.fingerprint}`), 'the same fingerprint printed by the agent');
    await owner.approveDevice(pending.device_id);
    await waitFor(() => enrolling.output().includes('online as'), 'the agent online');
    const linked = await waitFor(() => events.find((e) => e.event === 'device_linked')?.data, 'device_linked');
    expect(fs.statSync(path.join(stateDir, 'identity.json')).mode & 0o777).toBe(0o600);
    expect(stateBytes(stateDir)).not.toMatch(/secret_key|device_jwt/); // sealed under the key file

    await messenger.sendText(linked.conversation_id, 'ping one');
    await waitFor(() => received.length === 1, 'the echo');
    expect(received[0]!.content).toEqual({ type: 'text', payload: { text: 'echo: ping one' } });
    const protocol = received[0]!.protocol;
    expect(protocol).toBe('mls');

    enrolling.child.kill('SIGINT');
    expect(await enrolling.exit).toBe(0);
    expect(enrolling.output()).toMatch(/stopped/);

    // Sent while the agent is down; read on resume, in the same session.
    await messenger.sendText(linked.conversation_id, 'ping two');
    const running = agentCommand(['run', '--state-dir', stateDir, '--key-file', keyFile]);
    children.push(running.child);
    await waitFor(() => received.length === 2, 'the echo after resume');
    expect(received[1]!.content).toEqual({ type: 'text', payload: { text: 'echo: ping two' } });
    expect(received[1]!.protocol).toBe(protocol);
    expect(messenger.sessionInfo(linked.conversation_id)!.sessions).toBe(1);

    await owner.revokeDevice(pending.device_id);
    expect(await running.exit).toBe(0);
    expect(running.output()).toMatch(/revoked this device \(WebSocket closed with 4001\)/);

    // The state directory now holds an activated (revoked) agent: enroll refuses it.
    const again = agentCommand(['enroll', '--invite', invite.token, '--server', t.baseUrl, '--state-dir', stateDir, '--key-file', keyFile]);
    children.push(again.child);
    expect(await again.exit).toBe(1);
    expect(again.output()).toMatch(/already holds activated agent/);
    rt.close();
    await messenger.close();
  }, 60_000);

  it('runs an API-key agent that serves the plugin, reports status, and resumes as the same device', async () => {
    const ownerJwt = await t.ownerToken(`cli-key-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    owner.setTenantId((await owner.createTenant({ name: 'CLI key' })).tenant_id);
    const { od, messenger, received, events, rt } = await ownerSide(owner, ownerJwt, t.baseUrl);

    const { key } = await owner.createApiKey({ name: 'cli-key-agent' });
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-agent-key-'));
    dirs.push(stateDir);
    const sealing = { PARLEY_PASSPHRASE: 'cli test passphrase' };
    const agent = agentCommand(['run', '--api-key', key, '--server', t.baseUrl, '--state-dir', stateDir, '--plugin-port', '0'], sealing);
    children.push(agent.child);
    await waitFor(() => agent.output().includes('plugin listening on') && agent.output().includes('online as'), 'the agent online with its plugin');
    const deviceId = /API key registered: device ([0-9a-f-]{36})/.exec(agent.output())![1]!;
    const linked = await waitFor(() => events.find((e) => e.event === 'device_linked' && e.data.device_id === deviceId)?.data, 'device_linked');
    const info = JSON.parse(fs.readFileSync(path.join(stateDir, 'plugin.json'), 'utf8')) as { url: string };
    const token = fs.readFileSync(path.join(stateDir, 'plugin-token'), 'utf8').trim();
    const plugin = (method: string, route: string, body?: unknown) =>
      fetch(`${info.url}${route}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    // The owner writes; the plugin's inbox has it decrypted; the agent answers through the plugin.
    await messenger.sendText(linked.conversation_id, 'hello agent');
    let inbox: any;
    for (const end = Date.now() + 20_000; !inbox; ) {
      const page = (await plugin('GET', `/v1/messages?conversation_id=${linked.conversation_id}`)).body;
      if (page.messages.length > 0) inbox = page;
      else if (Date.now() > end) throw new Error('timed out waiting for the owner message in the plugin inbox');
      else await sleep(25);
    }
    expect(inbox.messages[0]).toMatchObject({ conversation_id: linked.conversation_id, channel_id: null, text: 'hello agent', sender_device_id: od.device_id, protocol: 'ratchet' });
    // Sealed under the passphrase: neither the undelivered message nor the API key is in the files.
    expect(stateBytes(stateDir)).not.toContain('hello agent');
    expect(stateBytes(stateDir)).not.toContain(key);
    const sent = await plugin('POST', '/v1/messages', { conversation_id: linked.conversation_id, text: 'hello owner' });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ conversation_id: linked.conversation_id, channel_id: null, outcome: 'delivered', protocol: 'ratchet' });
    await waitFor(() => received.find((m) => m.content?.type === 'text' && m.content.payload.text === 'hello owner'), 'the answer at the owner');
    expect((await plugin('POST', '/v1/messages', { conversation_id: '00000000-0000-4000-8000-000000000000', text: 'x' })).status).toBe(404);

    const lines: string[] = [];
    process.env.PARLEY_PASSPHRASE = sealing.PARLEY_PASSPHRASE;
    try {
      expect(await main(['status', '--state-dir', stateDir], { out: (l) => void lines.push(l), err: (l) => void lines.push(l) })).toBe(0);
    } finally {
      delete process.env.PARLEY_PASSPHRASE;
    }
    expect(lines).toContain(`plugin: running at ${info.url}`);
    expect(lines).toContain(`device: ${deviceId} (API key)`);
    expect(lines).toContain('connected: yes');

    agent.child.kill('SIGINT');
    expect(await agent.exit).toBe(0);
    expect(fs.existsSync(path.join(stateDir, 'plugin.json'))).toBe(false);

    // The owner writes while the agent is stopped: the resumed agent catches up from its cursor.
    await messenger.sendText(linked.conversation_id, 'sent while you were away');

    // Resumed without --api-key (saved in the state directory): the same device, no new registration.
    const resumed = agentCommand(['run', '--state-dir', stateDir, '--plugin-port', '0'], sealing);
    children.push(resumed.child);
    await waitFor(() => resumed.output().includes(`online as ${deviceId}`), 'the resumed agent online');
    expect(resumed.output()).not.toMatch(/API key registered/);
    // The plugin logs its address once plugin.json is written (reading the file earlier can race its write).
    const againUrl = await waitFor(() => /plugin listening on (http:\/\/\S+)/.exec(resumed.output())?.[1], 'the resumed plugin');
    const pluginAgain = (route: string) => fetch(`${againUrl}${route}`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => (await r.json()) as any);
    const caught = await waitFor(async () => (await pluginAgain(`/v1/messages?conversation_id=${linked.conversation_id}`)).messages.find((m: any) => m.text === 'sent while you were away'), 'the missed owner message after the restart');
    expect(caught).toMatchObject({ sender_device_id: od.device_id, protocol: 'ratchet' });
    resumed.child.kill('SIGINT');
    expect(await resumed.exit).toBe(0);
    rt.close();
    await messenger.close();
  }, 60_000);
});
