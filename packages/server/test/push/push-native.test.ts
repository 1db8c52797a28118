/**
 * Push delivery to APNs and FCM (design §8.36 "Push delivery"): the factory against a real
 * database, APNs against an HTTP/2 TLS double (token authentication: the ES256 provider JWT is
 * checked against the .p8 key's public half), FCM against an HTTP double of both its OAuth token
 * endpoint (the service account's RS256 JWT grant is checked) and its HTTP v1 send endpoint.
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { crossTenant } from '../../src/db/tenant.js';
import { LOOPBACK_CERT, LOOPBACK_KEY } from '../../testing/loopback-tls.js';
import { makeDue, metricValue, notify, outboxRows, pushWorld, ServiceDouble, type PushWorld } from './push-fixtures.js';

type PushFactory = Awaited<ReturnType<PushWorld['push']>>;

/** A JWT's header and claims after checking its signature with `key` (ES256 raw r||s, or RS256). */
function checkJwt(jwt: string, key: KeyObject): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>;
  const input = Buffer.from(`${h}.${p}`);
  const ok = header.alg === 'ES256' ? verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url')) : verify('sha256', input, key, Buffer.from(s!, 'base64url'));
  expect(ok, `${String(header.alg)} signature`).toBe(true);
  return { header, claims: JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown> };
}

interface H2Request {
  headers: http2.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** An APNs double over HTTP/2 and TLS: records requests, answers the queued `{status, reason}` (200 when empty). */
async function apnsDouble(): Promise<{ url: string; received: H2Request[]; next: { status: number; reason?: string }[]; close(): Promise<void> }> {
  const received: H2Request[] = [];
  const next: { status: number; reason?: string }[] = [];
  const server = http2.createSecureServer({ cert: LOOPBACK_CERT, key: LOOPBACK_KEY });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      received.push({ headers, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> });
      const answer = next.shift() ?? { status: 200 };
      stream.respond({ ':status': answer.status, 'apns-id': 'test-apns-id' });
      stream.end(answer.reason ? JSON.stringify({ reason: answer.reason }) : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    next,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Sessions the sender keeps open would hold close() back.
        setTimeout(resolve, 200).unref();
      }),
  };
}

