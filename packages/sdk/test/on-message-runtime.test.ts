/**
 * `runAgent` (`node/run-agent.ts`) and `connectOwner` (`node/owner.ts`) against a real server: the
 * handler gets decrypted text and typed content and its replies reach the sender end to end
 * (marked `in_reply_to`); decision requests go to `onDecisionRequest`; a throwing handler is
 * logged without the plaintext and the agent goes on; two runtime agents in a room answer the
 * owner once each and never each other's answers; an API-key agent answers too and resumes from
 * its state directory; an owner device of `connectOwner` keeps its device and sessions across runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import type { Content } from '../src/content/types.js';
import { connectOwner } from '../src/node/owner.js';
import { runAgent, type AgentMessage, type RunAgentOptions } from '../src/node/run-agent.js';
import { KeyFileSource } from '../src/node/sealing-keys.js';
import { readDecisionAnswer } from '../src/secure/decisions.js';
import { restRoomTransport, RoomMessenger } from '../src/secure/rooms.js';
import type { SecureMessage } from '../src/secure/types.js';
import { ownerSide } from '../testing/owner-side.js';
import { waitFor as poll, type Poll } from './wait.js';

const waitFor = <T>(get: Poll<T>, what: string) => poll(get, what, 20_000, 10);
const payloadOf = (m: SecureMessage) => m.content?.payload as Record<string, unknown> | undefined;

describe('runAgent: an agent answering with its own handler', () => {
  let t: TestApp;
  const closers: (() => unknown)[] = [];
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-run-agent-'));
    dirs.push(dir, `${dir}.key`);
    return dir;
  };

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_DEVICE_STATUS_PER_5S: '100' } });
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A tenant with an owner laptop (messenger + socket) listening. */
  async function tenant(label: string) {
    const ownerJwt = await t.ownerToken(`${label}-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    owner.setTenantId((await owner.createTenant({ name: label })).tenant_id);
    const laptop = await ownerSide(owner, ownerJwt, t.baseUrl);
    closers.push(() => laptop.rt.close());
    return { owner, ownerJwt, laptop };
  }

  /** A runtime agent enrolled with an invite of `w`'s owner, approved, online; its log lines collected. */
  async function enrolledAgent(w: Awaited<ReturnType<typeof tenant>>, options: Partial<RunAgentOptions>) {
    const stateDir = tempDir();
    const lines: string[] = [];
    const invite = await w.owner.createInvite({ label: options.name ?? 'runtime agent' });
    const pendingBefore = w.laptop.events.filter((e) => e.event === 'device_pending').length;
    const starting = runAgent({
      server: t.baseUrl,
      invite: invite.token,
      stateDir,
      protection: new KeyFileSource(`${stateDir}.key`),
      fsync: false,
      enroll: { pollIntervalMs: 100, unsafeFastPolling: true },
      log: (l) => lines.push(l),
      ...options,
    });
    starting.catch(() => undefined);
    const pending = await waitFor(() => w.laptop.events.filter((e) => e.event === 'device_pending')[pendingBefore]?.data, 'device_pending');
    await w.owner.approveDevice(pending.device_id);
    const agent = await starting;
    closers.push(() => agent.stop());
    await agent.ready;
    const { conversations } = await w.owner.listConversations({ device_id: w.laptop.od.device_id });
    const conversationId = conversations.find((c) => c.agent_device_id === agent.deviceId)!.conversation_id;
    return { agent, lines, stateDir, conversationId };
  }

  it('refuses an empty state directory without an invite or an API key', async () => {
    const stateDir = tempDir();
    await expect(runAgent({ server: t.baseUrl, stateDir, protection: new KeyFileSource(`${stateDir}.key`), fsync: false, log: () => undefined })).rejects.toMatchObject({
      name: 'AgentStateError',
      message: expect.stringMatching(/holds no agent yet: give an invite token/),
    });
  });

  it('hands decrypted text and typed content to onMessage; reply answers the sender end to end; decisions go to onDecisionRequest', async () => {
    const w = await tenant('Runtime Co');
    const seen: AgentMessage[] = [];
    const decisions: string[] = [];
    const { agent, conversationId } = await enrolledAgent(w, {
      onMessage: async (m, reply) => {
        seen.push(m);
        if (m.text !== undefined) await reply(`answer to ${m.text}`);
        else await reply({ type: 'action_confirmation', payload: { action: `saw ${m.content?.type}`, status: 'success' } });
      },
      onDecisionRequest: (request) => {
        decisions.push(request.title);
        return request.title === 'skip me' ? undefined : 'b';
      },
    });
    const { messenger, received } = w.laptop;

    const hello = await messenger.sendText(conversationId, 'hello agent');
    await waitFor(() => received.length === 1, 'the text answer');
    expect(seen[0]).toMatchObject({ text: 'hello agent', conversation_id: conversationId, message_id: hello.message_id, sender_device_id: w.laptop.od.device_id });
    expect(received[0]!.content).toEqual({ type: 'text', payload: { text: 'answer to hello agent', in_reply_to: hello.message_id } });
    expect(received[0]!.sender_device_id).toBe(agent.deviceId);

    const alert: Content = { type: 'status_alert', payload: { title: 'disk almost full', severity: 'warning' } };
    const sentAlert = await messenger.send(conversationId, alert);
    await waitFor(() => received.length === 2, 'the answer to the alert');
    expect(seen[1]).toMatchObject({ text: undefined, content: alert });
    expect(received[1]!.content).toEqual({ type: 'action_confirmation', payload: { action: 'saw status_alert', status: 'success', in_reply_to: sentAlert.message_id } });

    const options = [
      { option_id: 'a', label: 'A', risk_level: 'high' as const },
      { option_id: 'b', label: 'B', risk_level: 'low' as const },
    ];
    const asked = await messenger.send(conversationId, { type: 'decision_request', payload: { title: 'pick one', options } });
    await waitFor(() => received.length === 3, 'the decision answer');
    expect(readDecisionAnswer(received[2]!.content)).toMatchObject({ option_id: 'b', in_reply_to: asked.message_id });

    // Left unanswered: the next answer the owner gets is the one to the text sent after it.
    await messenger.send(conversationId, { type: 'decision_request', payload: { title: 'skip me', options } });
    await messenger.sendText(conversationId, 'after the skipped one');
    await waitFor(() => received.length === 4, 'the answer after the skipped decision');
    expect(payloadOf(received[3]!)?.text).toBe('answer to after the skipped one');
    expect(decisions).toEqual(['pick one', 'skip me']);
    expect(seen.map((m) => m.content?.type)).toEqual(['text', 'status_alert', 'text']); // decisions never reached onMessage
  });

  it('a handler that throws is logged without the plaintext and the agent goes on', async () => {
    const w = await tenant('Throwing Co');
    const { lines, conversationId } = await enrolledAgent(w, {
      onMessage: async (m, reply) => {
        if (m.text === 'secret boom') throw new Error('handler exploded');
        await reply(`ok ${m.text}`);
      },
    });
    const { messenger, received } = w.laptop;
    const boom = await messenger.sendText(conversationId, 'secret boom');
    await messenger.sendText(conversationId, 'still there?');
    await waitFor(() => received.length === 1, 'the answer after the failure');
    expect(payloadOf(received[0]!)?.text).toBe('ok still there?');
    const warning = lines.find((l) => l.includes('handler failed'));
    expect(warning).toBe(`warning: the handler failed on message ${boom.message_id}: handler exploded; going on with the next message`);
    expect(lines.filter((l) => l.includes('handler failed'))).toHaveLength(1);
    expect(lines.filter((l) => /secret boom|still there/.test(l))).toEqual([]); // content types and ids only
    expect(lines).toContain(`← [${conversationId.slice(0, 8)}] text message via ${received[0]!.protocol}`);
  });

  it('two runtime agents in a room answer the owner once each and never answer each other', async () => {
    const w = await tenant('Room Co');
    const calls = { a: [] as AgentMessage[], b: [] as AgentMessage[] };
    const chatty = (who: 'a' | 'b'): Partial<RunAgentOptions> => ({
      name: `agent-${who}`,
      onMessage: async (m, reply) => {
        calls[who].push(m);
        await reply(`${who} heard: ${m.text ?? m.content?.type}`);
      },
    });
    const a = await enrolledAgent(w, chatty('a'));
    const b = await enrolledAgent(w, chatty('b'));
    const rawA: SecureMessage[] = [];
    const rawB: SecureMessage[] = [];
    a.agent.messenger.on('message', (m) => void rawA.push(m));
    b.agent.messenger.on('message', (m) => void rawB.push(m));

    // The owner laptop in the room: sends over REST, reads on its socket.
    const laptop = w.laptop;
    const ownerRooms = await RoomMessenger.open({ messenger: laptop.messenger, store: laptop.store, client: w.owner, transport: restRoomTransport(w.owner, laptop.od.device_id) });
    ownerRooms.attach(laptop.rt, { transport: false });
    const room = await w.owner.createRoom({ name: 'ops', member_device_ids: [laptop.od.device_id, a.agent.deviceId, b.agent.deviceId] });
    await waitFor(() => [ownerRooms, a.agent.rooms, b.agent.rooms].every((r) => r.peers(room.room_id).size === 2), 'every member registers the room');

    const roomAnswers = () => laptop.received.filter((m) => m.room_id === room.room_id);
    const first = await ownerRooms.sendText(room.room_id, 'hello room');
    await waitFor(() => roomAnswers().length === 2, 'both agents answer the owner');
    expect(roomAnswers().map((m) => payloadOf(m)).sort((x, y) => String(x?.text).localeCompare(String(y?.text)))).toEqual([
      { text: 'a heard: hello room', in_reply_to: first.room_message_id },
      { text: 'b heard: hello room', in_reply_to: first.room_message_id },
    ]);
    // Each agent decrypted the other's answer (after its handler hook had its turn) and did not answer it.
    await waitFor(() => rawA.some((m) => m.sender_device_id === b.agent.deviceId) && rawB.some((m) => m.sender_device_id === a.agent.deviceId), "each agent reads the other's answer");
    expect(calls.a.map((m) => m.text)).toEqual(['hello room']);
    expect(calls.b.map((m) => m.text)).toEqual(['hello room']);

    const second = await ownerRooms.sendText(room.room_id, 'again');
    await waitFor(() => roomAnswers().length === 4, 'both agents answer the second message');
    await waitFor(() => rawA.filter((m) => m.sender_device_id === b.agent.deviceId).length === 2 && rawB.filter((m) => m.sender_device_id === a.agent.deviceId).length === 2, 'the second answers read');
    expect(roomAnswers().slice(2).every((m) => payloadOf(m)?.in_reply_to === second.room_message_id)).toBe(true);
    expect(calls.a.map((m) => m.text)).toEqual(['hello room', 'again']);
    expect(calls.b.map((m) => m.text)).toEqual(['hello room', 'again']);
    expect(calls.a.every((m) => m.sender_device_id === laptop.od.device_id && m.room_id === room.room_id)).toBe(true);
    expect(roomAnswers()).toHaveLength(4);
    await ownerRooms.close();
  });

  it('an API-key agent answers with the handler, and resumes from its state directory without the key', async () => {
    const w = await tenant('Key Co');
    const { key } = await w.owner.createApiKey({ name: 'runtime-key-agent' });
    const stateDir = tempDir();
    const start = (apiKey?: string) =>
      runAgent({ server: t.baseUrl, apiKey, stateDir, protection: new KeyFileSource(`${stateDir}.key`), fsync: false, log: () => undefined, onMessage: (m, reply) => reply(`key agent: ${m.text}`) });
    const agent = await start(key);
    await agent.ready;
    expect(agent.auth).toBe('api_key');
    const conversationId = agent.ownerConversations()[0]!;
    await w.laptop.messenger.sendText(conversationId, 'first');
    await waitFor(() => w.laptop.received.length === 1, 'the API-key agent answers');
    expect(payloadOf(w.laptop.received[0]!)?.text).toBe('key agent: first');
    await agent.stop();

    const resumed = await start();
    closers.push(() => resumed.stop());
    await resumed.ready;
    expect(resumed.deviceId).toBe(agent.deviceId);
    await w.laptop.messenger.sendText(conversationId, 'second');
    await waitFor(() => w.laptop.received.length === 2, 'the resumed agent answers');
    expect(payloadOf(w.laptop.received[1]!)?.text).toBe('key agent: second');
  });

  it('connectOwner: an owner device that asks its agent, kept across runs', async () => {
    const w = await tenant('Owner Client Co');
    const { agent } = await enrolledAgent(w, { name: 'helper', onMessage: (m, reply) => reply(`helper: ${m.text}`) });
    const stateDir = tempDir();
    const connect = () => connectOwner({ server: t.baseUrl, ownerToken: w.ownerJwt, stateDir, protection: new KeyFileSource(`${stateDir}.key`), fsync: false });

    const first = await connect();
    const chat = await first.conversationWith('helper');
    expect(await first.conversationWith()).toBe(chat);
    expect(await first.conversationWith(agent.deviceId)).toBe(chat);
    await expect(first.conversationWith('nobody')).rejects.toThrow(/no ACTIVE agent named nobody/);
    const answer = await first.ask(chat, 'one');
    expect(answer.content).toMatchObject({ type: 'text', payload: { text: 'helper: one' } });
    await first.close();

    const again = await connect();
    closers.push(() => again.close());
    expect(again.deviceId).toBe(first.deviceId);
    expect(await again.conversationWith()).toBe(chat);
    const next = await again.ask(chat, 'two');
    expect(next.content).toMatchObject({ type: 'text', payload: { text: 'helper: two' } });
    expect(again.messenger.sessionInfo(chat)!.sessions).toBe(1); // the same end-to-end session
    const owners = (await w.owner.listDevices()).devices.filter((d) => d.kind === 'owner');
    expect(owners).toHaveLength(2); // the laptop and this one device
  });
});
