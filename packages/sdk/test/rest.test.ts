/**
 * ParleyClient and the enrollment flow against a real server (contract §3.1, §4.1–§4.5, §7):
 * tenant -> invite -> enroll with real Ed25519 keys -> approve -> activate -> owner device ->
 * messages both ways -> token renewal -> revoke -> 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp, newDeviceKeys, type DeviceKeys } from '@parley/server/testing';
import { ParleyClient } from '../src/client/rest.js';
import { ParleyApiError, ParleyNetworkError, parseRetryAfter } from '../src/client/errors.js';
import { jwtExpiry } from '../src/client/encoding.js';
import {
  EnrollmentRejectedError,
  enroll,
  enrollAgent,
  renewDeviceToken,
  startTokenAutoRenew,
  waitForApproval,
  type AgentIdentity,
} from '../src/client/enrollment.js';
import { RealtimeClient } from '../src/realtime/client.js';
import { nodeWebSocket } from '../src/node/ws.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const identityOf = (k: DeviceKeys, name?: string): AgentIdentity => ({
  identityPublicKey: k.identityPublicKey,
  ephemeralPublicKey: k.ephemeralPublicKey,
  sign: (m) => k.sign(m),
  platform: 'node-test',
  ...(name ? { name } : {}),
});

async function rejects(p: Promise<unknown>, status: number): Promise<ParleyApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ParleyApiError);
    expect((err as ParleyApiError).status).toBe(status);
    expect(typeof (err as ParleyApiError).detail).toBe('string');
    return err as ParleyApiError;
  }
  throw new Error(`expected a ${status} ParleyApiError`);
}

describe('ParleyClient against a real server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_DEVICE_STATUS_PER_5S: '1000' } });
  });
  afterAll(() => t?.close());

  it('public platform routes', async () => {
    const c = new ParleyClient({ baseUrl: t.baseUrl + '/' });
    expect(await c.health()).toEqual({ status: 'ok', version: expect.any(String) });
    expect((await c.capabilities()).realtime.websocket).toBe('/api/v1/ws');
    expect((await c.billingPlans()).plans.length).toBeGreaterThan(0);
    expect((await c.legalTerms()).version).toEqual(expect.any(String));
    expect((await c.jwks()).keys.length).toBeGreaterThan(0);
  });

  it('drives the main flow end to end', async () => {
    const sub = `sdk-owner-${Date.now()}@example.com`;
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: () => t.ownerToken(sub) });

    // Tenant and owner device.
    const tenant = await owner.createTenant({ name: 'SDK Co' });
    expect(tenant).toMatchObject({ name: 'SDK Co', role: 'OWNER_ADMIN' });
    owner.setTenantId(tenant.tenant_id);
    const ownerKeys = newDeviceKeys();
    const ownerDevice = await owner.registerOwnerDevice({ identity_public_key: ownerKeys.identityPublicKey, ephemeral_public_key: ownerKeys.ephemeralPublicKey, name: 'laptop' });
    expect(ownerDevice.status).toBe('ACTIVE');
    owner.setOwnerDeviceId(ownerDevice.device_id);

    // Invite.
    const invite = await owner.createInvite({ label: 'agent-1' });
    expect(invite.token).toMatch(/^svc_tok_[0-9a-f]{64}$/);
    expect((await owner.listInvites()).invites.find((i) => i.id === invite.id)).toMatchObject({ status: 'active', label: 'agent-1' });

    // Agent enrollment with proof of possession; the owner approves while the agent polls.
    const agentKeys = newDeviceKeys();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const statuses: string[] = [];
    let enrolledId!: (id: string) => void;
    const enrolled = new Promise<string>((r) => (enrolledId = r));
    const flow = enrollAgent(agent, invite.token, identityOf(agentKeys, 'worker'), {
      pollIntervalMs: 50,
      unsafeFastPolling: true,
      onStatus: (s) => statuses.push(s),
      onEnrolled: (e) => enrolledId(e.device_id),
    });
    const agentId = await enrolled;
    const pending = (await owner.listDevices()).devices.find((d) => d.device_id === agentId)!;
    expect(pending).toMatchObject({ status: 'PENDING', kind: 'agent', name: 'worker', identity_public_key: agentKeys.identityPublicKey });
    await new Promise((r) => setTimeout(r, 120));
    expect((await owner.approveDevice(agentId)).status).toBe('APPROVED');
    const activated = await flow;
    expect(statuses[0]).toBe('PENDING');
    expect(statuses.at(-1)).toBe('APPROVED');
    expect(activated.device_id).toBe(agentId);
    expect(activated.fingerprint).toBe(pending.fingerprint);
    expect(activated.device_jwt.split('.')).toHaveLength(3);
    expect(activated.owner_public_keys.map((k) => k.device_id)).toEqual([ownerDevice.device_id]);
    expect(activated.owner_public_keys[0]!.identity_public_key).toBe(ownerKeys.identityPublicKey);
    const conversationId = activated.conversation_id!;
    expect(conversationId).toEqual(expect.any(String));
    expect(await agent.currentDeviceToken()).toBe(activated.device_jwt);
    expect((await agent.deviceStatus(agentId)).status).toBe('ACTIVE');

    // Owner views of the agent.
    expect(await owner.deviceKeys(agentId)).toMatchObject({ device_id: agentId, identity_public_key: agentKeys.identityPublicKey });
    expect((await owner.devicePresence(agentId)).online).toBe(false);
    expect(await owner.conversationKeys(conversationId)).toMatchObject({ device_id: agentId, kind: 'agent', status: 'ACTIVE' });
    const conv = (await owner.listConversations()).conversations.find((c) => c.conversation_id === conversationId)!;
    expect(conv).toMatchObject({ agent_device_id: agentId, owner_device_id: ownerDevice.device_id, message_group_id: activated.message_group_id });
    expect((await owner.listConversations({ device_id: agentId })).conversations).toHaveLength(1);
    expect((await owner.relinkDevice(ownerDevice.device_id)).conversations.map((c) => c.conversation_id)).toContain(conversationId);

    // Topics.
    const topics = await owner.listTopics({ group_id: activated.message_group_id });
    expect(topics.topics).toEqual([expect.objectContaining({ topic_id: activated.default_topic_id, is_default: true })]);
    const topic = await owner.createTopic({ group_id: activated.message_group_id, name: 'ops' });
    expect((await owner.renameTopic(topic.topic_id, { name: 'operations' })).name).toBe('operations');
    expect((await owner.archiveTopic(topic.topic_id)).archived).toBe(true);
    await rejects(owner.archiveTopic(activated.default_topic_id), 409);

    // Owner -> agent over REST.
    const sent = await owner.sendMessage(conversationId, { header_blob: b64('h1'), ciphertext: b64('c1'), message_type: 'status_alert', priority: 'high' });
    expect(sent).toMatchObject({ conversation_id: conversationId, sender_device_id: ownerDevice.device_id, message_type: 'status_alert', priority: 'high' });
    expect((await agent.devicePending(agentId)).pending).toBe(1);
    const inbox = await agent.deviceMessages(agentId, { limit: 10 });
    expect(inbox.messages.map((m) => m.message_id)).toEqual([sent.message_id]);
    expect(inbox.messages[0]!.ciphertext).toBe(b64('c1'));
    expect((await agent.devicePending(agentId)).pending).toBe(0);
    expect((await agent.deviceMessages(agentId, { since: inbox.next_cursor! })).messages).toEqual([]);

    // Agent -> owner: agents send over the socket (no REST send route for devices); the owner reads over REST.
    const rt = new RealtimeClient({ url: t.baseUrl, token: () => agent.currentDeviceToken(), WebSocket: nodeWebSocket() });
    await rt.connect();
    const ack = await rt.send({ conversation_id: conversationId, header_blob: b64('h2'), ciphertext: b64('c2') });
    rt.close();
    const history = await owner.conversationMessages(conversationId);
    expect(history.messages.map((m) => m.message_id)).toEqual([sent.message_id, ack.message_id]);
    expect(history.messages[1]).toMatchObject({ sender_device_id: agentId, ciphertext: b64('c2'), cursor: ack.cursor });
    expect((await owner.conversationMessages(conversationId, { since: sent.cursor })).messages.map((m) => m.message_id)).toEqual([ack.message_id]);

    // Device-token renewal with a signature over the challenge.
    const renewed = await renewDeviceToken(agent, agentId, identityOf(agentKeys).sign);
    expect(renewed.device_jwt).not.toBe(activated.device_jwt);
    expect(await agent.currentDeviceToken()).toBe(renewed.device_jwt);
    expect(jwtExpiry(renewed.device_jwt)!.getTime()).toBeCloseTo(new Date(renewed.expires_at).getTime(), -4);
    expect((await agent.devicePending(agentId)).pending).toBe(0);
    const wrongSigner = newDeviceKeys();
    await rejects(renewDeviceToken(agent, agentId, (m) => wrongSigner.sign(m)), 401);

    // Webhooks and rename.
    const hook = await agent.setSelfWebhook({ url: 'https://hooks.example.invalid/agent' });
    expect(hook.secret).toMatch(/^whsec_/);
    expect((await owner.setDeviceWebhook(agentId, { url: null })).webhook_url).toBeNull();
    expect((await owner.renameDevice(agentId, { name: 'worker-2' })).name).toBe('worker-2');

    // MLS KeyPackages: the agent publishes with its device JWT, the owner (acting device) claims one.
    const kps = [b64('key-package-1'), b64('key-package-2')];
    expect(await agent.publishKeyPackages({ key_packages: kps })).toMatchObject({ device_id: agentId, published: 2, available: 2 });
    expect(await owner.keyPackageCount(agentId)).toEqual({ device_id: agentId, available: 2, by_cipher_suite: [{ cipher_suite: 3, available: 2 }] });
    expect(kps).toContain((await owner.claimKeyPackage({ device_id: agentId })).key_package);
    expect((await agent.keyPackageCount(agentId)).available).toBe(1);

    // Revoke: every later call by the device is 403.
    expect((await owner.revokeDevice(agentId)).status).toBe('REVOKED');
    const err = await rejects(agent.devicePending(agentId), 403);
    expect(err.method).toBe('GET');
    expect(err.path).toBe(`/api/v1/devices/${agentId}/pending`);
    await rejects(agent.deviceMessages(agentId), 403);
    await rejects(renewDeviceToken(agent, agentId, identityOf(agentKeys).sign), 403);
    await owner.deleteDevice(agentId);
    expect((await owner.listDevices()).devices.some((d) => d.device_id === agentId)).toBe(false);
    expect((await owner.conversationMessages(conversationId)).messages).toHaveLength(2);

    // Invite lifecycle: consumed invites cannot be revoked (409) but can be deleted.
    await rejects(owner.revokeInvite(invite.id), 409);
    await owner.deleteInvite(invite.id);
    const spare = await owner.createInvite();
    expect((await owner.revokeInvite(spare.id)).status).toBe('revoked');
    await owner.deleteInvite(spare.id);
    expect((await owner.listInvites()).invites.map((i) => i.id)).not.toContain(spare.id);

    // A second owner device, removed by the first one (X-Device-Id).
    const k2 = newDeviceKeys();
    const second = await owner.registerOwnerDevice({ identity_public_key: k2.identityPublicKey, ephemeral_public_key: k2.ephemeralPublicKey });
    await owner.removeOwnerDevice(second.device_id);
    expect((await owner.listDevices()).devices.map((d) => d.device_id)).not.toContain(second.device_id);
    await rejects(owner.removeOwnerDevice(second.device_id, { deviceId: 'not-a-uuid' }), 400);
  });

  it('a rejected enrollment ends the wait with EnrollmentRejectedError; a used invite is 401', async () => {
    const sub = `sdk-rej-${Date.now()}@example.com`;
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(sub) });
    await owner.createTenant({ name: 'Reject Co' });
    const invite = await owner.createInvite();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const keys = newDeviceKeys();
    const e = await enroll(agent, invite.token, identityOf(keys));
    expect(e.status).toBe('PENDING');
    await rejects(enroll(agent, invite.token, identityOf(newDeviceKeys())), 401);
    const waiting = waitForApproval(agent, e.device_id, { pollIntervalMs: 30, unsafeFastPolling: true });
    await owner.rejectDevice(e.device_id);
    await expect(waiting).rejects.toBeInstanceOf(EnrollmentRejectedError);
  });

  it('a bad proof of possession is 400 and leaves the invite usable', async () => {
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-pop-${Date.now()}@example.com`) });
    await owner.createTenant({ name: 'PoP Co' });
    const invite = await owner.createInvite();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const keys = newDeviceKeys();
    const other = newDeviceKeys();
    await rejects(enroll(agent, invite.token, { ...identityOf(keys), sign: (m) => other.sign(m) }), 400);
    expect((await enroll(agent, invite.token, identityOf(keys))).status).toBe('PENDING');
  });

  it('signers may return bytes, uppercase hex, or a promise', async () => {
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-sig-${Date.now()}@example.com`) });
    await owner.createTenant({ name: 'Sig Co' });
    const keys = newDeviceKeys();
    const bytesSigner = async (m: Uint8Array) => new Uint8Array(Buffer.from(keys.sign(m), 'hex'));
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const e = await enroll(agent, (await owner.createInvite()).token, {
      identityPublicKey: new Uint8Array(Buffer.from(keys.identityPublicKey, 'hex')),
      ephemeralPublicKey: keys.ephemeralPublicKey.toUpperCase(),
      sign: bytesSigner,
    });
    await owner.approveDevice(e.device_id);
    const agent2 = new ParleyClient({ baseUrl: t.baseUrl });
    const act = await enrollAgentActivateOnly(agent2, e.device_id, (m) => keys.sign(m).toUpperCase());
    expect(act.device_id).toBe(e.device_id);
  });

  it('errors: 401 for a bad token, 403 without a tenant, local TypeError without credentials', async () => {
    const c = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: 'not-a-jwt' });
    const e401 = await rejects(c.listDevices(), 401);
    expect(e401.message).toContain('GET /api/v1/devices failed with 401');
    const fresh = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-none-${Date.now()}@example.com`) });
    await rejects(fresh.listDevices(), 403);
    await expect(new ParleyClient({ baseUrl: t.baseUrl }).listDevices()).rejects.toThrow(/needs an owner token/);
    await expect(new ParleyClient({ baseUrl: t.baseUrl }).devicePending('x')).rejects.toThrow(/needs a device token/);
    await rejects(new ParleyClient({ baseUrl: t.baseUrl }).deviceStatus('00000000-0000-4000-8000-000000000000'), 404);
  });

  it('network failures are ParleyNetworkError (connection refused, timeout, abort)', async () => {
    const down = new ParleyClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    await expect(down.health()).rejects.toBeInstanceOf(ParleyNetworkError);
    const slow = new ParleyClient({ baseUrl: t.baseUrl, fetch: (_u, init) => new Promise((_r, rej) => init.signal!.addEventListener('abort', () => rej(new Error('aborted')))), timeoutMs: 50 });
    await expect(slow.health()).rejects.toMatchObject({ name: 'ParleyNetworkError', timedOut: true });
    const ac = new AbortController();
    const p = slow.health({ signal: ac.signal, timeoutMs: 0 });
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'ParleyNetworkError', aborted: true, timedOut: false });
  });
});

/** Activation alone (the signer variant test). */
async function enrollAgentActivateOnly(client: ParleyClient, deviceId: string, sign: (m: Uint8Array) => string) {
  const { activate } = await import('../src/client/enrollment.js');
  return activate(client, deviceId, sign);
}