describe('push delivery: APNs', () => {
  let w: PushWorld;
  let apns: Awaited<ReturnType<typeof apnsDouble>>;
  let push: PushFactory;
  let signingKey: KeyObject;
  let dir: string;
  const deviceToken = randomBytes(32).toString('hex');

  beforeAll(async () => {
    w = await pushWorld();
    apns = await apnsDouble();
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    signingKey = pair.publicKey;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-apns-'));
    const keyFile = path.join(dir, 'AuthKey_KEY123.p8');
    fs.writeFileSync(keyFile, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    push = await w.push({
      env: { APNS_KEY_FILE: keyFile, APNS_KEY_ID: 'KEY123', APNS_TEAM_ID: 'TEAM456', APNS_TOPIC: 'com.example.parley', APNS_ENDPOINT: apns.url },
      deps: { apnsCa: [LOOPBACK_CERT], worker: { retryBaseMs: 1 } },
    });
    await push.service.register(w.tenantId, w.agentDeviceId, 'apns', deviceToken);
  });
  afterEach(async () => {
    apns.received.length = 0;
    apns.next.length = 0;
    await crossTenant(w.db, 'test reset', (tx) => tx.execute(sql`delete from push_deliveries`));
  });
  afterAll(async () => {
    await w?.close();
    await apns?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is on when configured and sends a token-authenticated alert push with metadata only', async () => {
    expect(push.platforms).toEqual(['web', 'apns']);
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'decision_created', { decision_id: '33333333-3333-4333-8333-333333333333', title: 'SECRET' });
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'rental_message', { rental_id: '44444444-4444-4444-8444-444444444444', priority: 'normal', ciphertext: 'SECRET' });
    expect(await push.worker.pollOnce()).toBe(2);
    expect(apns.received).toHaveLength(2);
    const decision = apns.received.find((r) => r.headers['apns-collapse-id'] === 'decision_request')!;
    expect(decision.headers).toMatchObject({ ':method': 'POST', ':path': `/3/device/${deviceToken}`, 'apns-topic': 'com.example.parley', 'apns-push-type': 'alert', 'apns-priority': '10' });
    const expiresIn = Number(decision.headers['apns-expiration']) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(86_000);
    expect(expiresIn).toBeLessThanOrEqual(86_400);
    const jwt = /^bearer (.+)$/i.exec(String(decision.headers.authorization))![1]!;
    const { header, claims } = checkJwt(jwt, signingKey);
    expect(header).toMatchObject({ alg: 'ES256', kid: 'KEY123' });
    expect(claims.iss).toBe('TEAM456');
    expect(decision.body).toEqual({
      aps: { alert: { 'loc-key': 'PARLEY_DECISION_REQUEST' }, 'mutable-content': 1 },
      parley: { event: 'decision_request', tenant_id: w.tenantId, device_id: w.agentDeviceId, decision_id: '33333333-3333-4333-8333-333333333333', count: 1 },
    });
    const rental = apns.received.find((r) => r.headers['apns-collapse-id'] === 'rental_message')!;
    expect(rental.headers['apns-priority']).toBe('5');
    expect(rental.body.parley).toMatchObject({ event: 'rental_message', rental_id: '44444444-4444-4444-8444-444444444444' });
    expect(JSON.stringify(apns.received.map((r) => r.body))).not.toContain('SECRET');
    expect(await metricValue(push.metrics, 'parley_push_sent_total', { platform: 'apns' })).toBe(2);
  });

  it('retries after a 503 and removes the registration on 410 Unregistered', async () => {
    apns.next.push({ status: 503, reason: 'ServiceUnavailable' });
    await notify(push, w.tenantId, { deviceIds: [w.agentDeviceId] }, 'message', { conversation_id: '11111111-1111-4111-8111-111111111111', priority: 'normal' });
    expect(await push.worker.pollOnce()).toBe(1);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1 })]);
    apns.next.push({ status: 410, reason: 'Unregistered' });
    await makeDue(w.db);
    expect(await push.worker.pollOnce()).toBe(1);
    expect(apns.received).toHaveLength(2);
    expect((await push.service.list(w.tenantId)).registrations).toEqual([]);
    expect(await metricValue(push.metrics, 'parley_push_removed_total', { platform: 'apns' })).toBe(1);
  });
});

