/**
 * Push delivery over Web Push (design §8.36 "Push delivery"; RFC 8030, RFC 8291, RFC 8292): the
 * factory against a real database and a loopback push-service double. The test decrypts every
 * push with the subscription's own keys (http_ece) and checks the VAPID JWT against the shared
 * public key; offline-only wake-up, collapse, urgency, 410 removal (audited), retry after 503, one
 * send across two workers, and the Notifier sink path.
 */
import { createPublicKey, verify } from 'node:crypto';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import ece from 'http_ece';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { crossTenant, withTenant } from '../../src/db/tenant.js';
import { registerErrorHandling } from '../../src/http/errors.js';
import { PushService } from '../../src/modules/push/index.js';
import { VAPID_KEY_PURPOSE } from '../../src/modules/push/vapid.js';
import { logLines, makeDue, notify, metricValue, newSubscription, outboxRows, pushWorld, ServiceDouble, type PushWorld, type Received, type Subscription } from './push-fixtures.js';

type PushFactory = Awaited<ReturnType<PushWorld['push']>>;

/** The plaintext of a Web Push request, decrypted with the subscription's private key and auth secret (RFC 8291). */
function decrypt(r: Received, sub: Subscription): Record<string, unknown> {
  const plain = ece.decrypt(r.body, { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.auth.toString('base64url') }) as Buffer;
  return JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
}