describe('rate limits (contract §8 defaults)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterAll(() => t?.close());

  it('a second status poll within 5 s is 429 with Retry-After', async () => {
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-rl-${Date.now()}@example.com`) });
    await owner.createTenant({ name: 'RL Co' });
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const e = await enroll(agent, (await owner.createInvite()).token, identityOf(newDeviceKeys()));
    await agent.deviceStatus(e.device_id);
    const err = await rejects(agent.deviceStatus(e.device_id), 429);
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(err.retryAfter).toBeLessThanOrEqual(5);
    expect(err.retryAfterMs).toBe(err.retryAfter! * 1000);
  });
});

describe('waitForApproval back-off (scripted fetch)', () => {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

  it('waits for Retry-After on 429, retries network errors, and stops on APPROVED', async () => {
    const script: Array<() => Response> = [
      () => json(200, { device_id: 'd', status: 'PENDING' }),
      () => json(429, { detail: 'rate limit exceeded' }, { 'retry-after': '1' }),
      () => {
        throw new TypeError('fetch failed');
      },
      () => json(200, { device_id: 'd', status: 'APPROVED' }),
    ];
    const times: number[] = [];
    const c = new ParleyClient({
      baseUrl: 'http://parley.test',
      fetch: async () => {
        times.push(Date.now());
        return script.shift()!();
      },
    });
    const result = await waitForApproval(c, 'd', { pollIntervalMs: 20, unsafeFastPolling: true });
    expect(result).toBe('APPROVED');
    expect(times).toHaveLength(4);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(990);
    expect(times[1]! - times[0]!).toBeLessThan(900);
  });

  it('never polls faster than once per 5 s unless told to', async () => {
    let calls = 0;
    const c = new ParleyClient({ baseUrl: 'http://parley.test', fetch: async () => (calls++, json(200, { device_id: 'd', status: 'PENDING' })) });
    await expect(waitForApproval(c, 'd', { pollIntervalMs: 10, timeoutMs: 300 })).rejects.toMatchObject({ name: 'EnrollmentTimeoutError', aborted: false });
    expect(calls).toBe(1);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(new Date(Date.now() + 3000).toUTCString())).toBeGreaterThanOrEqual(2);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('startTokenAutoRenew', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', RATE_LIMIT_DEVICE_STATUS_PER_5S: '1000', DEVICE_TOKEN_TTL_SEC: '3' } });
  });
  afterAll(() => t?.close());

  it('renews before expiry and stops for good after revocation', async () => {
    const owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: await t.ownerToken(`sdk-ar-${Date.now()}@example.com`) });
    await owner.createTenant({ name: 'AR Co' });
    const keys = newDeviceKeys();
    const agent = new ParleyClient({ baseUrl: t.baseUrl });
    const e = await enroll(agent, (await owner.createInvite()).token, identityOf(keys));
    await owner.approveDevice(e.device_id);
    const act = await enrollAgentActivateOnly(agent, e.device_id, (m) => keys.sign(m));
    agent.setDeviceToken(act.device_jwt);
    const renewed: string[] = [];
    const errors: Array<{ fatal: boolean }> = [];
    let fatal!: () => void;
    const stopped = new Promise<void>((r) => (fatal = r));
    const handle = startTokenAutoRenew(agent, {
      deviceId: e.device_id,
      sign: (m) => keys.sign(m),
      renewBeforeMs: 2000,
      onRenewed: (tok) => renewed.push(tok.device_jwt),
      onError: (_err, isFatal) => {
        errors.push({ fatal: isFatal });
        if (isFatal) fatal();
      },
    });
    await new Promise((r) => setTimeout(r, 1600));
    expect(renewed.length).toBeGreaterThanOrEqual(1);
    expect(await agent.currentDeviceToken()).toBe(renewed.at(-1));
    expect((await agent.devicePending(e.device_id)).pending).toBe(0);
    await owner.revokeDevice(e.device_id);
    await expect(handle.renewNow()).rejects.toMatchObject({ status: 403 });
    await stopped;
    expect(errors.at(-1)).toEqual({ fatal: true });
    expect(handle.nextRenewalAt).toBeUndefined();
  });
});
