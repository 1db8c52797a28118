/**
 * A2A over Parley, end to end with both official SDK sides: the official `@a2a-js/sdk` client
 * talks to agent X's local plugin (`POST {plugin}/a2a/{hub_address}`), which carries each call
 * end-to-end encrypted over the A2A channel to agent Y, whose plugin forwards it to an official
 * `@a2a-js/sdk` server (express) on loopback (`a2aUpstream`); answers and stream events come back
 * in order. Parley's own refusals are JSON-RPC errors naming the cause; the database holds no
 * plaintext of the calls.
 */
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { schema, startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { buildAgentCard, ownerKeyId, signAgentCard } from '../src/a2a-card/index.js';
import { bytesToBase64, ed25519Keygen, ed25519Sign } from '../src/crypto/primitives.js';
import { A2A_PARLEY_ERRORS } from '../src/node/a2a-errors.js';
import { main } from '../src/node/agent-cli.js';
import { startPlugin } from '../src/node/plugin.js';
import { heldCall, officialClient, PluginAgents, rpcError, sendRequest, startUpstream, text, type PluginAgent, type PluginAgentOptions, type UpstreamLog } from './a2a-fixtures.js';
import { waitFor } from './wait.js';
const { a2aMessages, hubIdentities } = schema;

const CANARY = `canary-${randomBytes(8).toString('hex')}`;

type Agent = PluginAgent;

describe('A2A through the local plugin', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let upstream: { url: string; server: Server; log: UpstreamLog };
  const dirs: string[] = [];
  const stops: (() => Promise<unknown>)[] = [];
  let x: Agent;
  let y: Agent;

  let agents: PluginAgents;
  const agent = (name: string, opts: PluginAgentOptions = {}): Promise<Agent> => agents.start(owner, t.baseUrl, name, opts);

  /** The official client, built from the card `from`'s plugin serves for `to`. */
  const clientOf = (from: Agent, to: Agent | string): Promise<Client> => officialClient(from.plugin.url, from.plugin.token, typeof to === 'string' ? to : to.address);

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`a2a-plugin-${Date.now()}@example.com`) });
    owner.setTenantId((await owner.createTenant({ name: 'A2A plugin' })).tenant_id);
    upstream = await startUpstream();
    agents = new PluginAgents(t);
    x = await agent('x');
    y = await agent('y', { a2aUpstream: upstream.url });
  });
  afterAll(async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    await agents?.close();
    upstream?.server.close();
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('serves the remote card pointed at the plugin; the first call requests the channel and names it pending', async () => {
    const client = await clientOf(x, y);
    const card = await client.getAgentCard();
    expect(card.name).toBe('Agent y');
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${x.plugin.url}/a2a/${y.address}`, protocolBinding: 'JSONRPC' });
    expect(card.capabilities?.streaming).toBe(true);

    const pending = await rpcError(client.sendMessage(sendRequest('hello')));
    expect(pending.code).toBe(A2A_PARLEY_ERRORS.channel_pending);
    expect(pending.message).toMatch(/pending: the owner of .* must approve it/);
    const channel = x.rt.channels.findByPeer(y.address)!;
    expect(channel.status).toBe('pending');
    await owner.approveA2aChannel(channel.channel_id);
    const [xs, ys] = await Promise.all([x.rt.channels.waitOpen(channel.channel_id, 15_000), y.rt.channels.waitOpen(channel.channel_id, 15_000)]);
    expect(xs?.open && ys?.open).toBe(true);
  });

  it('send: the official client gets the official server answer through both plugins', async () => {
    const client = await clientOf(x, y);
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const answer = await client.sendMessage(sendRequest(`secret ${CANARY}`), { serviceParameters: { traceparent } });
    expect('messageId' in answer && answer.role).toBe(Role.ROLE_AGENT);
    expect(text(answer as Message)).toBe(`echo: secret ${CANARY}`);
    // The caller's trace reaches the upstream and is on the relayed (opaque) messages.
    const traceId = traceparent.split('-')[1]!;
    expect(upstream.log.traceparents.some((h) => h.split('-')[1] === traceId)).toBe(true);
    const traced = await t.app.parley.database.db.select().from(a2aMessages).where(like(a2aMessages.traceparent, `00-${traceId}-%`));
    expect(traced.length).toBe(2);

    // Each side's plugin reports one svc.task span and one audit entry in that trace: the caller's
    // span is the child of the client's, the answerer's the child of the caller's.
    await Promise.all([x.plugin.close(), y.plugin.close()]);
    x.plugin = await startPlugin({ backend: x.rt, stateDir: x.dir, port: 0, fsync: false, a2a: { answerTimeoutMs: 4000, openTimeoutMs: 3000 } });
    y.plugin = await startPlugin({ backend: y.rt, stateDir: y.dir, port: 0, fsync: false, a2aUpstream: upstream.url, a2a: { answerTimeoutMs: 4000, openTimeoutMs: 3000 } });
    stops.push(() => x.plugin.close(), () => y.plugin.close());
    const [callerSpans, answerSpans] = await Promise.all([x, y].map(async (a) => (await owner.listTelemetry(a.address, { trace_id: traceId })).spans));
    expect(callerSpans).toHaveLength(1);
    expect(answerSpans).toHaveLength(1);
    const [callSpan, answerSpan] = [callerSpans![0]!, answerSpans![0]!];
    expect(callSpan).toMatchObject({ name: 'svc.task', kind: 3, status: 'ok', parent_span_id: traceparent.split('-')[2] });
    expect(callSpan.attributes).toMatchObject({ 'svc.task': 'a2a.call', 'rpc.method': 'SendMessage', 'a2a.peer': y.address, 'a2a.outcome': 'answered', 'gen_ai.operation.name': 'invoke_agent' });
    expect(answerSpan).toMatchObject({ name: 'svc.task', kind: 2, status: 'ok', parent_span_id: callSpan.span_id });
    expect(answerSpan.attributes).toMatchObject({ 'svc.task': 'a2a.answer', 'a2a.peer': x.address, 'parley.channel_id': callSpan.attributes['parley.channel_id'] });
    expect(upstream.log.traceparents).toContain(`00-${traceId}-${answerSpan.span_id}-01`);
    const audited = (await owner.listAuditEvents({ type: 'agent.action', limit: 200 })).events.filter((e) => JSON.stringify(e.data).includes(traceId));
    expect(audited.map((e) => (e.data as { action: string }).action).sort()).toEqual(['a2a.answer', 'a2a.call']);
    expect(audited.map((e) => e.subject).sort()).toEqual([x.rt.deviceId, y.rt.deviceId].sort());
    expect(JSON.stringify(audited)).not.toContain(CANARY);
  });

  it('streaming: events arrive in order', async () => {
    const client = await clientOf(x, y);
    const events: StreamResponse[] = [];
    for await (const e of client.sendMessageStream(sendRequest(`stream 5 ${CANARY}`))) events.push(e);
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds[0]).toBe('task');
    const updates = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [text(e.payload.value.status?.message)] : []));
    expect(updates).toEqual(['chunk 1', 'chunk 2', 'chunk 3', 'chunk 4', 'chunk 5', 'done']);
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a caller that goes away mid-stream aborts the upstream request', async () => {
    const client = await clientOf(x, y);
    const abort = new AbortController();
    const before = upstream.log.aborted;
    const stream = client.sendMessageStream(sendRequest('wait, streaming'), { signal: abort.signal });
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    abort.abort();
    await stream.next().catch(() => undefined);
    await waitFor(() => upstream.log.aborted > before, 'the upstream request aborted', 15_000);
    const task = first.value!.payload!.value as Task;
    expect((await client.cancelTask({ id: task.id, tenant: '', metadata: undefined } as never)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('get and cancel a task', async () => {
    const client = await clientOf(x, y);
    const started = (await client.sendMessage(sendRequest('wait', true))) as Task;
    expect(started.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const got = await client.getTask({ id: started.id, historyLength: 0, tenant: '' } as never);
    expect(got.id).toBe(started.id);
    const canceled = await client.cancelTask({ id: started.id, tenant: '', metadata: undefined } as never);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ id: started.id, tenant: '' } as never)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('the database holds no plaintext of the calls', async () => {
    const channelId = x.rt.channels.findByPeer(y.address)!.channel_id;
    const rows = await t.app.parley.database.db.select().from(a2aMessages).where(eq(a2aMessages.channelId, channelId));
    // Requests, answers and each stream event travelled as channel messages (beyond the two handshakes).
    expect(rows.filter((r) => r.messageType !== 'key_exchange').length).toBeGreaterThanOrEqual(12);
    const scan = await scanForPlaintext(t.app.parley.database, [CANARY]);
    expect(scan.columns.length).toBeGreaterThan(0);
    expect(scan.leaks).toEqual([]);
  });

  it('a caller below the tier floor gets a JSON-RPC error naming it', async () => {
    const low = await agent('low', { tier: 'unverified' });
    const err = await rpcError((await clientOf(low, y)).sendMessage(sendRequest('hi')));
    expect(err.code).toBe(A2A_PARLEY_ERRORS.tier_below_floor);
    expect(err.message).toMatch(/trust tier/);
  });

  it('an answering agent without an upstream, and one whose upstream is down, are named', async () => {
    const down = await agent('down', { a2aUpstream: 'http://127.0.0.1:9/' });
    const none = await agent('none');
    for (const [peer, pattern] of [
      [down, /not reachable/],
      [none, /serves no A2A upstream/],
    ] as const) {
      const client = await clientOf(x, peer);
      await rpcError(client.sendMessage(sendRequest('hi')));
      const id = x.rt.channels.findByPeer(peer.address)!.channel_id;
      await owner.approveA2aChannel(id);
      await x.rt.channels.waitOpen(id, 15_000);
      await peer.rt.channels.waitOpen(id, 15_000);
      const err = await rpcError(client.sendMessage(sendRequest('hi')));
      expect(err.code).toBe(A2A_PARLEY_ERRORS.upstream_down);
      expect(err.message).toMatch(pattern);
    }
  });

  it('parley-agent run --a2a-upstream answers through the CLI; a non-loopback upstream is refused', async () => {
    const lines: string[] = [];
    let stop: (() => void) | undefined;
    const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l), onSignal: (h: () => void) => void (stop = h), env: {} };
    expect(await main(['run', '--api-key', 'svc_agent_sk_dev_' + '0'.repeat(64), '--insecure-plain-store', '--a2a-upstream', 'http://example.com/'], io)).toBe(2);
    expect(lines.join('\n')).toMatch(/--a2a-upstream must be on loopback/);

    const { key } = await owner.createApiKey({ name: 'cli' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-a2a-plugin-cli-'));
    dirs.push(dir);
    const exit = main(['run', '--api-key', key, '--server', t.baseUrl, '--state-dir', dir, '--insecure-plain-store', '--plugin-port', '0', '--a2a-upstream', upstream.url], io);
    stops.push(async () => {
      stop?.();
      return exit;
    });
    const deviceId = await waitFor(() => /API key registered: device ([0-9a-f-]{36})/.exec(lines.join('\n'))?.[1], 'the CLI agent registered', 15_000);
    await waitFor(() => lines.some((l) => l.includes('plugin listening on')), 'the CLI plugin', 15_000);
    const address = `a2a-cli-${randomBytes(4).toString('hex')}`;
    await owner.registerHub({ hub_address: address, display_name: 'Agent cli', device_id: deviceId, public_key: bytesToBase64(ed25519Keygen().publicKey) });
    const client = await clientOf(x, address);
    expect((await rpcError(client.sendMessage(sendRequest('hi')))).code).toBe(A2A_PARLEY_ERRORS.channel_pending);
    const id = x.rt.channels.findByPeer(address)!.channel_id;
    await owner.approveA2aChannel(id);
    expect((await x.rt.channels.waitOpen(id, 15_000))?.open).toBe(true);
    const answer = (await waitFor(() => client.sendMessage(sendRequest('via the cli')).catch(() => undefined), 'the CLI agent answers', 15_000)) as Message;
    expect(text(answer)).toBe('echo: via the cli');
    stop!();
    expect(await exit).toBe(0);
  });

  it('a signed card is served verified; a card tampered in the database is refused, and so are calls', async () => {
    const carded = await agent('carded', { a2aUpstream: upstream.url });
    const signed = signAgentCard(buildAgentCard({ hubAddress: carded.address, displayName: 'Agent carded', description: 'signed card', capabilities: ['research'] }), {
      kid: ownerKeyId(carded.address),
      sign: (m) => ed25519Sign(m, carded.key.secretKey),
    });
    await owner.publishAgentCard(carded.address, signed as never);
    const cardUrl = `${x.plugin.url}/a2a/${carded.address}/.well-known/agent-card.json`;
    const get = () => fetch(cardUrl, { headers: { authorization: `Bearer ${x.plugin.token}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
    const ok = await get();
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: 'Agent carded', description: 'signed card', supportedInterfaces: [{ url: `${x.plugin.url}/a2a/${carded.address}` }] });
    expect(ok.body.skills.map((k: { name: string }) => k.name)).toEqual(['research']);

    await t.app.parley.database.db.update(hubIdentities).set({ agentCard: { ...signed, description: 'tampered' } }).where(eq(hubIdentities.hubAddress, carded.address));
    const bad = await get();
    expect(bad.status).toBe(502);
    expect(bad.body.detail).toMatch(/card signature invalid/);
    // The official client cannot even be built from a refused card; a raw JSON-RPC call is refused too.
    const res = await fetch(`${x.plugin.url}/a2a/${carded.address}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${x.plugin.token}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }),
    });
    const { id, error: err } = (await res.json()) as { id: number; error: { code: number; message: string } };
    expect(id).toBe(7);
    expect(err.code).toBe(A2A_PARLEY_ERRORS.card_signature_invalid);
    expect(err.message).toMatch(/Agent Card of .* is refused: card signature invalid/);
    // No channel was requested for a refused card.
    expect(x.rt.channels.findByPeer(carded.address)).toBeUndefined();
  });

  it('a policy hold is named; once the owner approves, the call reaches the upstream', async () => {
    const hold = await owner.createPolicy({ name: 'hold a2a text', action: 'hold', conditions: { message_types: ['text'] } });
    try {
      const { asked, heldId } = await heldCall(await clientOf(x, y), upstream.log.heard);
      await owner.approveHeldMessage(heldId);
      await waitFor(() => upstream.log.heard.includes(asked), 'the approved call reaches the upstream', 15_000);
    } finally {
      await owner.updatePolicy(hold.policy_id, { enabled: false });
    }
  });

  it('a peer that does not answer is named offline with a retry hint', async () => {
    const client = await clientOf(x, y);
    await y.plugin.close();
    await y.rt.stop();
    const err = await rpcError(client.sendMessage(sendRequest('anyone?')));
    expect(err.code).toBe(A2A_PARLEY_ERRORS.peer_offline);
    expect(err.message).toMatch(/did not answer within .* retry later/);
  });
});
