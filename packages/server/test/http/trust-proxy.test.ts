/**
 * TRUST_PROXY (config.ts `trustProxy`, Fastify's `trustProxy`): behind a load balancer the per-IP
 * rate limits count the client's address from `X-Forwarded-For` only when the peer is a trusted
 * proxy; without the setting every client shares the balancer's address. The setting's parsing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const validate = (t: TestApp, forwardedFor: string) =>
  t.request({ method: 'POST', url: '/api/v1/grants/validate', headers: { 'x-forwarded-for': forwardedFor }, payload: { token: 'x', audience: 'https://rp.example' } });

describe('TRUST_PROXY', () => {
  let trusting: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    const env = { RATE_LIMIT_GRANT_VALIDATE_PUBLIC_PER_MIN: '2' };
    trusting = await startApp({ env: { ...env, TRUST_PROXY: '127.0.0.1' } });
    plain = await startApp({ env });
  });
  afterAll(async () => {
    await trusting.close();
    await plain.close();
  });

  it('counts per forwarded client address when the peer (the balancer) is trusted', async () => {
    for (let i = 0; i < 2; i++) expect((await validate(trusting, '203.0.113.1')).status).toBe(200);
    expect((await validate(trusting, '203.0.113.1')).status).toBe(429);
    expect((await validate(trusting, '203.0.113.2')).status).toBe(200);
  });

  it('without it, every client behind the balancer shares one budget', async () => {
    for (let i = 0; i < 2; i++) expect((await validate(plain, `198.51.100.${i}`)).status).toBe(200);
    expect((await validate(plain, '198.51.100.9')).status).toBe(429);
  });

  it('parses false, true and address lists; refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 192.168.1.5 ,::1' }).trustProxy).toBe('10.0.0.0/8,192.168.1.5,::1');
    expect(() => loadConfig({ TRUST_PROXY: 'lb.example' })).toThrow(ConfigError);
  });

  it('the start-up line masks SECRETS_KEY_PREVIOUS', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const described = describeConfig(loadConfig({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: key }));
    expect(described.secretsKeyPrevious).toEqual(['set']);
    expect(JSON.stringify(described)).not.toContain(key);
  });
});
