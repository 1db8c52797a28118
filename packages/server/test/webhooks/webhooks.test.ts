/**
 * Webhook delivery (contract §2.3, §6.2; design §8.11): a local receiver verifies every request with
 * the Standard Webhooks reference library. Owner-set and self-set URLs receive; messages to an
 * offline agent arrive as `message.received` without ciphertext; retries keep the `webhook-id`;
 * always-failing receivers end `failed`; clearing the URL cancels; wrong secrets and tampered
 * bodies fail verification; a room message reaches each released recipient once (a held one once
 * it is approved); tenants stay apart; the signing secret is stored sealed, never in clear.
 */
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageOut } from '../../src/modules/conversations/messages.js';
import { toWebhookPayload } from '../../src/modules/webhooks/events.js';
import { WebhookWorker, backoffMs } from '../../src/modules/webhooks/worker.js';
import { SecretBox, loadSecretsKey } from '../../src/lib/secret-box.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { Receiver, deliveriesOf, sleep, waitFor, type Received } from '../../testing/webhook-receiver.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('webhook delivery', () => {
  let t: TestApp;
  const rx = new Receiver();
  let owner: Owner;
  let ownerDev: OwnerDevice;

  beforeAll(async () => {
    await rx.start();
    t = await startApp({ env: { RATE_LIMITS: 'off', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: 'true' } });
    owner = await newOwner(t);
    ownerDev = await registerOwnerDevice(t, owner);
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  const setHook = (url: string | null, deviceId: string, auth = owner.auth) =>
    t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/webhook`, headers: auth, payload: { url } });
  const deliveries = (deviceId: string) => deliveriesOf(t, deviceId);
  /** A PENDING agent device of `owner`'s tenant. */
  const pendingAgent = async (): Promise<string> => {
    const { res } = await enroll(t, (await createInvite(t, owner)).token);
    expect(res.status).toBe(201);
    return res.body.device_id as string;
  };
  const approve = async (deviceId: string) =>
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth })).status).toBe(200);
  const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, unknown> };

  it('maps socket events to documented types with ids, types and times only', () => {
    const p = toWebhookPayload('room_message', {
      room_id: 'r',
      room_message_id: 'm',
      sender_device_id: 's',
      header: 'SECRET-HEADER',
      ciphertext: 'SECRET-CT',
      message_type: 'text',
      priority: 'high',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    expect(p!.type).toBe('room.message');
    expect(p!.data).toEqual({ room_id: 'r', room_message_id: 'm', sender_device_id: 's', message_type: 'text', priority: 'high', timestamp: '2026-01-01T00:00:00.000Z' });
    expect(toWebhookPayload('policy_alert', { policy_id: 'p', room_id: 'r' })!.type).toBe('policy.alert');
    expect(toWebhookPayload('device_pending', { device_id: 'd', fingerprint: 'f', name: 'n', enrolled_at: 'x' })!.data).toEqual({ device_id: 'd', enrolled_at: 'x' });
    expect(toWebhookPayload('room_joined', { room_id: 'r', members: [{ identity_public_key: 'k' }] })!.data).toEqual({ room_id: 'r' });
    for (const ignored of ['typing', 'ping', 'pong', 'a2a_key_exchange', 'client_key_accepted', 'toString', '__proto__']) {
      expect(toWebhookPayload(ignored, {})).toBeUndefined();
    }
    expect(backoffMs(1, 5000, 3_600_000, () => 0.5)).toBe(5000);
    expect(backoffMs(4, 5000, 3_600_000, () => 0.5)).toBe(40_000);
    expect(backoffMs(30, 5000, 3_600_000, () => 0.5)).toBe(3_600_000);
    expect(backoffMs(2, 1000, 3_600_000, () => 0)).toBe(1500);
  });

  it('an owner-set URL on an owner device receives device.pending, signed; other tenants do not', async () => {
    const reg = await setHook(`${rx.base}/owner`, ownerDev.deviceId);
    expect(reg.status).toBe(200);
    const secret = reg.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const other = await newOwner(t, 'Other');
    const otherDev = await registerOwnerDevice(t, other);
    expect((await setHook(`${rx.base}/other-owner`, otherDev.deviceId, other.auth)).status).toBe(200);

    const { res } = await enroll(t, (await createInvite(t, owner)).token);
    expect(res.status).toBe(201);
    const req = await waitFor(() => rx.to('/owner').find((r) => r.body.includes(res.body.device_id)), 'device.pending');
    const body = verify(secret, req);
    expect(body.type).toBe('device.pending');
    expect(body.data).toEqual({ device_id: res.body.device_id, enrolled_at: expect.any(String) });
    expect(req.headers['content-type']).toBe('application/json');
    const row = (await deliveries(ownerDev.deviceId)).find((d) => JSON.stringify(d.payload).includes(res.body.device_id));
    expect(req.headers['webhook-id']).toBe(row!.id);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    // Negative control: another secret does not verify; neither does a tampered body or id.
    const wrong = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    expect(() => verify(wrong, req)).toThrow();
    expect(() => verify(secret, { ...req, body: req.body.replace(res.body.device_id, '00000000-0000-4000-8000-000000000000') })).toThrow();
    expect(() => verify(secret, { ...req, headers: { ...req.headers, 'webhook-id': 'other' } })).toThrow();

    await sleep(100);
    expect(rx.to('/other-owner')).toEqual([]);
    expect(await deliveries(otherDev.deviceId)).toEqual([]);
  });

  it('device_approved reaches the webhook the owner set on the pending agent', async () => {
    const agentId = await pendingAgent();
    const reg = await setHook(`${rx.base}/pending-agent`, agentId);
    expect(reg.status).toBe(200);
    await approve(agentId);
    const req = await waitFor(() => rx.to('/pending-agent')[0], 'device.approved');
    expect(verify(reg.body.secret, req)).toMatchObject({ type: 'device.approved', data: { device_id: agentId } });
  });

  it('a message to an offline agent with a self-set URL arrives as message.received without ciphertext or header', async () => {
    const agent = await activeAgent(t, owner);
    const reg = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: `${rx.base}/agent` } });
    expect(reg.status).toBe(200);
    const ciphertext = b64('a secret plaintext that must never reach a webhook');
    const header = b64('ratchet header bytes');
    const sent = await t.request({
      method: 'POST',
      url: `/api/v1/conversations/${agent.conversationId}/messages`,
      headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId },
      payload: { header_blob: header, ciphertext, priority: 'high' },
    });
    expect(sent.status).toBe(201);
    const out = sent.body as MessageOut;
    const req = await waitFor(() => rx.to('/agent')[0], 'message.received');
    expect(req.body).not.toContain(ciphertext);
    expect(req.body).not.toContain(header);
    expect(req.body).not.toMatch(/ciphertext|header/);
    const body = verify(reg.body.secret, req);
    // The outbox builds this body in SQL; it must equal the documented mapper's answer.
    expect(body).toEqual(toWebhookPayload('message', out, new Date(out.timestamp)));
    expect(body.data).toMatchObject({ message_id: out.message_id, sender_device_id: ownerDev.deviceId, priority: 'high', message_type: 'text' });
    // Exactly one delivery (the notifier's sink skips `message`), and none for the sender (no URL).
    const rows = await deliveries(agent.deviceId);
    expect(rows.filter((d) => d.event_type === 'message.received')).toHaveLength(1);
    await waitFor(async () => (await deliveries(agent.deviceId))[0]!.status === 'delivered', 'delivered');
  });

  it('a room message reaches each released recipient webhook once as room.message, a held one once after approval', async () => {
    const [a, b, c] = [await activeAgent(t, owner), await activeAgent(t, owner), await activeAgent(t, owner)];
    const secrets = new Map<string, string>();
    for (const [agent, path] of [[a, '/room-a'], [b, '/room-b']] as const) {
      const reg = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: `${rx.base}${path}` } });
      expect(reg.status).toBe(200);
      secrets.set(path, reg.body.secret as string);
    }
    const room = await t.request({ method: 'POST', url: '/api/v1/rooms', headers: owner.auth, payload: { name: 'hooks', member_device_ids: [ownerDev.deviceId, a.deviceId, b.deviceId, c.deviceId] } });
    expect(room.status).toBe(201);
    const roomId = room.body.room_id as string;
    const policy = await t.request({
      method: 'POST',
      url: '/api/v1/policies',
      headers: owner.auth,
      payload: { name: 'hold b', scope: { room_id: roomId }, conditions: { recipient_device_ids: [b.deviceId] }, action: 'hold' },
    });
    expect(policy.status).toBe(201);
    const ciphertext = b64('room plaintext that must never reach a webhook');
    const sent = await t.request({
      method: 'POST',
      url: `/api/v1/rooms/${roomId}/messages`,
      headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId },
      payload: { priority: 'high', envelopes: [a, b, c].map((x) => ({ recipient_device_id: x.deviceId, header_blob: b64('hdr'), ciphertext })) },
    });
    expect(sent.status).toBe(201);
    const outcomes = Object.fromEntries((sent.body.deliveries as { recipient_device_id: string; outcome: string; held_message_id?: string }[]).map((d) => [d.recipient_device_id, d]));
    expect([outcomes[a.deviceId]!.outcome, outcomes[b.deviceId]!.outcome, outcomes[c.deviceId]!.outcome]).toEqual(['delivered', 'held', 'delivered']);
    const expected = {
      room_id: roomId,
      room_message_id: sent.body.room_message_id,
      sender_device_id: ownerDev.deviceId,
      message_type: 'text',
      priority: 'high',
      timestamp: sent.body.timestamp,
    };
    const roomMessages = async (deviceId: string) => (await deliveries(deviceId)).filter((d) => d.event_type === 'room.message');
    /** Requests of type room.message a receiver path got (the agents also get room.joined). */
    const received = (path: string) => rx.to(path).filter((r) => r.body.includes('"type":"room.message"'));

    const atSend = await waitFor(() => received('/room-a')[0], 'room.message for a');
    expect(atSend.body).not.toContain(ciphertext);
    expect(atSend.body).not.toMatch(/ciphertext|header|cursor/);
    expect(verify(secrets.get('/room-a')!, atSend)).toMatchObject({ type: 'room.message', data: expected });
    expect(await roomMessages(b.deviceId)).toEqual([]); // held: nothing yet

    const approved = await t.request({ method: 'POST', url: `/api/v1/policies/held-messages/${outcomes[b.deviceId]!.held_message_id}/approve`, headers: owner.auth });
    expect(approved.status).toBe(200);
    const atRelease = await waitFor(() => received('/room-b')[0], 'room.message for b');
    expect(verify(secrets.get('/room-b')!, atRelease)).toMatchObject({ type: 'room.message', data: expected });

    await sleep(100);
    // Exactly once each (the notifier's sink skips room_message); none for c (no URL) or the sender.
    expect(received('/room-a')).toHaveLength(1);
    expect(received('/room-b')).toHaveLength(1);
    expect(await roomMessages(a.deviceId)).toHaveLength(1);
    expect(await roomMessages(b.deviceId)).toHaveLength(1);
    expect(await roomMessages(c.deviceId)).toEqual([]);
    expect(await roomMessages(ownerDev.deviceId)).toEqual([]);
  });

  it('retries a failing receiver with the same webhook-id and records attempts = 3', async () => {
    const agent = await activeAgent(t, owner);
    const reg = await setHook(`${rx.base}/flaky`, agent.deviceId);
    rx.script('/flaky', [500, 500]);
    await t.request({ method: 'POST', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64('c') } });
    const row = await waitFor(async () => (await deliveries(agent.deviceId)).find((d) => d.status === 'delivered'), 'delivery after retries');
    expect(row.attempts).toBe(3);
    expect(row.last_status).toBe(200);
    expect(row.last_error).toBeNull();
    const reqs = rx.to('/flaky');
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([row.id]));
    for (const r of reqs) expect(verify(reg.body.secret, r).type).toBe('message.received');
  });

  it('marks a delivery failed after WEBHOOK_MAX_ATTEMPTS and keeps the last status', async () => {
    const agentId = await pendingAgent();
    await setHook(`${rx.base}/down`, agentId);
    rx.script('/down', [503, 503, 503, 503]);
    await approve(agentId);
    const row = await waitFor(async () => (await deliveries(agentId)).find((d) => d.status === 'failed'), 'failed delivery');
    expect(row).toMatchObject({ attempts: 3, last_status: 503, last_error: 'HTTP 503' });
    await sleep(150);
    expect(rx.to('/down')).toHaveLength(3);
  });

  it.each([
    ['clearing the URL', (id: string) => setHook(null, id)],
    ['revoking the device', (id: string) => t.request({ method: 'PATCH', url: `/api/v1/devices/${id}/revoke`, headers: owner.auth })],
  ])('%s cancels pending deliveries', async (name, stop) => {
    const path = `/cancel-${name.split(' ')[0]}`;
    const agentId = await pendingAgent();
    await setHook(`${rx.base}${path}`, agentId);
    let answer!: (status: number) => void;
    rx.script(path, [new Promise<number>((r) => (answer = r))]);
    await approve(agentId);
    await waitFor(() => rx.to(path).length === 1, 'first attempt');
    expect((await stop(agentId)).status).toBe(200);
    answer(500);
    const row = await waitFor(async () => (await deliveries(agentId)).find((d) => d.status === 'cancelled'), 'cancelled delivery');
    expect(row).toMatchObject({ attempts: 1, last_status: 500 });
    await sleep(100);
    expect(rx.to(path)).toHaveLength(1);
  });

  it('several workers (instances) never deliver the same row twice', async () => {
    const agent = await activeAgent(t, owner);
    await setHook(`${rx.base}/busy`, agent.deviceId);
    const secrets = new SecretBox(loadSecretsKey(t.config.secretsKey, t.config.dataDir));
    const extra = [1, 2].map(() => new WebhookWorker(t.app.parley.database.db, { ...t.config.webhooks, pollMs: 5, batchSize: 3 }, secrets, t.app.log));
    extra.forEach((w) => w.start());
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.request({ method: 'POST', url: `/api/v1/conversations/${agent.conversationId}/messages`, headers: { ...owner.auth, 'x-device-id': ownerDev.deviceId }, payload: { header_blob: b64('h'), ciphertext: b64(`m${i}`) } }),
        ),
      );
      await waitFor(async () => (await deliveries(agent.deviceId)).filter((d) => d.status === 'delivered').length === 20, '20 deliveries');
    } finally {
      await Promise.all(extra.map((w) => w.stop()));
    }
    const ids = rx.to('/busy').map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  const storedSecret = async (deviceId: string): Promise<string | null> =>
    ((await t.app.parley.database.db.execute(sql`select webhook_secret from devices where id = ${deviceId}`)) as unknown as { rows: { webhook_secret: string | null }[] })
      .rows[0]!.webhook_secret;
  const storeSecret = (deviceId: string, value: string) =>
    t.app.parley.database.db.execute(sql`update devices set webhook_secret = ${value} where id = ${deviceId}`);

  it('stores the signing secret sealed (AES-256-GCM, v1 format), never in clear, and still signs with it', async () => {
    const agentId = await pendingAgent();
    const reg = await setHook(`${rx.base}/sealed`, agentId);
    const secret = reg.body.secret as string;
    const stored = (await storedSecret(agentId))!;
    expect(stored).toMatch(/^v1:[A-Za-z0-9+/]+=*:[A-Za-z0-9+/]+=*$/);
    const row = (await t.app.parley.database.db.execute(sql`select row_to_json(d)::text as j from devices d where id = ${agentId}`)) as unknown as { rows: { j: string }[] };
    const rawKey = secret.slice('whsec_'.length);
    for (const form of [secret, rawKey, Buffer.from(rawKey, 'base64').toString('hex')]) expect(row.rows[0]!.j).not.toContain(form);
    await approve(agentId);
    const req = await waitFor(() => rx.to('/sealed')[0], 'device.approved');
    expect(verify(secret, req).type).toBe('device.approved');
    // Re-registration issues a new secret, sealed under a fresh IV.
    const again = await setHook(`${rx.base}/sealed`, agentId);
    expect(again.body.secret).not.toBe(secret);
    expect(await storedSecret(agentId)).not.toBe(stored);
  });

  it('reads a legacy clear whsec_ secret, and seals it on the next registration', async () => {
    const agentId = await pendingAgent();
    await setHook(`${rx.base}/legacy`, agentId);
    const legacy = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    await storeSecret(agentId, legacy);
    await approve(agentId);
    const req = await waitFor(() => rx.to('/legacy')[0], 'legacy-signed delivery');
    expect(verify(legacy, req).type).toBe('device.approved');
    const again = await setHook(`${rx.base}/legacy`, agentId);
    const stored = (await storedSecret(agentId))!;
    expect(stored).toMatch(/^v1:/);
    expect(stored).not.toContain(legacy);
    expect(stored).not.toContain(again.body.secret);
  });

  it('a sealed secret that does not open (copied from another device) fails the delivery at once as secret unreadable', async () => {
    const [a, b] = [await pendingAgent(), await pendingAgent()];
    await setHook(`${rx.base}/copied`, a);
    await setHook(`${rx.base}/copied`, b);
    await storeSecret(b, (await storedSecret(a))!);
    await approve(b);
    const row = await waitFor(async () => (await deliveries(b)).find((d) => d.status === 'failed'), 'failed delivery');
    expect(row).toMatchObject({ attempts: 1, last_status: null, last_error: 'secret unreadable' });
    expect(rx.to('/copied')).toEqual([]);
  });

  it('enqueues nothing for a device without a URL', async () => {
    const agentId = await pendingAgent();
    await approve(agentId);
    expect(await deliveries(agentId)).toEqual([]);
  });
});
