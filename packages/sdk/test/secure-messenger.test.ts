/**
 * SecureMessenger (contract §1.2–1.3, §2.4, §4.5, §6.1) against a real server listening on a port:
 * X3DH + Double Ratchet and MLS conversations both ways, both ends starting at once, a restart in
 * the middle (new messenger from the same FileSessionStore), and crashes on either side of the
 * state write (before: the message is read again from the service; after: it is handed over again
 * from the saved state) — each without loss or duplicates.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { activate, enroll } from '../src/client/enrollment.js';
import type { DecisionRequest } from '../src/content/types.js';
import { DeviceIdentity } from '../src/crypto/keys.js';
import { FileSessionStore } from '../src/node/file-store.js';
import { nodeWebSocket } from '../src/node/ws.js';
import { RealtimeClient } from '../src/realtime/client.js';
import { conversationCatchUp, deviceCatchUp } from '../src/realtime/catch-up.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import { decisionAnswer, readDecisionAnswer } from '../src/secure/decisions.js';
import { ownerPeerResolver, restTransport } from '../src/secure/transport.js';
import { SecureMessengerError, type SecureMessage, type SecureMlsOptions, type SessionEvent } from '../src/secure/types.js';
import { MLS_CIPHERSUITE } from '../src/mls/ciphersuites.js';
import { MemorySessionStore, type SessionStore } from '../src/storage.js';
import { sleep, waitFor } from './wait.js';

/** A store that can be told to fail (before writing) or to hang forever after writing: a crash on either side of the write. */
class CrashingStore implements SessionStore {
  mode: 'ok' | 'fail-before-write' | 'hang-after-write' = 'ok';
  saves = 0;
  constructor(private readonly inner: SessionStore) {}
  load(id: string) {
    return this.inner.load(id);
  }
  delete(id: string) {
    return this.inner.delete(id);
  }
  async save(id: string, state: string): Promise<void> {
    this.saves++;
    if (this.mode === 'fail-before-write') throw new Error('simulated crash before the state write');
    await this.inner.save(id, state);
    if (this.mode === 'hang-after-write') await new Promise(() => undefined);
  }
}

/** One side of a conversation: its messenger, realtime client and what it received. */
interface Side {
  messenger: SecureMessenger;
  rt: RealtimeClient;
  received: SecureMessage[];
  errors: SecureMessengerError[];
  sessions: SessionEvent[];
  texts(): string[];
}

interface World {
  owner: ParleyClient;
  ownerJwt: string;
  ownerIdentity: DeviceIdentity;
  agent: ParleyClient;
  agentIdentity: DeviceIdentity;
  conversationId: string;
}