/** The VAPID JWT's claims after checking its ES256 signature against `publicKey` (RFC 8292 §2, §3). */
function vapidClaims(r: Received, publicKey: string): Record<string, unknown> {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(String(r.headers.authorization));
  expect(m, 'Authorization: vapid t=…, k=…').not.toBeNull();
  const [, jwt, k] = m!;
  expect(k).toBe(publicKey);
  const [h, p, s] = jwt!.split('.');
  expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toMatchObject({ alg: 'ES256', typ: 'JWT' });
  const point = Buffer.from(publicKey, 'base64url');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
  expect(verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'))).toBe(true);
  return JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
}

describe('push delivery: Web Push', () => {
  let w: PushWorld;
  let svc: ServiceDouble;
  let push: PushFactory;
  let service: PushService;
  let agentSub: Subscription;

  beforeAll(async () => {
    w = await pushWorld();
    svc = await new ServiceDouble().start();
    push = await w.push({ deps: { worker: { retryBaseMs: 1, maxAttempts: 3 } } });
    service = push.service;
    agentSub = newSubscription(`${svc.url}/push/agent`);
    await service.register(w.tenantId, w.agentDeviceId, 'web', agentSub.token);
  });
  afterEach(async () => {
    svc.received.length = 0;
    svc.next.length = 0;
    w.online.ids.clear();
    await crossTenant(w.db, 'test reset', (tx) => tx.execute(sql`delete from push_deliveries`));
  });
  afterAll(async () => {
    await w?.close();
    await svc?.close();
  });

  const message = (over: Record<string, unknown> = {}) => ({
    message_id: crypto.randomUUID(),
    conversation_id: '11111111-1111-4111-8111-111111111111',
    sender_device_id: w.ownerDeviceId,
    recipient_device_id: w.agentDeviceId,
    header: 'SECRET-HEADER',
    ciphertext: 'SECRET-CIPHERTEXT',
    message_type: 'task',
    priority: 'high',
    ...over,
  });

  it('wakes an offline device with an encrypted, VAPID-signed push carrying metadata only', async () => {
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId, w.ownerDeviceId] }, 'message', message());
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received).toHaveLength(1);
    const r = svc.received[0]!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/push/agent');
    expect(r.headers).toMatchObject({ 'content-encoding': 'aes128gcm', ttl: '86400', urgency: 'high', topic: 'message' });
    const body = decrypt(r, agentSub);
    expect(body).toEqual({ event: 'message', tenant_id: w.tenantId, device_id: w.agentDeviceId, conversation_id: '11111111-1111-4111-8111-111111111111', count: 1, sender_name: 'Owner phone' });
    expect(r.body.toString('latin1')).not.toContain('SECRET');
    const claims = vapidClaims(r, push.vapid.publicKey);
    expect(claims.aud).toBe(svc.url);
    expect(claims.sub).toBe('mailto:operator@parley.example');
    const exp = Number(claims.exp) - Date.now() / 1000;
    expect(exp).toBeGreaterThan(60);
    expect(exp).toBeLessThanOrEqual(24 * 3600);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ kind: 'message', status: 'sent', count: 0 })]);
    // Tenant row-level security: the row is the tenant's, invisible to another tenant.
    const seen = (tenantId: string) => withTenant(w.db, tenantId, async (tx) => ((await tx.execute(sql`select count(*)::int as n from push_deliveries`)) as unknown as { rows: { n: number }[] }).rows[0]!.n);
    expect(await seen(w.tenantId)).toBe(1);
    expect(await seen(crypto.randomUUID())).toBe(0);
    expect(await metricValue(push.metrics, 'parley_push_sent_total', { platform: 'web' })).toBe(1);
    expect((await push.metrics.registry.getSingleMetric('parley_push_send_seconds')!.get()).values.some((v) => v.value > 0)).toBe(true);
    expect(logLines.join('')).not.toContain(agentSub.auth.toString('base64url'));
  });

  it('sends nothing to a device with a live socket, nor to the sender of a message', async () => {
    w.online.ids.add(w.agentDeviceId);
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    w.online.ids.clear();
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message({ sender_device_id: w.agentDeviceId }));
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'typing', { conversation_id: 'x' });
    expect(await outboxRows(w.db)).toEqual([]);
    expect(await push.worker.pollOnce()).toBe(0);
    expect(svc.received).toHaveLength(0);
  });

  it('collapses the pushes of one device and kind within 10 s into one, counting the events', async () => {
    for (let i = 0; i < 3; i++) await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message({ priority: i === 1 ? 'urgent' : 'normal' }));
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received).toHaveLength(1);
    expect(decrypt(svc.received[0]!, agentSub)).toMatchObject({ event: 'message', count: 3 });
    expect(svc.received[0]!.headers.urgency).toBe('high');
    // The next event waits for the end of the window; another kind does not.
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message({ priority: 'normal' }));
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'room_message', { room_id: '22222222-2222-4222-8222-222222222222', sender_device_id: w.ownerDeviceId, priority: 'normal', ciphertext: 'SECRET' });
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received).toHaveLength(2);
    expect(svc.received[1]!.headers).toMatchObject({ topic: 'room_message', urgency: 'normal' });
    expect(decrypt(svc.received[1]!, agentSub)).toEqual({ event: 'room_message', tenant_id: w.tenantId, device_id: w.agentDeviceId, room_id: '22222222-2222-4222-8222-222222222222', count: 1, sender_name: 'Owner phone' });
    const waiting = (await outboxRows(w.db)).find((r) => r.kind === 'message')!;
    expect(waiting).toMatchObject({ status: 'pending', count: 1 });
    expect(waiting.due_in_ms).toBeGreaterThan(8_000);
    expect(waiting.due_in_ms).toBeLessThanOrEqual(10_000);
    await makeDue(w.db);
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received[2]!.headers).toMatchObject({ topic: 'message', urgency: 'normal' });
    expect(decrypt(svc.received[2]!, agentSub)).toMatchObject({ event: 'message', count: 1 });
  });

  it('wakes offline owner devices for a decision (high urgency) and skips online ones', async () => {
    const otherOwner = await w.addDevice('owner', 'Owner laptop');
    const ownerSub = newSubscription(`${svc.url}/push/owner`);
    const laptopSub = newSubscription(`${svc.url}/push/laptop`);
    await service.register(w.tenantId, w.ownerDeviceId, 'web', ownerSub.token);
    await service.register(w.tenantId, otherOwner, 'web', laptopSub.token);
    w.online.ids.add(otherOwner);
    await notify(push, w.tenantId, { ownersOfTenant: w.tenantId }, 'decision_created', { decision_id: '33333333-3333-4333-8333-333333333333', device_id: w.agentDeviceId, title: 'SECRET title' });
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received.map((r) => r.url)).toEqual(['/push/owner']);
    expect(svc.received[0]!.headers).toMatchObject({ urgency: 'high', topic: 'decision_request' });
    expect(decrypt(svc.received[0]!, ownerSub)).toEqual({ event: 'decision_request', tenant_id: w.tenantId, device_id: w.ownerDeviceId, decision_id: '33333333-3333-4333-8333-333333333333', count: 1 });
  });

  it('retries after a 503 with backoff, then sends', async () => {
    svc.next.push(503);
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    expect(await push.worker.pollOnce()).toBe(1);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1, count: 1 })]);
    await makeDue(w.db);
    expect(await push.worker.pollOnce()).toBe(1);
    expect(svc.received).toHaveLength(2);
    expect(decrypt(svc.received[1]!, agentSub)).toMatchObject({ count: 1 });
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ status: 'sent', attempts: 0 })]);
    expect(await metricValue(push.metrics, 'parley_push_failed_total', { platform: 'web', outcome: 'retry' })).toBe(1);
  });

  it('gives up after the last attempt, and at once on a 400', async () => {
    svc.next.push(500, 500, 500, 400);
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    for (let i = 0; i < 3; i++) {
      await makeDue(w.db);
      expect(await push.worker.pollOnce()).toBe(1);
    }
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ status: 'failed', attempts: 3, count: 0 })]);
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    expect(await push.worker.pollOnce()).toBe(1);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ status: 'failed', attempts: 1 })]);
    expect(await metricValue(push.metrics, 'parley_push_failed_total', { platform: 'web', outcome: 'failed' })).toBe(2);
  });

  it('queues events without holding up the caller and handles a burst in batches', async () => {
    let presenceCalls = 0;
    const counting = await w.push({ deps: { presence: { online: async (ids) => (presenceCalls++, new Set(ids.filter((id) => w.online.ids.has(id)))) } } });
    const started = Date.now();
    for (let i = 0; i < 250; i++) void counting.sink.enqueue(w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    expect(Date.now() - started).toBeLessThan(1000);
    await counting.settled();
    expect(presenceCalls).toBe(3);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ kind: 'message', status: 'pending', count: 250 })]);
  });

  it('two workers on the same database send a push once', async () => {
    const second = await w.push();
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', message());
    const claimed = await Promise.all([push.worker.pollOnce(), second.worker.pollOnce(), push.worker.pollOnce()]);
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(1);
    expect(svc.received).toHaveLength(1);
    expect(second.vapid.publicKey).toBe(push.vapid.publicKey);
  });

  it('the notifier hands device and owner events to the push sink the factory added, after the webhook sink', async () => {
    const seen: string[] = [];
    push.notifier.setWebhookSink({ enqueue: async (_t, _a, event) => void seen.push(`webhook:${event}`) });
    push.notifier.addSink({ handles: () => false, enqueue: async (_t, _a, event) => void seen.push(`never:${event}`) });
    await push.notifier.toDevices(w.tenantId, [w.agentDeviceId], 'message', message());
    await push.notifier.toEach(w.tenantId, 'room_message', [{ deviceIds: [w.agentDeviceId], data: { room_id: '22222222-2222-4222-8222-222222222222', priority: 'normal' } }]);
    await push.notifier.toOwners(w.tenantId, 'device_pending', { device_id: w.agentDeviceId, name: 'New agent' });
    await push.settled();
    expect(seen).toEqual(['webhook:message', 'webhook:room_message', 'webhook:device_pending']);
    // The two owner devices registered above are offline: both are told of the enrolment.
    expect((await outboxRows(w.db)).map((r) => r.kind)).toEqual(['enrollment_pending', 'enrollment_pending', 'message', 'room_message']);
  });

  it('a 410 removes the registration and audits it', async () => {
    const sub = newSubscription(`${svc.url}/push/gone`);
    const device = await w.addDevice('agent', 'Gone agent');
    const { push_token_id } = await service.register(w.tenantId, device, 'web', sub.token);
    svc.next.push(410);
    await notify(push, w.tenantId, { deviceIds: [device] }, 'message', message({ recipient_device_id: device }));
    expect(await push.worker.pollOnce()).toBe(1);
    expect((await service.list(w.tenantId)).registrations.map((r) => r.push_token_id)).not.toContain(push_token_id);
    expect(await outboxRows(w.db)).toEqual([]);
    const audit = await withTenant(w.db, w.tenantId, (tx) => tx.execute(sql`select type, actor, subject, data from audit_events where type = 'push.registration_removed'`));
    expect((audit as unknown as { rows: unknown[] }).rows).toEqual([{ type: 'push.registration_removed', actor: 'system:push', subject: push_token_id, data: { device_id: device, platform: 'web', reason: 'gone' } }]);
    expect(await metricValue(push.metrics, 'parley_push_removed_total', { platform: 'web' })).toBe(1);
  });
});

