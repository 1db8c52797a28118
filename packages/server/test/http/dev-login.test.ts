/**
 * Development sign-in (design §8.31): `POST /api/v1/dev/login {email}` answers an owner JWT of the
 * built-in identity provider that works as one (it provisions a tenant); bad input is 400; a
 * server that does not listen on a loopback address refuses it (403), and so does a loopback
 * server asked under a foreign Host or Origin (DNS rebinding), on every route. (With OIDC configured it is
 * 404: platform.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '@parley/protocol';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('development sign-in', () => {
  let t: TestApp;
  let wide: TestApp;
  let proxied: TestApp;
  let listening: TestApp;
  beforeAll(async () => {
    [t, wide, proxied, listening] = await Promise.all([
      startApp(),
      startApp({ env: { HOST: '0.0.0.0' } }),
      startApp({ env: { PUBLIC_URL: 'https://parley.example.com' } }),
      startApp({ listen: true }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), wide?.close(), proxied?.close(), listening?.close()]);
  });

  it('answers an owner JWT for the address, lowercased, that provisions a tenant', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/dev/login', payload: { email: 'Ada@Example.com' } });
    expect(res.status).toBe(200);
    expect(res.body.token.split('.')).toHaveLength(3);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now() + 11 * 3600_000);
    expect(JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString()).sub).toBe('ada@example.com');
    const tenant = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${res.body.token}` }, payload: { name: 'Ada Co' } });
    expect(tenant.status).toBe(201);
  });

  it('refuses a malformed body (400) and a server that is not on a loopback address (403)', async () => {
    for (const payload of [{}, { email: 'not-an-address' }, { email: 'two words@example.com' }, { email: 42 }]) {
      const res = await t.request({ method: 'POST', url: '/api/v1/dev/login', payload });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    const refused = await wide.request({ method: 'POST', url: '/api/v1/dev/login', payload: { email: 'ada@example.com' } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/listens on 0\.0\.0\.0, not a loopback address/);
  });

  it('GET /auth/config names the development provider, and whether this server accepts its sign-in', async () => {
    const local = await t.request({ method: 'GET', url: '/api/v1/auth/config' });
    expect(local.status).toBe(200);
    expect(local.body).toEqual({ mode: 'dev', dev_login: true });
    const remote = await wide.request({ method: 'GET', url: '/api/v1/auth/config' });
    expect(remote.body).toEqual({ mode: 'dev', dev_login: false });
  });

  it('refuses a page that rebinds its own name to the loopback server (Host or Origin not a name the server serves)', async () => {
    const login = (headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/dev/login', headers, payload: { email: 'operator@example.com' } });
    const rebound = await login({ host: 'rebind.attacker.example:8080', origin: 'http://rebind.attacker.example:8080' });
    expect(rebound.status).toBe(403);
    expect(rebound.body.detail).toMatch(/DNS rebinding/);
    expect(rebound.body.token).toBeUndefined();
    // A loopback Host with a foreign Origin (a page elsewhere posting to the loopback address) is refused too.
    const foreignOrigin = await login({ host: '127.0.0.1:8080', origin: 'https://evil.example' });
    expect(foreignOrigin.status).toBe(403);
    expect(foreignOrigin.body.detail).toMatch(/Host or Origin/);
    for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080', '127.1', 'LOCALHOST']) {
      expect((await login({ host, origin: `http://${host}` })).status, host).toBe(200);
    }
    expect((await login({ host: 'localhost:8080' })).status).toBe(200);
    // Nor do the owner routes answer a foreign Host: an owner token obtained otherwise is no use to such a page.
    const token = (await login({ host: 'localhost' })).body.token as string;
    await t.request({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${token}` }, payload: { name: 'Op Co' } });
    const settings = (host: string) => t.request({ method: 'GET', url: '/api/v1/settings', headers: { host, authorization: `Bearer ${token}` } });
    expect((await settings('localhost:8080')).status).toBe(200);
    const owner = await settings('rebind.attacker.example:8080');
    expect(owner.status).toBe(403);
    expect(owner.body.detail).toMatch(/DNS rebinding/);
    expect((await t.request({ method: 'GET', url: '/health', headers: { host: 'rebind.attacker.example' } })).status).toBe(403);
    // The host of PUBLIC_URL is served (a loopback listener behind a proxy with a public name).
    expect((await proxied.request({ method: 'GET', url: '/health', headers: { host: 'parley.example.com' } })).status).toBe(200);
    expect((await proxied.request({ method: 'POST', url: '/api/v1/dev/login', headers: { host: 'parley.example.com', origin: 'https://parley.example.com' }, payload: { email: 'a@example.com' } })).status).toBe(200);
    expect((await proxied.request({ method: 'GET', url: '/health', headers: { host: 'other.example.com' } })).status).toBe(403);
    // A listener on another address is not checked here (its own DNS and proxies decide).
    expect((await wide.request({ method: 'GET', url: '/health', headers: { host: 'anything.example' } })).status).toBe(200);
  });

  it('refuses a WebSocket upgrade naming a foreign Host, and ends that connection', async () => {
    const net = await import('node:net');
    const socket = net.connect(Number(new URL(listening.baseUrl).port), '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    let answer = '';
    socket.on('data', (d) => (answer += String(d)));
    socket.write(
      'GET /api/v1/ws?token=x HTTP/1.1\r\nHost: rebind.attacker.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    // The server ends the connection itself (it was left open, and held up shutdown, before).
    await closed;
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(answer).toMatch(/DNS rebinding/);
  });

  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]', 'LOCALHOST', 'localhost.', '::ffff:7f00:1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });
});
