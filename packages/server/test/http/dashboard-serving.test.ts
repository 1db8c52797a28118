/**
 * Serving the owners' web app (design §8.30): the built files of DASHBOARD_DIR at `/` with a strict
 * Content-Security-Policy, `index.html` for the app's page paths (client-side routing), and the
 * API, `/docs`, `/health` and `/.well-known` unchanged; without a built app `/` is a plain 404.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../src/http/dashboard.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const INDEX = '<!doctype html><html><head><script type="module" src="/assets/app-1a2b.js"></script></head><body><div id="root"></div></body></html>';

describe('the web app at /', () => {
  let dir: string;
  let t: TestApp;
  let bare: TestApp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-dashboard-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'app-1a2b.js'), 'console.log("app")');
    [t, bare] = await Promise.all([startApp({ env: { DASHBOARD_DIR: dir } }), startApp({ env: { DASHBOARD_DIR: join(dir, 'missing') } })]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), bare?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (app: TestApp, url: string, accept = 'text/html') => app.app.inject({ method: 'GET', url, headers: { accept } });

  it('serves index.html and the assets with a strict Content-Security-Policy', async () => {
    const page = await get(t, '/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toBe(INDEX);
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-cache');
    const asset = await get(t, '/assets/app-1a2b.js', '*/*');
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toContain('immutable');
    expect(asset.headers['content-security-policy']).toBe(DASHBOARD_CSP);
  });

  it('answers index.html for the app’s page paths, and leaves the API and the other paths alone', async () => {
    for (const path of ['/agents', '/agents/8d1c7f0e-1111-4222-8333-444455556666', '/trust?window=30d']) {
      const res = await get(t, path);
      expect(res.statusCode, path).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    }
    const api = await get(t, '/api/v1/no-such-route');
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ detail: 'route GET /api/v1/no-such-route not found' });
    expect((await get(t, '/health', 'application/json')).json()).toMatchObject({ status: 'ok' });
    expect((await get(t, '/.well-known/jwks.json', 'application/json')).statusCode).toBe(200);
    expect((await get(t, '/docs/json', 'application/json')).statusCode).toBe(200);
    // Not a page request: a missing asset stays a 404.
    expect((await get(t, '/assets/missing.js', '*/*')).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: '/agents', headers: { accept: 'text/html' } })).statusCode).toBe(404);
  });

  it('without a built app, / is a plain 404', async () => {
    const res = await get(bare, '/');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'route GET / not found' });
  });
});
