/**
 * The local plugin (`node/plugin.ts`, API of `node/plugin-api.ts`) of two API-key agents against
 * a real server: bearer token (401) and loopback-only (403) rules; a channel opened through the
 * plugin (pending until the owner approves, then open after the key exchange); a text sent
 * through one plugin is read decrypted from the other plugin's inbox while the service stores only
 * ciphertext; the inbox keeps at most 500 messages and survives a restart; `parley-agent status`
 * and `doctor` report on a running plugin and on an empty state directory.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema, startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';
import { main } from '../src/node/agent-cli.js';
import { FileSessionStore } from '../src/node/file-store.js';
import { KeyFileSource } from '../src/node/sealing-keys.js';
import { MemorySessionStore, type SessionStore } from '../src/storage.js';
import { parseSince, PluginInbox } from '../src/node/inbox.js';
import { PLUGIN_INBOX_LIMIT, type PluginChannel, type PluginMessage, type PluginMessagePage, type PluginSendResult, type PluginStatus } from '../src/node/plugin-api.js';
import { ensurePluginToken, isLoopbackAddress, isLoopbackUrl, PLUGIN_INFO_FILE, startPlugin, tokenMatches, type RunningPlugin } from '../src/node/plugin.js';
import { startApiKeyAgent, type AgentRuntime } from '../src/node/runtime.js';
import { waitFor as poll, type Poll } from './wait.js';
const { a2aMessages, hubIdentities } = schema;

const waitFor = <T>(get: Poll<T>, what: string, timeoutMs = 15_000) => poll(get, what, timeoutMs, 25);

interface Agent {
  rt: AgentRuntime;
  plugin: RunningPlugin;
  address: string;
  dir: string;
}

async function call<T = any>(plugin: { url: string; token?: string }, method: string, route: string, body?: unknown, token = plugin.token): Promise<{ status: number; body: T }> {
  const res = await fetch(`${plugin.url}${route}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** A raw request (node:http, so the Host header is ours to choose). */
function rawGet(port: number, route: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: route, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
    });
    req.on('error', reject);
    req.end();
  });
}

function capture() {
  const lines: string[] = [];
  return { lines, io: { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l) }, text: () => lines.join('\n') };
}

