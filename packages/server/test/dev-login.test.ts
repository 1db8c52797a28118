/**
 * Development sign-in (DESIGN §8.31): `POST /api/v1/dev/login {email}` answers an owner JWT of the
 * built-in identity provider that works as one (it provisions a tenant); bad input is 400; a
 * server that does not listen on a loopback address refuses it (403). (With OIDC configured it is
 * 404: platform.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../src/modules/dev-login/routes.js';
import { startApp, type TestApp } from './harness.js';

describe('development sign-in', () => {
  let t: TestApp;
  let wide: TestApp;
  beforeAll(async () => {
    [t, wide] = await Promise.all([startApp(), startApp({ env: { HOST: '0.0.0.0' } })]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), wide?.close()]);
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

  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]', 'LOCALHOST']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });
});
