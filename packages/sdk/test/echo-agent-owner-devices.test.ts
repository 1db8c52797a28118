/**
 * The enrolled echo agent (`node/agent.ts`) and owner devices registered after its activation
 * (contract §4.4, §6.1 `owner_device_linked`): the owner's new phone talks to the running agent at once
 * — the agent answers it — and the agent saves the new conversation and the phone's keys in its
 * `agent.json`, so a restart keeps them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { loadAgentState, type EchoAgent } from '../src/node/agent.js';
import { DEFAULT_PREKEY_SCHEDULE } from '../src/crypto/prekeys.js';
import type { SecureMessage } from '../src/secure/types.js';
import { enrolledEchoAgent } from '../testing/echo-agent.js';
import { ownerSide } from '../testing/owner-side.js';
import { waitFor } from './wait.js';

const text = (m: SecureMessage) => (m.content?.type === 'text' ? m.content.payload.text : undefined);

describe('echo agent: owner devices registered after its activation', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let ownerJwt: string;
  let agent: EchoAgent;
  const closers: (() => unknown)[] = [];

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_DEVICE_STATUS_PER_5S: '100' } });
    ownerJwt = await t.ownerToken(`echo-linked-${Date.now()}@example.com`);
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: ownerJwt });
    owner.setTenantId((await owner.createTenant({ name: 'Echo Linked Co' })).tenant_id);
    const laptop = await ownerSide(owner, ownerJwt, t.baseUrl);
    closers.push(() => laptop.rt.close());
    // The agent's state sealed under a key file next to (not inside) its state directory.
    const echo = await enrolledEchoAgent(t.baseUrl, owner, laptop.events, 'parley-echo-linked-');
    agent = echo.agent;
    closers.push(() => echo.stop());
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
    await t?.close();
  });

  it('a phone registered after the agent is answered by it, and the agent keeps the phone in agent.json', async () => {
    const phone = await ownerSide(owner, ownerJwt, t.baseUrl);
    closers.push(() => phone.rt.close());
    const conversationId = phone.od.conversations.find((c) => c.agent_device_id === agent.deviceId)!.conversation_id;
    await phone.messenger.sendText(conversationId, 'hello from the phone');
    await waitFor(() => phone.received.some((m) => text(m) === 'echo: hello from the phone'), 'the agent answers the phone', 15_000);
    expect(agent.ownerConversations()).toContain(conversationId);

    const { record } = await loadAgentState(agent.store);
    expect(record!.conversations).toContainEqual(expect.objectContaining({ conversation_id: conversationId, owner_device_id: phone.od.device_id, agent_device_id: agent.deviceId }));
    const registered = (await owner.listDevices()).devices.find((d) => d.device_id === phone.od.device_id)!;
    expect(record!.owner_public_keys).toContainEqual({ device_id: phone.od.device_id, identity_public_key: registered.identity_public_key, ephemeral_public_key: registered.ephemeral_public_key, fingerprint: registered.fingerprint });

    // The agent publishes signed and one-time prekeys (X3DH §3.2); the phone's session took one.
    const held = await new ParleyClient({ baseUrl: t.baseUrl, deviceToken: record!.device_jwt }).prekeyCount(agent.deviceId);
    expect(held.signed_prekey_key_id).toMatch(/^[0-9a-f]{32}$/);
    expect(held.one_time_available).toBe(DEFAULT_PREKEY_SCHEDULE.oneTimeBatch - 1);
  });
});