describe('local plugin', () => {
  let t: TestApp;
  let owner: ParleyClient;
  const dirs: string[] = [];
  const stops: (() => Promise<unknown>)[] = [];
  let x: Agent;
  let y: Agent;

  const tempDir = (name: string) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `parley-plugin-${name}-`));
    dirs.push(d);
    return d;
  };

  /** The key file sealing the state directory `dir` (beside it, removed with it). */
  const keyFileOf = (dir: string) => {
    dirs.push(`${dir}.key`);
    return `${dir}.key`;
  };

  async function agent(name: string): Promise<Agent> {
    const { key } = await owner.createApiKey({ name });
    const dir = tempDir(name);
    const rt = await startApiKeyAgent({ apiKey: key, server: t.baseUrl, stateDir: dir, protection: new KeyFileSource(keyFileOf(dir)), fsync: false, log: () => undefined });
    await rt.ready;
    const plugin = await startPlugin({ backend: rt, stateDir: dir, port: 0, fsync: false });
    stops.push(() => plugin.close(), () => rt.stop());
    const address = `plug-${name}-${randomBytes(4).toString('hex')}`;
    await owner.registerHub({ hub_address: address, display_name: name, device_id: rt.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: 'certified', trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
    return { rt, plugin, address, dir };
  }

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`plugin-${Date.now()}@example.com`) });
    owner.setTenantId((await owner.createTenant({ name: 'Plugin Co' })).tenant_id);
    x = await agent('x');
    y = await agent('y');
  });
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses requests without the token (401) and from non-loopback clients (403)', async () => {
    expect(fs.statSync(path.join(x.dir, 'plugin-token')).mode & 0o777).toBe(0o600);
    expect(x.plugin.token).toMatch(/^[0-9a-f]{64}$/);
    const none = await call(x.plugin, 'GET', '/v1/status', undefined, '');
    expect(none.status).toBe(401);
    expect(none.body.detail).toMatch(/bearer token/);
    expect((await call(x.plugin, 'GET', '/v1/status', undefined, 'f'.repeat(64))).status).toBe(401);
    expect((await call(x.plugin, 'GET', '/v1/messages', undefined, x.plugin.token.slice(1))).status).toBe(401);
    expect(tokenMatches(`Bearer ${x.plugin.token}`, x.plugin.token)).toBe(true);
    expect(tokenMatches(`Basic ${x.plugin.token}`, x.plugin.token)).toBe(false);

    for (const a of ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ['192.0.2.2', '10.0.0.1', '::ffff:10.0.0.1', 'fd00::2', '', undefined]) expect(isLoopbackAddress(a)).toBe(false);

    // Bound to every interface on purpose: a client on a non-loopback address is still refused.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4');
    const wide = await startPlugin({ backend: x.rt, stateDir: tempDir('wide'), protection: 'plain', host: '0.0.0.0', port: 0, fsync: false });
    try {
      const ok = await call({ url: `http://127.0.0.1:${wide.port}`, token: wide.token }, 'GET', '/v1/status');
      expect(ok.status).toBe(200);
      if (external) {
        const refused = await call({ url: `http://${external.address}:${wide.port}`, token: wide.token }, 'GET', '/v1/status');
        expect(refused.status).toBe(403);
        expect(refused.body.detail).toMatch(/loopback/);
      }
    } finally {
      await wide.close();
    }
  });

  it('replaces an empty or malformed token file with a fresh 64-hex token; no token never matches an empty one', async () => {
    for (const content of ['', '  \n', 'not-a-token\n', 'F'.repeat(64), 'a'.repeat(63)]) {
      const dir = tempDir('token');
      const file = path.join(dir, 'plugin-token');
      fs.writeFileSync(file, content, { mode: 0o644 });
      const plugin = await startPlugin({ backend: x.rt, stateDir: dir, protection: 'plain', port: 0, fsync: false });
      try {
        expect(plugin.token).toMatch(/^[0-9a-f]{64}$/);
        expect(fs.readFileSync(file, 'utf8')).toBe(`${plugin.token}\n`);
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
        const none = await call(plugin, 'GET', '/v1/status', undefined, '');
        expect(none.status).toBe(401);
        expect((await call(plugin, 'GET', '/v1/status')).status).toBe(200);
        // The token is kept from then on.
        expect(await ensurePluginToken(dir)).toBe(plugin.token);
      } finally {
        await plugin.close();
      }
    }
    expect(tokenMatches(undefined, '')).toBe(false);
    expect(tokenMatches('Bearer ', '')).toBe(false);
    expect(tokenMatches('', '')).toBe(false);
    expect(tokenMatches(undefined, x.plugin.token)).toBe(false);
  });

  it('replaces plugin.json by renaming a complete file over it: a reader of the old file never sees the new one half written', async () => {
    const dir = tempDir('info');
    const file = path.join(dir, PLUGIN_INFO_FILE);
    fs.writeFileSync(file, '{"url":"http://127.0.0.1:1","pid":1}', { mode: 0o644 });
    // A second name for the old file: a write in place would change what it reads.
    const old = path.join(dir, 'old-plugin.json');
    fs.linkSync(file, old);
    const plugin = await startPlugin({ backend: x.rt, stateDir: dir, protection: 'plain', port: 0, fsync: false });
    try {
      expect(fs.readFileSync(old, 'utf8')).toBe('{"url":"http://127.0.0.1:1","pid":1}');
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ url: plugin.url, port: plugin.port, pid: process.pid, device_id: x.rt.deviceId });
      expect(fs.statSync(file).ino).not.toBe(fs.statSync(old).ino);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await plugin.close();
    }
    expect(fs.existsSync(file)).toBe(false);
  });

  it('refuses a request whose Host is not a loopback name with its port (DNS rebinding), before the token check', async () => {
    const port = x.plugin.port;
    const auth = { authorization: `Bearer ${x.plugin.token}` };
    for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1:${port + 1}`, `localhost`, `evil.localhost:${port}`]) {
      for (const headers of [{ host, ...auth }, { host }]) {
        const refused = await rawGet(port, '/v1/status', headers);
        expect(refused.status, host).toBe(403);
        expect(refused.body.detail).toMatch(/Host/);
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      expect((await rawGet(port, '/v1/status', { host, ...auth })).status, host).toBe(200);
      expect((await rawGet(port, '/v1/status', { host })).status, host).toBe(401);
    }

    // The bind host is accepted too.
    const other = await startPlugin({ backend: x.rt, stateDir: tempDir('bind'), protection: 'plain', host: '127.0.0.2', port: 0, fsync: false }).catch(() => undefined);
    if (other) {
      try {
        const ok = await call(other, 'GET', '/v1/status');
        expect(ok.status).toBe(200);
        expect(other.url).toBe(`http://127.0.0.2:${other.port}`);
      } finally {
        await other.close();
      }
    }
  });

  it('opens a channel through the plugin and carries a text end to end; the service holds ciphertext only', async () => {
    const status = await call<PluginStatus>(x.plugin, 'GET', '/v1/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ device_id: x.rt.deviceId, auth: 'api_key', server: t.baseUrl, connected: true, mls: false, channels: 0 });

    // Validation.
    expect((await call(x.plugin, 'POST', '/v1/channels', {})).status).toBe(400);
    expect((await call(x.plugin, 'POST', '/v1/channels', '{not json')).status).toBe(400);
    expect((await call(x.plugin, 'POST', '/v1/channels', { peer: y.address, protocol: 'tls' })).status).toBe(400);
    expect((await call(x.plugin, 'GET', '/v1/messages?limit=0')).status).toBe(400);
    expect((await call(x.plugin, 'GET', '/v1/messages?since=yesterday')).status).toBe(400);
    expect((await call(x.plugin, 'GET', '/v1/nothing')).status).toBe(404);
    expect((await call(x.plugin, 'POST', '/v1/channels', { peer: 'no-such-agent-here' })).status).toBe(404);

    const opened = await call<PluginChannel>(x.plugin, 'POST', '/v1/channels', { peer: `did:hub:${y.address}` });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ peer_hub_address: y.address, role: 'initiator', protocol: 'mls', status: 'pending' });
    const id = opened.body.channel_id;
    const early = await call(x.plugin, 'POST', '/v1/messages', { hub_address: y.address, text: 'too early' });
    expect(early.status).toBe(409);
    expect(early.body.detail).toBe(`channel ${id} is pending: the responder's owner must approve it`);
    expect((await call(x.plugin, 'POST', '/v1/messages', { channel_id: id, hub_address: y.address, text: 'two targets' })).status).toBe(400);
    // No target: the owner, who has no owner device in this tenant.
    const ownerless = await call(x.plugin, 'POST', '/v1/messages', { text: 'no target' });
    expect(ownerless.status).toBe(409);
    expect(ownerless.body.detail).toMatch(/no owner conversation/);
    expect((await call(x.plugin, 'POST', '/v1/messages', { hub_address: 'somebody-else', text: 'hi' })).status).toBe(404);

    await owner.approveA2aChannel(id);
    const reused = await call<PluginChannel>(x.plugin, 'POST', '/v1/channels', { peer: y.address, wait_ms: 15_000 });
    expect(reused.status).toBe(200);
    expect(reused.body).toMatchObject({ channel_id: id, status: 'open', protocol: 'mls' });
    const seen = await waitFor(async () => (await call<{ channels: PluginChannel[] }>(y.plugin, 'GET', '/v1/channels')).body.channels.find((c) => c.channel_id === id && c.status === 'open'), 'y sees the channel open');
    expect(seen).toMatchObject({ role: 'responder', peer_hub_address: x.address });

    const secret = `plugin secret ${randomBytes(6).toString('hex')}`;
    const sent = await call<PluginSendResult>(x.plugin, 'POST', '/v1/messages', { hub_address: y.address, text: secret, message_type: 'text' });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ channel_id: id, conversation_id: null, outcome: 'delivered', protocol: 'mls' });
    const page = await waitFor(async () => {
      const p = (await call<PluginMessagePage>(y.plugin, 'GET', `/v1/messages?channel_id=${id}`)).body;
      return p.messages.length > 0 ? p : undefined;
    }, 'the text in y inbox');
    expect(page.messages).toHaveLength(1);
    expect(page.messages[0]).toMatchObject({
      message_id: sent.body.message_id,
      channel_id: id,
      conversation_id: null,
      sender_device_id: x.rt.deviceId,
      sender_hub_address: x.address,
      text: secret,
      content_type: 'text',
      message_type: 'text',
      protocol: 'mls',
    });
    expect(page.next_since).toBeTruthy();
    expect((await call<PluginMessagePage>(y.plugin, 'GET', `/v1/messages?since=${page.next_since}`)).body).toEqual({ messages: [], next_since: null });
    const before = new Date(Date.parse(page.messages[0]!.timestamp) - 1).toISOString();
    expect((await call<PluginMessagePage>(y.plugin, 'GET', `/v1/messages?since=${before}`)).body.messages).toHaveLength(1);

    // A reply by channel id; the sender's own inbox only holds what it received.
    const reply = await call<PluginSendResult>(y.plugin, 'POST', '/v1/messages', { channel_id: id, text: 'ack from y', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(reply.status).toBe(201);
    const xs = await waitFor(async () => {
      const p = (await call<PluginMessagePage>(x.plugin, 'GET', '/v1/messages')).body;
      return p.messages.length > 0 ? p : undefined;
    }, 'the reply in x inbox');
    expect(xs.messages.map((m: PluginMessage) => [m.text, m.traceparent])).toEqual([['ack from y', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']]);

    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, id));
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      const stored = Buffer.concat([Buffer.from(r.headerBlob ?? []), Buffer.from(r.ciphertext ?? [])]).toString('latin1');
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain('ack from y');
    }

    // The agent's state directory is sealed: the undelivered message is in none of its files.
    const onDisk = fs.readdirSync(y.dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => fs.readFileSync(path.join(y.dir, e.name), 'latin1'));
    expect(onDisk.join('\n')).not.toContain(secret);

    // The inbox survives a plugin restart.
    await y.plugin.close();
    y.plugin = await startPlugin({ backend: y.rt, stateDir: y.dir, port: 0, fsync: false });
    stops.push(() => y.plugin.close());
    const kept = (await call<PluginMessagePage>(y.plugin, 'GET', '/v1/messages')).body;
    expect(kept.messages.map((m) => m.text)).toEqual([secret]);
  });

  it('the inbox keeps the newest 500 messages, pages by position, and survives reopening', async () => {
    const dir = tempDir('inbox');
    const store = new FileSessionStore(dir, { fsync: false });
    const inbox = await PluginInbox.open(store);
    const base = Date.parse('2030-01-01T00:00:00.000Z');
    for (let i = 1; i <= PLUGIN_INBOX_LIMIT + 5; i++) {
      void inbox.add({
        message_id: `m${i}`,
        channel_id: 'c',
        conversation_id: null,
        sender_device_id: 'd',
        sender_hub_address: null,
        text: `#${i}`,
        content_type: 'text',
        content: null,
        message_type: 'text',
        protocol: 'ratchet',
        timestamp: new Date(base + Math.floor(i / 2) * 1000).toISOString(), // timestamps tie in pairs
        traceparent: null,
      });
    }
    await inbox.flush();
    expect(inbox.size).toBe(PLUGIN_INBOX_LIMIT);
    const reopened = await PluginInbox.open(store);
    expect(reopened.size).toBe(PLUGIN_INBOX_LIMIT);
    const first = reopened.page({ limit: 2 });
    expect(first.messages.map((m) => m.message_id)).toEqual(['m6', 'm7']);
    const next = reopened.page({ since: parseSince(first.next_since!)!, limit: 1 });
    expect(next.messages.map((m) => m.message_id)).toEqual(['m8']);
    const after = (seconds: number) => reopened.page({ since: parseSince(new Date(base + seconds * 1000).toISOString())!, limit: 500 }).messages.map((m) => m.message_id);
    expect(after(252)).toEqual([]);
    expect(after(251)).toEqual(['m504', 'm505']);
    expect(after(250)).toEqual(['m502', 'm503', 'm504', 'm505']);
    expect(reopened.page({ limit: 500 }).messages).toHaveLength(500);
  });

  it('the inbox keeps saving after a failed write', async () => {
    const backing = new MemorySessionStore();
    let failures = 1;
    const store: SessionStore = {
      load: (id) => backing.load(id),
      delete: (id) => backing.delete(id),
      save: (id, state) => (failures-- > 0 ? Promise.reject(new Error('ENOSPC: no space left on device')) : backing.save(id, state)),
    };
    const inbox = await PluginInbox.open(store);
    const msg = (id: string): PluginMessage => ({
      message_id: id,
      channel_id: 'c',
      conversation_id: null,
      sender_device_id: 'd',
      sender_hub_address: null,
      text: id,
      content_type: 'text',
      content: null,
      message_type: 'text',
      protocol: 'ratchet',
      timestamp: new Date().toISOString(),
      traceparent: null,
    });
    await expect(inbox.add(msg('lost'))).rejects.toThrow(/ENOSPC/);
    await inbox.add(msg('kept'));
    await inbox.flush();
    const reopened = await PluginInbox.open(backing);
    expect(reopened.page({ limit: 10 }).messages.map((m) => m.message_id)).toEqual(['lost', 'kept']);
  });

  it('parley-agent status and doctor', async () => {
    const s = capture();
    expect(await main(['status', '--state-dir', x.dir, '--key-file', `${x.dir}.key`], s.io)).toBe(0);
    expect(s.text()).toContain(`identity: API-key agent device ${x.rt.deviceId}`);
    expect(s.text()).toContain(`plugin: running at ${x.plugin.url}`);
    expect(s.text()).toContain(`device: ${x.rt.deviceId} (API key)`);
    expect(s.text()).toContain(`hub address: ${x.address}`);
    expect(s.text()).toContain('connected: yes');

    const d = capture();
    expect(await main(['doctor', '--state-dir', x.dir, '--key-file', `${x.dir}.key`], d.io)).toBe(0);
    expect(d.lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(d.text()).toMatch(/^ok {4}service http:\/\/127\.0\.0\.1:\d+ reachable/m);
    expect(d.text()).toContain(`ok    API key bound to device ${x.rt.deviceId}`);
    expect(d.text()).toMatch(/^ok {4}plugin token .* present \(mode 0600\)$/m);
    expect(d.text()).toContain(`ok    plugin running at ${x.plugin.url}, connected as ${x.rt.deviceId}`);
    expect(d.text()).toContain('all checks passed');

    // A loose token file is reported with its fix.
    fs.chmodSync(path.join(x.dir, 'plugin-token'), 0o644);
    const loose = capture();
    expect(await main(['doctor', '--state-dir', x.dir, '--key-file', `${x.dir}.key`], loose.io)).toBe(1);
    expect(loose.text()).toMatch(/FAIL {2}plugin token .* has mode 0644, not 0600 — fix: chmod 600 /);
    fs.chmodSync(path.join(x.dir, 'plugin-token'), 0o600);

    const empty = tempDir('empty');
    const e = capture();
    expect(await main(['status', '--state-dir', empty, '--insecure-plain-store', '--plugin-url', 'http://127.0.0.1:9'], e.io)).toBe(1);
    expect(e.text()).toContain('identity: none');
    expect(e.text()).toMatch(/plugin: not running/);
    // The token is never sent to a plugin URL that is not loopback.
    for (const u of ['http://127.0.0.1:7', 'http://127.9.9.9', 'http://[::1]:5', 'http://localhost:3', 'http://[::ffff:127.0.0.1]/']) expect(isLoopbackUrl(u), u).toBe(true);
    for (const u of ['http://attacker.example:47100', 'http://127.0.0.1.attacker.example', 'http://10.0.0.1:47100', 'http://0.0.0.0:1', 'not a url']) expect(isLoopbackUrl(u), u).toBe(false);
    const r = capture();
    expect(await main(['status', '--state-dir', x.dir, '--key-file', `${x.dir}.key`, '--plugin-url', 'http://attacker.example:47100'], r.io)).toBe(2);
    expect(r.text()).toContain('plugin: refused --plugin-url http://attacker.example:47100 is not a loopback address (127.0.0.0/8, ::1, localhost)');
    expect(r.text()).not.toMatch(/plugin: (running|not running)/);

    const f = capture();
    expect(await main(['doctor', '--state-dir', empty, '--insecure-plain-store', '--server', 'http://127.0.0.1:9'], f.io)).toBe(1);
    expect(f.text()).toMatch(/^FAIL {2}no device keys in .* — fix: /m);
    expect(f.text()).toMatch(/^FAIL {2}service http:\/\/127\.0\.0\.1:9 not reachable: .* — fix: check --server/m);
    expect(f.text()).toMatch(/^FAIL {2}no plugin token at .* — fix: /m);
    expect(f.text()).toMatch(/^FAIL {2}plugin not running: .* — fix: /m);
    expect(f.text()).toMatch(/check\(s\) failed$/);
  });
});