describe('SecureMessenger against a real server', () => {
  let t: TestApp;
  const cleanups: (() => unknown)[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_DEVICE_STATUS_PER_5S: '1000' } });
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-secure-'));
    dirs.push(d);
    return d;
  };

  let n = 0;
  /** Owner tenant + owner device, an agent enrolled, approved and activated. */
  async function world(): Promise<World> {
    const ownerJwt = await t.ownerToken(`secure-${++n}-${Date.now()}@example.com`);
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    await owner.createTenant({ name: `Secure ${n}` });
    const ownerKeys = DeviceIdentity.generate();
    const od = await owner.registerOwnerDevice({ ...ownerKeys.publicKeys, name: 'laptop' });
    owner.setOwnerDeviceId(od.device_id);
    const invite = await owner.createInvite();
    const agentKeys = DeviceIdentity.generate();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const enrolled = await enroll(agent, invite.token, { identityPublicKey: agentKeys.identityPublicKeyHex, ephemeralPublicKey: agentKeys.ephemeralPublicKeyHex, sign: (m) => agentKeys.sign(m) });
    await owner.approveDevice(enrolled.device_id);
    const act = await activate(agent, enrolled.device_id, (m) => agentKeys.sign(m));
    agent.setDeviceToken(act.device_jwt);
    return {
      owner,
      ownerJwt,
      ownerIdentity: ownerKeys.withDeviceId(od.device_id),
      agent,
      agentIdentity: agentKeys.withDeviceId(enrolled.device_id),
      conversationId: act.conversation_id!,
    };
  }

  function watch(messenger: SecureMessenger, rt: RealtimeClient): Side {
    const side: Side = { messenger, rt, received: [], errors: [], sessions: [], texts: () => side.received.map((m) => (m.content?.type === 'text' ? m.content.payload.text : `<${m.content?.type}>`)) };
    messenger.on('message', (m) => void side.received.push(m));
    messenger.on('error', (e) => void side.errors.push(e));
    messenger.on('session', (e) => void side.sessions.push(e));
    return side;
  }

  /** The agent side: device JWT, device-wide catch-up, realtime transport. */
  async function agentSide(w: World, store: SessionStore, mls: boolean | SecureMlsOptions, extra: (m: SecureMessenger) => void = () => undefined): Promise<Side> {
    const messenger = await SecureMessenger.open({ identity: w.agentIdentity, store, client: w.agent, mls });
    const ownerKeys = { device_id: w.ownerIdentity.deviceId!, ...w.ownerIdentity.publicKeys };
    await messenger.addConversation(w.conversationId, ownerKeys);
    const source = deviceCatchUp(w.agent, w.agentIdentity.deviceId!);
    const rt = new RealtimeClient({ url: t.baseUrl, token: () => w.agent.currentDeviceToken(), WebSocket: nodeWebSocket(), catchUp: source, initialCursors: messenger.initialCursors(source) });
    messenger.attach(rt);
    const side = watch(messenger, rt);
    extra(messenger);
    await messenger.start();
    await rt.connect();
    cleanups.push(() => rt.close());
    return side;
  }

  /** The owner side: owner JWT + device, per-conversation catch-up, REST transport, peer resolved from the service. */
  async function ownerSide(w: World, store: SessionStore, mls: boolean): Promise<Side> {
    const deviceId = w.ownerIdentity.deviceId!;
    const messenger = await SecureMessenger.open({ identity: w.ownerIdentity, store, client: w.owner, mls, resolvePeer: ownerPeerResolver(w.owner, deviceId), transport: restTransport(w.owner, deviceId) });
    const source = conversationCatchUp(w.owner, w.conversationId);
    const rt = new RealtimeClient({ url: t.baseUrl, token: w.ownerJwt, deviceId, WebSocket: nodeWebSocket(), catchUp: source, initialCursors: messenger.initialCursors(source) });
    messenger.attach(rt, { transport: false });
    const side = watch(messenger, rt);
    await messenger.start();
    await rt.connect();
    cleanups.push(() => rt.close());
    return side;
  }

  /** Wait until the side has no write in progress (the delivered message left the pending list). */
  async function quiet(side: Side): Promise<void> {
    await waitFor(() => side.messenger.pendingCount === 0, 'pending list emptied');
    await side.messenger.flush(); // the emptied pending list is written (else it waits for the next write)
    await side.rt.settled();
    await sleep(50);
  }

  /** Close a side as a process exit would: socket first, then the messenger. */
  async function stop(side: Side): Promise<void> {
    side.rt.close();
    await side.messenger.close();
  }

  const decision: DecisionRequest = {
    title: 'Deploy release 1.4?',
    description: 'All checks passed.',
    options: [
      { option_id: 'deploy', label: 'Deploy now', risk_level: 'medium' },
      { option_id: 'wait', label: 'Wait until Monday', risk_level: 'low', is_default: true },
    ],
  };

  describe.each([
    { protocol: 'x3dh-dr' as const, mls: false },
    { protocol: 'mls' as const, mls: true },
  ])('$protocol', ({ protocol, mls }) => {
    it('conversation both ways, structured content, one session on both ends', async () => {
      const w = await world();
      const agent = await agentSide(w, new MemorySessionStore(), mls);
      const owner = await ownerSide(w, new MemorySessionStore(), mls);
      if (mls) expect((await w.owner.keyPackageCount(w.agentIdentity.deviceId!)).available).toBeGreaterThanOrEqual(3);

      const first = await owner.messenger.sendText(w.conversationId, 'hello agent');
      expect(first.protocol).toBe(protocol);
      await owner.messenger.sendText(w.conversationId, 'second from owner');
      await waitFor(() => agent.received.length === 2, 'agent reads 2');
      expect(agent.texts()).toEqual(['hello agent', 'second from owner']);
      expect(agent.received.every((m) => m.protocol === protocol && m.sender_device_id === w.ownerIdentity.deviceId && !m.redelivered)).toBe(true);

      await agent.messenger.sendText(w.conversationId, 'hello owner');
      const asked = await agent.messenger.send(w.conversationId, { type: 'decision_request', payload: decision }, { priority: 'high' });
      await waitFor(() => owner.received.length === 2, 'owner reads 2');
      expect(owner.texts()).toEqual(['hello owner', '<decision_request>']);
      const request = owner.received[1]!;
      expect(request).toMatchObject({ message_id: asked.message_id, message_type: 'decision_request', priority: 'high' });
      expect(request.content).toEqual({ type: 'decision_request', payload: decision });

      // The owner answers end to end; the agent reads the answer.
      await owner.messenger.send(w.conversationId, decisionAnswer(decision, request.message_id, 'deploy'));
      await waitFor(() => agent.received.length === 3, 'agent reads the answer');
      expect(readDecisionAnswer(agent.received[2]!.content)).toMatchObject({ option_id: 'deploy', in_reply_to: asked.message_id, status: 'success' });

      const a = agent.messenger.sessionInfo(w.conversationId)!;
      const o = owner.messenger.sessionInfo(w.conversationId)!;
      expect(a).toMatchObject({ protocol, initiator: 'peer', established: true, sessions: 1 });
      expect(o).toMatchObject({ protocol, initiator: 'local', established: true, sessions: 1 });
      expect(a.session_id).toBe(o.session_id);
      expect(agent.errors).toEqual([]);
      expect(owner.errors).toEqual([]);
      expect(agent.messenger.peerFingerprint(w.conversationId)).toBe(w.ownerIdentity.fingerprint);

      // What the service stored is ciphertext only.
      const history = await w.owner.conversationMessages(w.conversationId, { limit: 50 });
      expect(history.messages.length).toBe(mls ? 6 : 5); // + the MLS Welcome
      for (const m of history.messages) {
        for (const field of [m.header_blob, m.ciphertext]) {
          const bytes = Buffer.from(field, 'base64').toString('latin1');
          for (const secret of ['hello agent', 'hello owner', 'Deploy release', 'Wait until Monday']) expect(bytes).not.toContain(secret);
        }
      }
    });

    it('post-quantum when both ends run it (PQXDH, X-Wing); classical with an older peer', async () => {
      const talk = async (w: World, agentMls: boolean | SecureMlsOptions) => {
        const agent = await agentSide(w, new MemorySessionStore(), agentMls);
        const owner = await ownerSide(w, new MemorySessionStore(), mls);
        await owner.messenger.sendText(w.conversationId, 'ping');
        await waitFor(() => agent.received.length === 1, 'agent reads ping');
        await agent.messenger.sendText(w.conversationId, 'pong');
        await waitFor(() => owner.received.length === 1, 'owner reads pong');
        expect([agent.errors, owner.errors]).toEqual([[], []]);
        return [owner.messenger.sessionInfo(w.conversationId)!, agent.messenger.sessionInfo(w.conversationId)!];
      };
      const both = await talk(await world(), mls);
      expect(both.map((i) => [i.protocol, i.post_quantum])).toEqual([[protocol, true], [protocol, true]]);

      // The agent as an older client: no PQ prekey in its identity, MLS with the classical suite only.
      const w = await world();
      const { pq_prekey_seed: _seed, ...old } = w.agentIdentity.toJSON();
      w.agentIdentity = DeviceIdentity.fromJSON(old);
      const older = await talk(w, mls ? { ciphersuites: [MLS_CIPHERSUITE] } : false);
      expect(older.map((i) => [i.protocol, i.post_quantum])).toEqual([[protocol, false], [protocol, false]]);
    });

    it('both ends starting at once converge on one session without losing a message', async () => {
      const w = await world();
      const agent = await agentSide(w, new MemorySessionStore(), mls);
      const owner = await ownerSide(w, new MemorySessionStore(), mls);
      await Promise.all([agent.messenger.sendText(w.conversationId, 'agent first'), owner.messenger.sendText(w.conversationId, 'owner first')]);
      await waitFor(() => agent.received.length === 1 && owner.received.length === 1, 'crossing first messages');
      await agent.messenger.sendText(w.conversationId, 'agent second');
      await owner.messenger.sendText(w.conversationId, 'owner second');
      await waitFor(() => agent.received.length === 2 && owner.received.length === 2, 'second messages');
      expect(agent.texts()).toEqual(['owner first', 'owner second']);
      expect(owner.texts()).toEqual(['agent first', 'agent second']);
      const a = agent.messenger.sessionInfo(w.conversationId)!;
      const o = owner.messenger.sessionInfo(w.conversationId)!;
      expect(a.session_id).toBe(o.session_id);
      expect(a.protocol).toBe(protocol);
      expect([agent.errors, owner.errors]).toEqual([[], []]);
    });

    it('a restart in the middle (new messenger from the same FileSessionStore) resumes without loss or duplicates', async () => {
      const w = await world();
      const dir = tempDir();
      let agent = await agentSide(w, new FileSessionStore(dir, { fsync: false }), mls);
      const owner = await ownerSide(w, new MemorySessionStore(), mls);
      for (const text of ['one', 'two']) await owner.messenger.sendText(w.conversationId, text);
      await waitFor(() => agent.received.length === 2, 'agent reads one, two');
      await agent.messenger.sendText(w.conversationId, 'ack two');
      await waitFor(() => owner.received.length === 1, 'owner reads ack');
      await stop(agent);

      // Sent while the agent is down.
      for (const text of ['three', 'four', 'five']) await owner.messenger.sendText(w.conversationId, text);

      agent = await agentSide(w, new FileSessionStore(dir, { fsync: false }), mls);
      await waitFor(() => agent.received.length === 3, 'agent catches up');
      await sleep(200);
      expect(agent.texts()).toEqual(['three', 'four', 'five']);
      expect(agent.received.some((m) => m.redelivered)).toBe(false);
      await agent.messenger.sendText(w.conversationId, 'back online');
      await owner.messenger.sendText(w.conversationId, 'six');
      await waitFor(() => owner.received.length === 2 && agent.received.length === 4, 'both ways after restart');
      expect(owner.texts()).toEqual(['ack two', 'back online']);
      expect(agent.texts().at(-1)).toBe('six');
      expect(agent.messenger.sessionInfo(w.conversationId)!.protocol).toBe(protocol);
      expect([agent.errors, owner.errors]).toEqual([[], []]);
    });

    it('a crash between receive and the state write loses nothing: the message is read again from the service', async () => {
      const w = await world();
      const dir = tempDir();
      const crashing = new CrashingStore(new FileSessionStore(dir, { fsync: false }));
      const agent = await agentSide(w, crashing, mls);
      const owner = await ownerSide(w, new MemorySessionStore(), mls);
      await owner.messenger.sendText(w.conversationId, 'before the crash');
      await waitFor(() => agent.received.length === 1, 'first message');
      await quiet(agent);

      crashing.mode = 'fail-before-write';
      await owner.messenger.sendText(w.conversationId, 'during the crash');
      await waitFor(() => agent.messenger.failed, 'the failed write');
      expect(agent.errors.map((e) => e.code)).toEqual(['persist_failed']);
      await owner.messenger.sendText(w.conversationId, 'after the crash');
      await sleep(200);
      expect(agent.texts()).toEqual(['before the crash']); // nothing acknowledged that is not saved
      await expect(agent.messenger.sendText(w.conversationId, 'x')).rejects.toMatchObject({ code: 'stopped' });
      agent.rt.close();

      const restarted = await agentSide(w, new FileSessionStore(dir, { fsync: false }), mls);
      await waitFor(() => restarted.received.length === 2, 'messages after restart');
      await sleep(200);
      expect(restarted.texts()).toEqual(['during the crash', 'after the crash']);
      await restarted.messenger.sendText(w.conversationId, 'recovered');
      await waitFor(() => owner.received.length === 1, 'owner reads recovered');
      expect(owner.texts()).toEqual(['recovered']);
      expect([restarted.errors, owner.errors]).toEqual([[], []]);
    });

    it('a crash after the state write but before the application had the message hands it over again once', async () => {
      const w = await world();
      const dir = tempDir();
      const crashing = new CrashingStore(new FileSessionStore(dir, { fsync: false }));
      const agent = await agentSide(w, crashing, mls);
      const owner = await ownerSide(w, new MemorySessionStore(), mls);
      await owner.messenger.sendText(w.conversationId, 'first');
      await waitFor(() => agent.received.length === 1, 'first message');
      await quiet(agent);

      crashing.mode = 'hang-after-write'; // the process "dies" right after the write
      const saves = crashing.saves;
      await owner.messenger.sendText(w.conversationId, 'written then crashed');
      await waitFor(() => crashing.saves > saves, 'the write');
      await sleep(100);
      expect(agent.texts()).toEqual(['first']);
      agent.rt.close(); // the dead process's socket

      await owner.messenger.sendText(w.conversationId, 'later');
      const restarted = await agentSide(w, new FileSessionStore(dir, { fsync: false }), mls);
      await waitFor(() => restarted.received.length === 2, 'redelivery and catch-up');
      await sleep(200);
      expect(restarted.texts()).toEqual(['written then crashed', 'later']);
      expect(restarted.received.map((m) => m.redelivered)).toEqual([true, false]);
      expect(restarted.messenger.pendingCount).toBe(0);
      expect(restarted.errors).toEqual([]);
    });
  });

  it('MLS on one side only falls back to X3DH + Double Ratchet (contract §1.3)', async () => {
    const w = await world();
    const agent = await agentSide(w, new MemorySessionStore(), false); // publishes no KeyPackages
    const owner = await ownerSide(w, new MemorySessionStore(), true);
    const sent = await owner.messenger.sendText(w.conversationId, 'fallback');
    expect(sent.protocol).toBe('x3dh-dr');
    await waitFor(() => agent.received.length === 1, 'agent reads');
    await agent.messenger.sendText(w.conversationId, 'fallback reply');
    await waitFor(() => owner.received.length === 1, 'owner reads');
    expect(owner.received[0]!.protocol).toBe('x3dh-dr');
    expect(owner.messenger.sessionInfo(w.conversationId)).toMatchObject({ protocol: 'x3dh-dr', established: true });
  });

  it('refuses to send without a transport or to an unknown conversation', async () => {
    const w = await world();
    const messenger = await SecureMessenger.open({ identity: w.agentIdentity, store: new MemorySessionStore(), mls: false });
    await expect(messenger.sendText(w.conversationId, 'x')).rejects.toMatchObject({ code: 'no_transport' });
    messenger.setTransport({ send: async () => ({ message_id: 'm' }) });
    await expect(messenger.sendText(w.conversationId, 'x')).rejects.toMatchObject({ code: 'unknown_conversation' });
    await expect(SecureMessenger.open({ identity: DeviceIdentity.generate(), store: new MemorySessionStore() })).rejects.toThrow(/device id/);
  });
});
