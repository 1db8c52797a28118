/**
 * Webhook SSRF guard (design §8.11; docs/decisions.md "Webhook delivery"), with the default
 * configuration (WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_HTTP false):
 * - registration answers 400 for http, userinfo, over-long URLs and non-public IP literals;
 * - delivery refuses a host name resolving to a non-public address, and a stored non-public IP
 *   literal, before connecting: the delivery is `failed` with `blocked address` after one attempt
 *   and the (local) receiver sees nothing; a stored http URL is `blocked url`;
 * - address classification (ipaddr.js) and the delivery-time lookup refuse 127.0.0.1, 10.x,
 *   [::1], 169.254.169.254 and the other non-public ranges; the lookup refuses a name when ANY of
 *   its addresses is non-public.
 * No test here opens a connection to anything but 127.0.0.1 / ::1.
 */
import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { postWebhook } from '../../src/modules/webhooks/http.js';
import { BlockedTargetError, guardedLookup, isPublicAddress, webhookUrlProblem, type Resolver } from '../../src/modules/webhooks/target.js';
import { activeAgent, createInvite, enroll, newOwner, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { Receiver, deliveriesOf, sleep, waitFor } from '../../testing/webhook-receiver.js';

const NON_PUBLIC = [
  '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '100.64.0.1', '169.254.169.254',
  '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1', '240.0.0.1',
  '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
  '64:ff9b::a00:1', '2002:a00:1::1', '2001:db8::1', 'not-an-ip', '',
  // IPv4 embedded in IPv6 (compatible ::/96, translated ::ffff:0:0/96, NAT64, 6to4, Teredo) and IPv6 outside 2000::/3
  '::127.0.0.1', '::7f00:1', '::10.0.0.1', '::169.254.169.254', '::8.8.8.8', '::ffff:0:127.0.0.1', '64:ff9b::127.0.0.1',
  '64:ff9b:1::a00:1', '2002:7f00:1::', '2001::7f00:1', '100::1', 'fec0::1', '400::1',
];
const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8'];

/** A resolver answering fixed addresses (no DNS, no socket). */
const fixed =
  (...addresses: string[]): Resolver =>
  (_host, _opts, cb) =>
    cb(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

/** Run a lookup function; answers its error or its addresses. */
function runLookup(lookup: ReturnType<typeof guardedLookup>, all: boolean): Promise<{ err: Error | null; result: unknown }> {
  return new Promise((resolve) => lookup('hooks.example', { all } as dns.LookupOptions, (err, address, family) => resolve({ err, result: all ? address : { address, family } })));
}

describe('webhook target policy (pure)', () => {
  it('classifies loopback, private, ULA, link-local, CGNAT, multicast, unspecified and special ranges as non-public', () => {
    for (const ip of NON_PUBLIC) expect(isPublicAddress(ip), ip).toBe(false);
    for (const ip of PUBLIC) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('refuses http, userinfo, over-long URLs and non-public IP literals unless allowed', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    expect(webhookUrlProblem('https://hooks.example.com/in?x=1', strict)).toBeUndefined();
    expect(webhookUrlProblem('https://8.8.8.8/in', strict)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.example.com/in', strict)).toBe('webhook url must use https');
    expect(webhookUrlProblem('http://hooks.example.com/in', { ...strict, allowHttp: true })).toBeUndefined();
    expect(webhookUrlProblem('ftp://hooks.example.com/in', { ...strict, allowHttp: true })).toBe('webhook url must use https or http');
    expect(webhookUrlProblem('https://user:pass@hooks.example.com/in', strict)).toMatch(/credentials/);
    expect(webhookUrlProblem('https://user@hooks.example.com/in', strict)).toMatch(/credentials/);
    expect(webhookUrlProblem(`https://hooks.example.com/${'a'.repeat(2048)}`, strict)).toMatch(/at most 2048/);
    expect(webhookUrlProblem('not a url', strict)).toMatch(/valid absolute URL/);
    for (const host of ['127.0.0.1', '10.1.2.3', '[::1]', '169.254.169.254', '[fd00::1]', '[::ffff:127.0.0.1]', '0.0.0.0', '[::127.0.0.1]', '[::10.0.0.1]', '[64:ff9b::127.0.0.1]', '[2002:7f00:1::]']) {
      expect(webhookUrlProblem(`https://${host}/in`, strict), host).toMatch(/non-public/);
      expect(webhookUrlProblem(`https://${host}/in`, { ...strict, allowPrivate: true }), host).toBeUndefined();
    }
  });

  it('the delivery lookup refuses a name when any resolved address is non-public (10.x, 169.254.169.254, loopback)', async () => {
    for (const addrs of [['10.1.2.3'], ['169.254.169.254'], ['127.0.0.1'], ['::1'], ['8.8.8.8', '10.0.0.1'], ['2606:4700:4700::1111', 'fd00::1'], ['::7f00:1']]) {
      for (const all of [true, false]) {
        const { err } = await runLookup(guardedLookup(false, fixed(...addrs)), all);
        expect(err, addrs.join()).toBeInstanceOf(BlockedTargetError);
        expect(err!.message).toBe('blocked address');
      }
    }
    expect(await runLookup(guardedLookup(false, fixed('8.8.8.8', '2606:4700:4700::1111')), true)).toEqual({
      err: null,
      result: [
        { address: '8.8.8.8', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
    });
    expect(await runLookup(guardedLookup(false, fixed('8.8.8.8')), false)).toEqual({ err: null, result: { address: '8.8.8.8', family: 4 } });
    expect((await runLookup(guardedLookup(true, fixed('10.1.2.3')), false)).err).toBeNull();
  });

  it('postWebhook refuses before connecting: http when not allowed, userinfo, a loopback literal, a name resolving to loopback', async () => {
    const strict = { allowHttp: false, allowPrivate: false, timeoutMs: 2000 };
    const post = (url: string, opts = strict) => postWebhook(url, {}, '{}', opts).then(() => 'sent', (e: Error) => e.message);
    expect(await post('http://hooks.example/in')).toBe('blocked url');
    expect(await post('https://u:p@hooks.example/in')).toBe('blocked url');
    expect(await post('https://127.0.0.1:1/in')).toBe('blocked address');
    expect(await post('https://[::1]:1/in')).toBe('blocked address');
    expect(await postWebhook('https://hooks.example:1/in', {}, '{}', { ...strict, resolve: fixed('127.0.0.1', '::1') }).catch((e: Error) => e.message)).toBe('blocked address');
  });

  it('postWebhook, private targets allowed: answers the status, times out as TimeoutError, stops on abort', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      req.resume().on('end', () => res.writeHead(req.url === '/gone' ? 410 : 204).end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://localhost:${(server.address() as AddressInfo).port}`;
    const open = { allowHttp: true, allowPrivate: true, timeoutMs: 300 };
    try {
      expect(await postWebhook(`${base}/ok`, { 'content-type': 'application/json' }, '{"a":1}', open)).toBe(204);
      expect(await postWebhook(`${base}/gone`, {}, '{}', open)).toBe(410);
      await expect(postWebhook(`${base}/slow`, {}, '{}', open)).rejects.toMatchObject({ name: 'TimeoutError' });
      const abort = new AbortController();
      const pending = postWebhook(`${base}/slow`, {}, '{}', { ...open, timeoutMs: 5000, signal: abort.signal });
      abort.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_HTTP default to false and parse booleans', () => {
    expect(loadConfig({}).webhooks).toMatchObject({ allowPrivate: false, allowHttp: false });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOW_HTTP: '1' }).webhooks).toMatchObject({ allowPrivate: true, allowHttp: true });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOW_HTTP: 'no' }).webhooks).toMatchObject({ allowPrivate: false, allowHttp: false });
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'maybe' })).toThrow(ConfigError);
  });
});