describe('push delivery: FCM', () => {
  let w: PushWorld;
  let fcm: ServiceDouble;
  let push: PushFactory;
  let accountKey: KeyObject;
  let dir: string;
  const grants: Record<string, unknown>[] = [];

  beforeAll(async () => {
    w = await pushWorld();
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    accountKey = createPublicKey(pair.publicKey.export({ type: 'spki', format: 'pem' }));
    fcm = await new ServiceDouble((r, res) => {
      if (r.url !== '/token') return false;
      const form = new URLSearchParams(r.body.toString());
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      grants.push(checkJwt(form.get('assertion')!, accountKey).claims);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'ya29.test-access', expires_in: 3600, token_type: 'Bearer' }));
      return true;
    }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-fcm-'));
    const accountFile = path.join(dir, 'service-account.json');
    fs.writeFileSync(
      accountFile,
      JSON.stringify({
        type: 'service_account',
        project_id: 'proj-1',
        private_key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: 'push@proj-1.iam.gserviceaccount.com',
        token_uri: `${fcm.url}/token`,
      }),
    );
    push = await w.push({ env: { FCM_SERVICE_ACCOUNT_FILE: accountFile, FCM_ENDPOINT: fcm.url }, deps: { worker: { retryBaseMs: 1 } } });
    await push.service.register(w.tenantId, w.ownerDeviceId, 'fcm', 'fcm-registration-token');
  });
  afterEach(async () => {
    fcm.received.length = 0;
    fcm.next.length = 0;
    await crossTenant(w.db, 'test reset', (tx) => tx.execute(sql`delete from push_deliveries`));
  });
  afterAll(async () => {
    await w?.close();
    await fcm?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets an access token with the service account and sends an HTTP v1 data message', async () => {
    expect(push.platforms).toEqual(['web', 'fcm']);
    await notify(push, w.tenantId, { ownersOfTenant: w.tenantId }, 'policy_alert', { held_message_id: '55555555-5555-4555-8555-555555555555', room_id: '22222222-2222-4222-8222-222222222222', priority: 'urgent', sender_device_id: w.agentDeviceId });
    expect(await push.worker.pollOnce()).toBe(1);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ iss: 'push@proj-1.iam.gserviceaccount.com', scope: 'https://www.googleapis.com/auth/firebase.messaging' });
    expect(fcm.received).toHaveLength(1);
    const r = fcm.received[0]!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/v1/projects/proj-1/messages:send');
    expect(r.headers.authorization).toBe('Bearer ya29.test-access');
    const { message } = JSON.parse(r.body.toString()) as { message: Record<string, unknown> };
    expect(message).toEqual({
      token: 'fcm-registration-token',
      data: {
        event: 'held_message',
        tenant_id: w.tenantId,
        device_id: w.ownerDeviceId,
        held_message_id: '55555555-5555-4555-8555-555555555555',
        room_id: '22222222-2222-4222-8222-222222222222',
        count: '1',
        sender_name: 'Build agent',
      },
      android: { collapse_key: 'held_message', priority: 'HIGH', ttl: '86400s' },
      apns: { headers: { 'apns-collapse-id': 'held_message', 'apns-priority': '10', 'apns-expiration': expect.stringMatching(/^\d+$/) } },
      webpush: { headers: { Topic: 'held_message', Urgency: 'high', TTL: '86400' } },
    });
    // A notify-only policy alert holds nothing and wakes no one.
    await notify(push, w.tenantId, { ownersOfTenant: w.tenantId }, 'policy_alert', { room_id: '22222222-2222-4222-8222-222222222222', sender_device_id: w.agentDeviceId });
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ kind: 'held_message', status: 'sent' })]);
  });

  it('retries after a 503 and removes the registration on 404 UNREGISTERED, reusing the access token', async () => {
    fcm.next.push(503, 404);
    await notify(push, w.tenantId, { ownersOfTenant: w.tenantId }, 'spend_alert', { agent_id: w.agentDeviceId, severity: 'critical', title: 'SECRET' });
    expect(await push.worker.pollOnce()).toBe(1);
    expect(await outboxRows(w.db)).toEqual([expect.objectContaining({ kind: 'spend_alert', status: 'pending', attempts: 1, urgent: false })]);
    await makeDue(w.db);
    expect(await push.worker.pollOnce()).toBe(1);
    expect(fcm.received).toHaveLength(2);
    expect((await push.service.list(w.tenantId)).registrations).toEqual([]);
    expect(grants).toHaveLength(1);
    expect(await metricValue(push.metrics, 'parley_push_failed_total', { platform: 'fcm', outcome: 'retry' })).toBe(1);
    expect(await metricValue(push.metrics, 'parley_push_removed_total', { platform: 'fcm' })).toBe(1);
  });
});

describe('push settings', () => {
  it('turns APNs and FCM on only with their settings, all APNs ones or none', () => {
    const base = { PUBLIC_URL: 'https://chat.example.org:8443/app' };
    expect(loadConfig(base).push).toEqual({ vapidSubject: 'mailto:operator@chat.example.org', apns: undefined, fcm: undefined });
    expect(loadConfig({ ...base, VAPID_SUBJECT: 'https://example.org/contact' }).push.vapidSubject).toBe('https://example.org/contact');
    const apns = { APNS_KEY_FILE: '/k.p8', APNS_KEY_ID: 'K', APNS_TEAM_ID: 'T', APNS_TOPIC: 'com.example.app' };
    expect(loadConfig({ ...base, ...apns }).push.apns).toEqual({ keyFile: '/k.p8', keyId: 'K', teamId: 'T', topic: 'com.example.app', endpoint: undefined });
    expect(() => loadConfig({ ...base, APNS_KEY_FILE: '/k.p8', APNS_KEY_ID: 'K' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, APNS_KEY_FILE: '/k.p8', APNS_KEY_ID: 'K' })).toThrow(/missing: APNS_TEAM_ID, APNS_TOPIC/);
    expect(loadConfig({ ...base, FCM_SERVICE_ACCOUNT_FILE: '/sa.json', FCM_ENDPOINT: 'http://127.0.0.1:1' }).push.fcm).toEqual({ serviceAccountFile: '/sa.json', endpoint: 'http://127.0.0.1:1' });
  });
});
