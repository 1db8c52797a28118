/**
 * End-to-end encrypted A2A channels (`secure/a2a.ts`) between API-key agents (`node/runtime.ts`)
 * against a real server: keys registered on the first connection (client_key_register), a channel
 * requested, approved by the owner, keyed over a2a_key_exchange and opened on both sides;
 * messages decrypted on the other side while the database holds only ciphertext; a restarted agent
 * resumes as the same device and catches up what it missed from the channel history.
 * Protocols (docs/decisions.md "MLS over A2A channels"): `mls` gives an MLS session (the Welcome as
 * the initiator's key exchange) when the peer has KeyPackages, in one tenant and across federated
 * tenants; `ratchet` and a peer without KeyPackages give X3DH + Double Ratchet.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema, newOwner, startApp, type TestApp, operatorAuth, publishedListing, type Developer } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { isMlsHeaderBlob } from '../src/mls/wire.js';
import { bytesToBase64, ed25519Keygen } from '../src/crypto/primitives.js';
import { startApiKeyAgent, type AgentRuntime } from '../src/node/runtime.js';
import type { SecureChannelMessage } from '../src/secure/a2a.js';
import { waitFor as poll, type Poll } from './wait.js';
const { a2aMessages, hubIdentities, mlsKeyPackages } = schema;

const waitFor = <T>(get: Poll<T>, what: string, timeoutMs = 15_000) => poll(get, what, timeoutMs, 20);

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

  async function start(key: string, dir: string, log: (line: string) => void = () => undefined): Promise<{ rt: AgentRuntime; received: SecureChannelMessage[] }> {
    const rt = await startApiKeyAgent({ apiKey: key, server: t.baseUrl, stateDir: dir, protection: 'plain', fsync: false, log, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    running.push(rt);
    await rt.ready;
    const received: SecureChannelMessage[] = [];
    rt.channels.on('message', (m) => void received.push(m));
    return { rt, received };
  }

  /** An API-key agent of `by`'s tenant with a hub identity of `tier` bound to its device. */
  async function agent(name: string, by: ParleyClient = owner, tier = 'certified'): Promise<Agent> {
    const { key } = await by.createApiKey({ name });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-a2a-${name}-`));
    dirs.push(dir);
    const { rt, received } = await start(key, dir);
    const address = `sdk-${name}-${randomBytes(4).toString('hex')}`;
    await by.registerHub({ hub_address: address, display_name: name, device_id: rt.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
    await t.app.parley.database.db.update(hubIdentities).set({ trustTier: tier, trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
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
    expect(xs).toMatchObject({ open: true, status: 'active', role: 'initiator', protocol: 'mls' });
    expect(ys).toMatchObject({ open: true, status: 'active', role: 'responder', protocol: 'mls', peer_hub_address: x.address });
    expect(xs!.conversation_id).toBeTruthy();
    expect(x.rt.hubAddress()).toBe(x.address);

    const secret = `the launch code is ${randomBytes(6).toString('hex')}`;
    const sent = await x.rt.channels.sendText(id, secret);
    expect(sent).toMatchObject({ channel_id: id, outcome: 'delivered', protocol: 'mls' });
    const got = await waitFor(() => y.received.find((m) => m.message_id === sent.message_id), 'y decrypts');
    expect(got).toMatchObject({ channel_id: id, peer_hub_address: x.address, sender_device_id: x.rt.deviceId, protocol: 'mls', content: { type: 'text', payload: { text: secret } } });
    const reply = await y.rt.channels.sendText(id, 'roger', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const back = await waitFor(() => x.received.find((m) => m.message_id === reply.message_id), 'x decrypts the reply');
    expect(back.content).toEqual({ type: 'text', payload: { text: 'roger' } });
    expect(back.traceparent).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    // Handshakes are not delivered as messages.
    expect(x.received.map((m) => m.message_id)).toEqual([reply.message_id]);

    // The service holds the two handshakes (the Welcome, then y's answer in the group) and two messages, all MLS and opaque.
    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, id));
    expect(rows.map((r) => r.messageType).sort()).toEqual(['key_exchange', 'key_exchange', 'text', 'text']);
    expectOpaque(rows, [secret, 'roger']);
    expect(rows.every((r) => isMlsHeaderBlob(Buffer.from(r.headerBlob!).toString('base64')))).toBe(true);
    const welcome = rows.find((r) => r.messageType === 'key_exchange' && r.senderDeviceId === x.rt.deviceId)!;
    expect(JSON.parse(Buffer.from(welcome.headerBlob!).toString('utf8'))).toMatchObject({ protocol: 'mls', kind: 'welcome' });
    // x claimed one of y's KeyPackages (y's stock was topped up after joining).
    const claimed = await t.app.parley.database.db.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.rt.deviceId));
    expect(claimed.filter((k) => k.claimedBy === x.rt.deviceId)).toHaveLength(1);

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
    expect(after.protocol).toBe('mls');
    expect(again.received.filter((m) => m.message_id === sent.message_id)).toEqual([]);
  });

  /** Approve, wait until both sides are open, and exchange one text each way; answers the channel's stored rows. */
  async function openAndTalk(x: Agent, y: Agent, id: string, approver: ParleyClient, protocol: 'mls' | 'ratchet') {
    await approver.approveA2aChannel(id);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(id, 15_000), y.rt.channels.waitOpen(id, 15_000)]);
    expect(xs).toMatchObject({ open: true, role: 'initiator', protocol });
    expect(ys).toMatchObject({ open: true, role: 'responder', protocol });
    const secret = `secret ${randomBytes(6).toString('hex')}`;
    const sent = await x.rt.channels.sendText(id, secret);
    expect(sent.protocol).toBe(protocol);
    expect((await waitFor(() => y.received.find((m) => m.message_id === sent.message_id), 'y decrypts')).content).toEqual({ type: 'text', payload: { text: secret } });
    const reply = await y.rt.channels.sendText(id, `re: ${secret}`);
    expect(reply.protocol).toBe(protocol);
    expect((await waitFor(() => x.received.find((m) => m.message_id === reply.message_id), 'x decrypts')).content).toEqual({ type: 'text', payload: { text: `re: ${secret}` } });
    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, id));
    expectOpaque(rows, [secret]);
    expect(rows.every((r) => isMlsHeaderBlob(Buffer.from(r.headerBlob!).toString('base64')) === (protocol === 'mls'))).toBe(true);
    return rows;
  }

  it('a channel table whose history cursor was saved behind (a crash before its lazy write) re-reads nothing twice', async () => {
    const x = await agent('cx');
    const y = await agent('cy');
    const { channel_id: id } = await x.rt.channels.request(y.address, { protocol: 'mls' });
    await owner.approveA2aChannel(id);
    await Promise.all([x.rt.channels.waitOpen(id, 15_000), y.rt.channels.waitOpen(id, 15_000)]);
    const sent: { message_id: string }[] = [];
    for (const text of ['one', 'two', 'three']) sent.push(await x.rt.channels.sendText(id, text));
    await waitFor(() => y.received.length === 3, 'y decrypts three messages');
    // The process dies now, its files as they are; the channel table as it would be had none of
    // the cursor moves been written (the handshakes included: catch-up starts from the beginning).
    const crashed = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-a2a-crashed-'));
    dirs.push(crashed);
    fs.cpSync(y.dir, crashed, { recursive: true });
    await y.rt.stop();
    const table = path.join(crashed, `a2a-channels-${y.rt.deviceId}.json`);
    const saved = JSON.parse(fs.readFileSync(table, 'utf8'));
    saved.channels[id].cursor = null;
    fs.writeFileSync(table, JSON.stringify(saved));
    const later = await x.rt.channels.sendText(id, 'later');

    const warnings: string[] = [];
    const again = await start(y.key, crashed, (line) => void (line.startsWith('warning') && warnings.push(line)));
    await waitFor(() => again.received.find((m) => m.message_id === later.message_id), 'the restarted agent catches up');
    await again.rt.channels.catchUp(id); // once more from the cursor it has now: nothing new
    const fresh = again.received.filter((m) => !m.redelivered).map((m) => m.message_id);
    expect(fresh).toEqual([later.message_id]);
    // At most the last delivered message comes back from the saved pending list, marked redelivered.
    expect(again.received.filter((m) => m.redelivered).every((m) => m.message_id === sent[2]!.message_id)).toBe(true);
    expect(warnings).toEqual([]); // no decrypt_failed: nothing was decrypted a second time
    const reply = await again.rt.channels.sendText(id, 'still in the same session');
    await waitFor(() => x.received.find((m) => m.message_id === reply.message_id), 'x reads the restarted agent');
  });

  it('a channel asked for with ratchet stays X3DH + Double Ratchet, and claims no KeyPackage', async () => {
    const x = await agent('rx');
    const y = await agent('ry');
    const requested = await x.rt.channels.request(y.address, { protocol: 'ratchet' });
    expect(requested.protocol).toBe('ratchet');
    await openAndTalk(x, y, requested.channel_id, owner, 'ratchet');
    const kps = await t.app.parley.database.db.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.rt.deviceId));
    expect(kps.length).toBeGreaterThan(0);
    expect(kps.filter((k) => k.claimedAt !== null)).toEqual([]);
  });

  it('mls with a peer that has no KeyPackage falls back to X3DH + Double Ratchet', async () => {
    const x = await agent('fx');
    const y = await agent('fy');
    await t.app.parley.database.db.delete(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.rt.deviceId));
    const requested = await x.rt.channels.request(y.address);
    expect(requested.protocol).toBe('mls');
    await openAndTalk(x, y, requested.channel_id, owner, 'ratchet');
  });

  it('a federated channel between two tenants gets MLS too (the claim crosses tenants for the channel party)', async () => {
    const other = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`a2a-sdk-far-${Date.now()}@example.com`) });
    const otherTenant = (await other.createTenant({ name: 'A2A SDK Far' })).tenant_id;
    other.setTenantId(otherTenant);
    const agreement = await owner.proposeFederation({ partner_tenant_id: otherTenant, trust_floor: 0.5, allowed_capabilities: [], expires_at: new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString() });
    await other.acceptFederation(agreement.id);
    const x = await agent('ex', owner, 'enterprise');
    const y = await agent('ey', other, 'enterprise');
    const requested = await x.rt.channels.request(y.address);
    await openAndTalk(x, y, requested.channel_id, other, 'mls');
    const claimed = await t.app.parley.database.db.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.rt.deviceId));
    expect(claimed.filter((k) => k.claimedBy === x.rt.deviceId)).toHaveLength(1);
  });
  it('a responder offline when the owner approves reads the peer keys again on reconnect and opens the channel', async () => {
    const x = await agent('late-x');
    const y = await agent('late-y');
    await y.rt.stop();
    const requested = await x.rt.channels.request(y.address, { protocol: 'ratchet' });
    await owner.approveA2aChannel(requested.channel_id);
    // x sends its handshake while y is away; y missed a2a_channel_approved entirely.
    await waitFor(() => x.rt.channels.get(requested.channel_id)?.status === 'approved', 'x sees the approval');
    const again = await start(y.key, y.dir);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(requested.channel_id, 15_000), again.rt.channels.waitOpen(requested.channel_id, 15_000)]);
    expect(xs).toMatchObject({ open: true, role: 'initiator' });
    expect(ys).toMatchObject({ open: true, role: 'responder', peer_hub_address: x.address });
    const sent = await x.rt.channels.sendText(requested.channel_id, 'you made it');
    const got = await waitFor(() => again.received.find((m) => m.message_id === sent.message_id), 'y decrypts');
    expect(got.content).toEqual({ type: 'text', payload: { text: 'you made it' } });
  });
});

describe('SecureChannels backed by a marketplace rental', () => {
  let t: TestApp;
  const dirs: string[] = [];
  const running: AgentRuntime[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterAll(async () => {
    for (const r of running) await r.stop();
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** An API-key agent of `by`'s tenant with a hub identity (capabilities research, summarize) bound to its device. */
  async function agent(name: string, by: ParleyClient): Promise<Agent & { identityId: string }> {
    const { key } = await by.createApiKey({ name });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-a2a-rent-${name}-`));
    dirs.push(dir);
    const rt = await startApiKeyAgent({ apiKey: key, server: t.baseUrl, stateDir: dir, protection: 'plain', fsync: false, log: () => undefined, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    running.push(rt);
    await rt.ready;
    const received: SecureChannelMessage[] = [];
    rt.channels.on('message', (m) => void received.push(m));
    const address = `rent-${name}-${randomBytes(4).toString('hex')}`;
    const hub = await by.registerHub({ hub_address: address, display_name: name, device_id: rt.deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey), capabilities: ['research', 'summarize'] });
    return { rt, address, dir, key, received, identityId: hub.id };
  }

  async function talk(x: Agent, y: Agent, id: string): Promise<void> {
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(id, 15_000), y.rt.channels.waitOpen(id, 15_000)]);
    expect(xs).toMatchObject({ open: true, status: 'active', role: 'initiator', protocol: 'mls' });
    expect(ys).toMatchObject({ open: true, status: 'active', role: 'responder', protocol: 'mls', peer_hub_address: x.address });
    const sent = await x.rt.channels.sendText(id, `rented ${id}`);
    expect(sent.protocol).toBe('mls');
    expect((await waitFor(() => y.received.find((m) => m.message_id === sent.message_id), 'the rented agent decrypts')).protocol).toBe('mls');
    const reply = await y.rt.channels.sendText(id, `re ${id}`);
    expect(reply.protocol).toBe('mls');
    await waitFor(() => x.received.find((m) => m.message_id === reply.message_id), 'the renter decrypts');
    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, id));
    expect(rows.every((r) => isMlsHeaderBlob(Buffer.from(r.headerBlob!).toString('base64')))).toBe(true);
    const welcome = rows.find((r) => r.messageType === 'key_exchange' && r.senderDeviceId === x.rt.deviceId)!;
    expect(JSON.parse(Buffer.from(welcome.headerBlob!).toString('utf8'))).toMatchObject({ protocol: 'mls', kind: 'welcome' });
  }

  it('opens with mls on both sides, also when a2a_channel_approved reaches the initiator before the REST answer', async () => {
    const op = await operatorAuth(t);
    const devOwner = await newOwner(t, 'Rental Dev');
    const dev = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: devOwner.token });
    dev.setTenantId(devOwner.tenantId);
    const y = await agent('y', dev);
    const tier = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${y.identityId}/tier`, headers: op, payload: { tier: 'certified', reason: 'reviewed' } });
    expect(tier.status, JSON.stringify(tier.body)).toBe(200);
    const listingId = await publishedListing(t, { owner: devOwner, identityId: y.identityId, address: y.address } as Developer);

    const buyerOwner = await newOwner(t, 'Rental Buyer');
    const buyer = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: buyerOwner.token });
    buyer.setTenantId(buyerOwner.tenantId);
    const pm = await t.request({ method: 'PUT', url: '/api/v1/marketplace/payment-method', headers: buyerOwner.auth, payload: { payment_method: 'pm_card_visa' } });
    expect(pm.status, JSON.stringify(pm.body)).toBeLessThan(300);
    const rental = await t.request({ method: 'POST', url: '/api/v1/marketplace/rentals', headers: buyerOwner.auth, payload: { listing_id: listingId } });
    expect(rental.status, JSON.stringify(rental.body)).toBe(201);
    expect(rental.body.status).toBe('active');

    // The approval's socket event is handled before the REST answer reaches request() (held back until then).
    const x = await agent('x', buyer);
    const original = x.rt.client.requestA2aChannel.bind(x.rt.client);
    let held = 0;
    x.rt.client.requestA2aChannel = async (...args: Parameters<typeof original>) => {
      const answer = await original(...args);
      await waitFor(() => x.rt.channels.get(answer.channel_id), 'a2a_channel_approved before the answer');
      held++;
      return answer;
    };
    const requested = await x.rt.channels.request(y.address, { capability: 'research' });
    expect(held).toBe(1);
    expect(requested).toMatchObject({ role: 'initiator', status: 'approved', protocol: 'mls', capability: 'research', own_hub_address: x.address });
    await talk(x, y, requested.channel_id);

    // The ordinary order (whichever comes first) too, for another agent of the renter.
    const x2 = await agent('x2', buyer);
    const second = await x2.rt.channels.request(`did:hub:${y.address.toUpperCase()}`);
    expect(second.protocol).toBe('mls');
    await talk(x2, y, second.channel_id);
  });
});

/** No stored header or ciphertext contains any of `plaintexts` or the handshake marker. */
function expectOpaque(rows: { headerBlob: Buffer | null; ciphertext: Buffer | null }[], plaintexts: string[]): void {
  for (const r of rows) {
    const stored = Buffer.concat([Buffer.from(r.headerBlob ?? []), Buffer.from(r.ciphertext ?? [])]).toString('latin1');
    for (const p of plaintexts) expect(stored).not.toContain(p);
    expect(stored).not.toContain('parley-a2a-key-exchange');
  }
}