describe('push registrations and the VAPID key', () => {
  let w: PushWorld;

  beforeAll(async () => {
    w = await pushWorld();
  });
  afterAll(() => w?.close());

  it('creates the VAPID key once, sealed, and every instance loads the same one', async () => {
    const a = await w.push();
    const b = await w.push();
    expect(b.vapid).toEqual(a.vapid);
    expect(Buffer.from(a.vapid.publicKey, 'base64url')).toHaveLength(65);
    expect(Buffer.from(a.vapid.publicKey, 'base64url')[0]).toBe(4);
    const app = Fastify();
    registerErrorHandling(app);
    await a.routes(app);
    const served = await app.inject({ method: 'GET', url: '/api/v1/push/vapid-public-key' });
    expect(served.statusCode).toBe(200);
    expect(served.json()).toEqual({ public_key: a.vapid.publicKey });
    await app.close();
    const rows = (await crossTenant(w.db, 'test assertion', (tx) => tx.execute(sql`select public_key_multibase, private_key_multibase from platform_keys where purpose = ${VAPID_KEY_PURPOSE}`))) as unknown as {
      rows: { public_key_multibase: string; private_key_multibase: string }[];
    };
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.public_key_multibase).toBe(`u${a.vapid.publicKey}`);
    expect(rows.rows[0]!.private_key_multibase).not.toContain(a.vapid.privateKey);
    expect(logLines.join('')).toContain('apns off');
    expect(logLines.join('')).toContain('fcm off');
  });

  it('checks web tokens: a PushSubscription JSON whose endpoint passes the webhook URL rules', async () => {
    const strict = new PushService(w.db, { allowHttp: false, allowPrivate: false });
    const good = newSubscription('https://push.example.net/send/abc');
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'web', good.token)).resolves.toMatchObject({ platform: 'web', device_id: w.agentDeviceId });
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'web', 'https://push.example/abc')).rejects.toMatchObject({ status: 400 });
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'web', newSubscription('http://push.example.net/x').token)).rejects.toMatchObject({ status: 400 });
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'web', newSubscription('https://10.0.0.1/x').token)).rejects.toMatchObject({ status: 400 });
    const badKeys = JSON.stringify({ endpoint: 'https://push.example.net/x', keys: { p256dh: 'AAAA', auth: 'BBBB' } });
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'web', badKeys)).rejects.toMatchObject({ status: 400 });
    await expect(strict.register(w.tenantId, w.agentDeviceId, 'apns', 'any-apns-token')).resolves.toMatchObject({ platform: 'apns' });
  });

  it('lists registrations without tokens and removes one (audited, 404 for an unknown id)', async () => {
    const svc = new PushService(w.db, { allowHttp: false, allowPrivate: false });
    const { push_token_id } = await svc.register(w.tenantId, w.ownerDeviceId, 'fcm', 'fcm-secret-token');
    const list = await svc.list(w.tenantId);
    expect(list.registrations).toContainEqual({ push_token_id, device_id: w.ownerDeviceId, platform: 'fcm', created_at: expect.any(String) });
    expect(JSON.stringify(list)).not.toContain('fcm-secret-token');
    await svc.remove(w.tenantId, push_token_id, 'owner-1');
    expect((await svc.list(w.tenantId)).registrations.map((r) => r.push_token_id)).not.toContain(push_token_id);
    await expect(svc.remove(w.tenantId, push_token_id, 'owner-1')).rejects.toMatchObject({ status: 404 });
    const audit = (await withTenant(w.db, w.tenantId, (tx) => tx.execute(sql`select actor, data from audit_events where subject = ${push_token_id}`))) as unknown as { rows: unknown[] };
    expect(audit.rows).toEqual([{ actor: 'owner-1', data: { device_id: w.ownerDeviceId, platform: 'fcm', reason: 'owner' } }]);
  });
});
