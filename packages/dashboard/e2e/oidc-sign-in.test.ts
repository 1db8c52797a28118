/**
 * Sign-in with an OIDC provider (design §5, §8.30): with `OIDC_*` set the app
 * offers no development sign-in and runs the authorization code flow with PKCE (oauth4webapi)
 * against the provider; the service accepts the provider's token and the first sign-in
 * provisions the tenant and this browser's owner device. The provider is a real one on this
 * machine: `oidc-provider` (a certified OpenID Provider implementation) with its development
 * login pages, a public client and PKCE required.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import { ParleyClient } from '@parley/sdk';
import Provider from 'oidc-provider';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { DIST, launch, screenshot } from './browser.js';

const CLIENT_ID = 'parley-web';

describe('OIDC sign-in in Chromium', () => {
  let idp: http.Server;
  let t: TestApp;
  let browser: Browser;
  let issuer = '';
  const seen: string[] = [];

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('the web app is not built: run "npm run build -w @parley/dashboard"');
    // The provider's address must be known to the service, and the service's to the provider.
    let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
    idp = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    t = await startApp({ listen: true, env: { DASHBOARD_DIR: DIST, OIDC_ISSUER: issuer, OIDC_AUDIENCE: CLIENT_ID, OIDC_JWKS_URL: `${issuer}/jwks` } });
    const provider = new Provider(issuer, {
      clients: [{ client_id: CLIENT_ID, token_endpoint_auth_method: 'none', redirect_uris: [`${t.baseUrl}/auth/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
      pkce: { required: () => true },
      claims: { openid: ['sub'], email: ['email'] },
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@idp.test` }) }),
    });
    provider.on('grant.success', () => seen.push('grant'));
    handler = provider.callback();
    browser = await launch();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((r) => idp?.close(r));
  });

  it('signs in through the provider with PKCE; the service accepts its ID token and provisions the owner', async () => {
    const config = await t.request({ method: 'GET', url: '/api/v1/auth/config' });
    expect(config.body).toEqual({ mode: 'oidc', dev_login: false, oidc: { issuer, client_id: CLIENT_ID, scope: 'openid email profile' } });
    const page = await (await browser.newContext()).newPage();
    const log: string[] = [];
    page.on('console', (m) => log.push(m.text()));
    page.on('pageerror', (e) => log.push(e.stack ?? e.message));
    page.on('request', (r) => log.push(`> ${r.method()} ${r.url()}`));
    page.on('response', (r) => log.push(`< ${r.status()} ${r.url()}`));
    page.on('requestfailed', (r) => log.push(`! ${r.url()} ${r.failure()?.errorText}`));
    if (process.env.E2E_DEBUG) page.on('close', () => console.log(log.join('\n')));
    // The page's CSP lets it reach the provider (discovery, token endpoint) and nothing else.
    const home = await page.goto(`${t.baseUrl}/sign-in`);
    expect(home!.headers()['content-security-policy']).toContain(`connect-src 'self' ${issuer}`);
    const start = page.getByRole('button', { name: `Sign in with 127.0.0.1:${new URL(issuer).port}` });
    await start.waitFor().catch(async (err: unknown) => {
      const probe = await page.evaluate(async () => {
        const r = await fetch('/api/v1/auth/config');
        return `${r.status} ${await r.text()}`;
      });
      throw new Error(`no sign-in button: ${String(err)}\n${log.join('\n')}\n${probe}`);
    });
    expect(await page.getByRole('heading', { name: 'Development sign-in' }).count()).toBe(0);
    await start.click();
    await page.waitForURL(`${issuer}/**`);
    await page.locator('input[name="login"]').fill('carol');
    await page.locator('input[name="password"]').fill('any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page
      .getByRole('heading', { level: 1, name: 'Agents & devices' })
      .waitFor({ timeout: 30_000 })
      .catch(async (err: unknown) => {
        throw new Error(`not signed in: ${String(err)}\n${log.join('\n')}\n${(await page.content()).slice(0, 3000)}`);
      });
    await screenshot(page, 'oidc-signed-in');
    expect(seen).toContain('grant');
    // The app asked for the code with PKCE (S256), state and nonce, as a public client.
    const authorize = new URL(log.find((l) => l.startsWith(`> GET ${issuer}/auth?`))!.slice(6));
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const p of ['state', 'nonce']) expect(authorize.searchParams.get(p)).toBeTruthy();
    expect(page.url()).toBe(`${t.baseUrl}/agents`);
    expect(await page.getByTestId('owner-fingerprint').textContent()).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/);
    // The provider's subject is the owner: signed in as "carol", tenant and owner device provisioned.
    expect(await page.locator('.who').textContent()).toContain('carol');
    const carol = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: JSON.parse((await page.evaluate(() => sessionStorage.getItem('parley.session')))!).token });
    expect((await carol.listDevices()).devices.filter((d) => d.kind === 'owner')).toHaveLength(1);
  });
});
