/**
 * End-to-end encrypted A2A channels (`secure/a2a.ts`) between two API-key agents
 * (`node/runtime.ts`) against a real server: keys registered on the first connection
 * (client_key_register), a channel requested, approved by the owner, keyed (X3DH + Double Ratchet
 * handshake over a2a_key_exchange) and opened on both sides; messages decrypted on the other side
 * while the database holds only ciphertext; a restarted agent resumes as the same device and
 * catches up what it missed from the channel history.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aMessages, hubIdentities } from '../../server/src/db/schema/index.js';
import { startApp, type TestApp } from '../../server/test/harness.js';
import { ParleyClient } from '../src/client/rest.js';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';
import { startApiKeyAgent, type AgentRuntime } from '../src/node/runtime.js';
import type { SecureChannelMessage } from '../src/secure/a2a.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor<T>(get: () => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface Agent {
  rt: AgentRuntime;
  address: string;
  dir: string;
  key: string;
  received: SecureChannelMessage[];
}

describe('SecureChannels between API-key agents', () => {
  let t: TestApp;
  let owner: ParleyClient;
  const dirs: string[] = [];
  const running: AgentRuntime[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`a2a-sdk-${Date.now()}@example.com`) });
    owner.setTenantId((await owner.createTenant({ name: 'A2A SDK' })).tenant_id);
  });
  afterAll(async () => {
    for (const r of running) await r.stop();
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function start(key: string, dir: string): Promise<{ rt: AgentRuntime; received: SecureChannelMessage[] }> {
    const rt = await startApiKeyAgent({ apiKey: key, server: t.baseUrl, stateDir: dir, fsync: false, log: () => undefined, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    running.push(rt);
    await rt.ready;
    const received: SecureChannelMessage[] = [];
    rt.channels.on('message', (m) => void received.push(m));
    return { rt, received };
  }

  /** An API-key agent with a certified hub identity bound to its device. */
  async function agent(name: string): Promise<Agent> {
    const { key } = await owner.createApiKey({ name });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-a2a-${name}-`));
    dirs.push(dir);
    const { rt, received } = await start(key, dir);
    const address = `sdk-${name}-${randomBytes(4).toString('hex')}`;
    await owner.registerHub({ hub_address: address, display_name: name, device_id: rt.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: 'certified', trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
    return { rt, address, dir, key, received };
  }

  it('request, approval, key exchange, open; messages decrypted on the other side, ciphertext only on the server; restart and catch-up', async () => {
    const x = await agent('x');
    const y = await agent('y');
    expect(x.rt.deviceId).not.toBe(y.rt.deviceId);
    expect(x.rt.auth).toBe('api_key');

    const requested = await x.rt.channels.request(`did:hub:${y.address}`, { protocol: 'mls' });
    expect(requested).toMatchObject({ role: 'initiator', status: 'pending', open: false, protocol: 'mls', peer_hub_address: y.address });
    expect(x.rt.channels.notOpenReason(requested.channel_id)).toMatch(/pending: the responder's owner must approve it/);
    const id = requested.channel_id;

    await owner.approveA2aChannel(id);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(id, 15_000), y.rt.channels.waitOpen(id, 15_000)]);
    expect(xs).toMatchObject({ open: true, status: 'active', role: 'initiator', protocol: 'ratchet' });
    expect(ys).toMatchObject({ open: true, status: 'active', role: 'responder', protocol: 'ratchet', peer_hub_address: x.address });
    expect(xs!.conversation_id).toBeTruthy();
    expect(x.rt.hubAddress()).toBe(x.address);

    const secret = `the launch code is ${randomBytes(6).toString('hex')}`;
    const sent = await x.rt.channels.sendText(id, secret);
    expect(sent).toMatchObject({ channel_id: id, outcome: 'delivered', protocol: 'ratchet' });
    const got = await waitFor(() => y.received.find((m) => m.message_id === sent.message_id), 'y decrypts');
    expect(got).toMatchObject({ channel_id: id, peer_hub_address: x.address, sender_device_id: x.rt.deviceId, content: { type: 'text', payload: { text: secret } } });
    const reply = await y.rt.channels.sendText(id, 'roger', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const back = await waitFor(() => x.received.find((m) => m.message_id === reply.message_id), 'x decrypts the reply');
    expect(back.content).toEqual({ type: 'text', payload: { text: 'roger' } });
    expect(back.traceparent).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    // Handshakes are not delivered as messages.
    expect(x.received.map((m) => m.message_id)).toEqual([reply.message_id]);

    // The service holds the two handshakes and two messages, all opaque.
    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, id));
    expect(rows.map((r) => r.messageType).sort()).toEqual(['key_exchange', 'key_exchange', 'text', 'text']);
    for (const r of rows) {
      const stored = Buffer.concat([Buffer.from(r.headerBlob ?? []), Buffer.from(r.ciphertext ?? [])]).toString('latin1');
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain('roger');
      expect(stored).not.toContain('parley-a2a-key-exchange');
    }

    // y stops; x sends while it is away; y restarts from its state directory as the same device and catches up.
    await y.rt.stop();
    const missed = await x.rt.channels.sendText(id, 'sent while you were away');
    const again = await start(y.key, y.dir);
    expect(again.rt.deviceId).toBe(y.rt.deviceId);
    expect(again.rt.channels.get(id)).toMatchObject({ open: true });
    const caught = await waitFor(() => again.received.find((m) => m.message_id === missed.message_id), 'the restarted agent catches up');
    expect(caught.content).toEqual({ type: 'text', payload: { text: 'sent while you were away' } });
    // The session continues both ways after the restart.
    const after = await again.rt.channels.sendText(id, 'back online');
    await waitFor(() => x.received.find((m) => m.message_id === after.message_id), 'x reads the restarted agent');
    expect(again.received.filter((m) => m.message_id === sent.message_id)).toEqual([]);
  });
});