describe('webhook SSRF guard with the default configuration', () => {
  let t: TestApp;
  const rx = new Receiver();
  let owner: Owner;
  let port: string;

  beforeAll(async () => {
    await rx.start();
    port = new URL(rx.base).port;
    t = await startApp({ env: { RATE_LIMITS: 'off', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '3' } });
    owner = await newOwner(t);
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  const setHook = (url: string, deviceId: string) => t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/webhook`, headers: owner.auth, payload: { url } });
  const pendingAgent = async (): Promise<string> => (await enroll(t, (await createInvite(t, owner)).token)).res.body.device_id as string;
  const approve = (deviceId: string) => t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/approve`, headers: owner.auth });
  /** Simulates a URL accepted earlier (another configuration): written past the registration check. */
  const storeUrl = (deviceId: string, url: string) => t.app.parley.database.db.execute(sql`update devices set webhook_url = ${url} where id = ${deviceId}`);

  it('registration answers 400 with a clear detail for http, userinfo, long URLs and non-public IP literals', async () => {
    const agentId = await pendingAgent();
    const cases: [string, RegExp][] = [
      [`http://hooks.example.com/in`, /must use https/],
      ['https://user:pass@hooks.example.com/in', /credentials/],
      [`https://hooks.example.com/${'a'.repeat(2100)}`, /2048/],
      ['https://127.0.0.1/in', /non-public/],
      ['https://10.1.2.3/in', /non-public/],
      ['https://[::1]/in', /non-public/],
      ['https://[::127.0.0.1]/in', /non-public/],
      ['https://[::ffff:0:a00:1]/in', /non-public/],
      ['https://169.254.169.254/latest/meta-data', /non-public/],
    ];
    for (const [url, detail] of cases) {
      const res = await setHook(url, agentId);
      expect(res.status, url).toBe(400);
      expect(res.body.detail, url).toMatch(detail);
    }
    const agent = await activeAgent(t, owner);
    for (const url of ['http://hooks.example.com/in', 'https://[::1]:8080/in']) {
      const self = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url } });
      expect(self.status, url).toBe(400);
    }
    expect((await setHook('https://hooks.example.com/in', agentId)).status).toBe(200);
  });

  it('a host name resolving to loopback is refused at delivery: failed, blocked address, one attempt, nothing received', async () => {
    const agentId = await pendingAgent();
    const reg = await setHook(`https://localhost:${port}/resolved`, agentId);
    expect(reg.status).toBe(200);
    expect((await approve(agentId)).status).toBe(200);
    const row = await waitFor(async () => (await deliveriesOf(t, agentId)).find((d) => d.status === 'failed'), 'blocked delivery');
    expect(row).toMatchObject({ attempts: 1, last_status: null, last_error: 'blocked address' });
    await sleep(100);
    expect(rx.requests).toEqual([]);
  });

  it.each([
    ['a 127.0.0.1 literal', () => `https://127.0.0.1:${port}/literal4`, 'blocked address'],
    ['a [::1] literal', () => `https://[::1]:${port}/literal6`, 'blocked address'],
    ['an http URL', () => `http://localhost:${port}/plain`, 'blocked url'],
  ])('%s stored earlier is refused at delivery', async (_name, url, error) => {
    const agentId = await pendingAgent();
    expect((await setHook('https://hooks.example.com/in', agentId)).status).toBe(200);
    await storeUrl(agentId, url());
    expect((await approve(agentId)).status).toBe(200);
    const row = await waitFor(async () => (await deliveriesOf(t, agentId)).find((d) => d.status === 'failed'), 'blocked delivery');
    expect(row).toMatchObject({ attempts: 1, last_error: error });
    expect(rx.requests).toEqual([]);
  });
});
