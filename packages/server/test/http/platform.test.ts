/**
 * Platform surface (contract §4.1, §5, §7, §9; design §3, §5, §7): /health, the OpenAPI document and
 * docs UI, the JWKS, the global per-principal rate limit, owner JWTs from an external OIDC
 * provider (a local JWKS server, no internet), and the admin CLI's owner-token command.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevIdentityProvider } from '../../src/auth/dev-idp.js';
import { docsCsp } from '../../src/http/security-headers.js';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const run = promisify(execFile);

describe('platform: health, OpenAPI, docs, JWKS, CLI', () => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-platform-'));
    t = await startApp({ dataDir });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('GET /health answers {status: "ok", version}', async () => {
    const res = await t.request({ method: 'GET', url: '/health' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(String(res.headers['content-type'])).toContain('application/json');
  });

  it('GET /api/v1/openapi.json is an OpenAPI 3.1 document with the core paths', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe((await t.request({ method: 'GET', url: '/health' })).body.version);
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/enroll', '/api/v1/devices/{id}/approve', '/api/v1/conversations/{id}/messages']));
    expect(doc.paths['/api/v1/enroll'].post).toBeDefined();
    expect(doc.paths['/api/v1/devices/{id}/approve'].patch).toBeDefined();
    expect(doc.paths['/api/v1/conversations/{id}/messages'].post).toBeDefined();
    expect(doc.paths['/api/v1/conversations/{id}/messages'].get).toBeDefined();
    // contract §9: the version is in the path prefix; only /health (and well-known discovery) live outside it,
    // besides the DIF Universal Resolver driver path /1.0/identifiers/{did} (design §8.15) and the
    // JSON-LD trust context /contexts/trust/v1 (design §8.16), and the probes and metrics of design §8.32.
    const rootPaths = ['/health', '/1.0/identifiers/{did}', '/contexts/trust/v1', '/livez', '/readyz', '/metrics'];
    const outside = paths.filter((p) => !p.startsWith('/api/v1/') && !p.startsWith('/.well-known/') && !rootPaths.includes(p));
    expect(outside).toEqual([]);
  });

  it('GET /docs serves the HTML docs UI (following redirects)', async () => {
    let url = '/docs';
    let res = await t.app.inject({ method: 'GET', url });
    for (let i = 0; i < 5 && res.statusCode >= 300 && res.statusCode < 400; i++) {
      url = new URL(String(res.headers.location), `http://localhost${url}`).pathname;
      res = await t.app.inject({ method: 'GET', url });
    }
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/html');
    expect(res.body).toMatch(/<html/i);
  });

  it('the docs UI loads only this origin\'s scripts and styles, under a CSP that forbids framing, with nosniff', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toBe(docsCsp([new URL(t.app.parley.config.publicUrl).origin]));
    for (const directive of ["default-src 'self'", "script-src 'self';", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) expect(csp).toContain(directive);
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // No inline script and no other origin: every script and stylesheet is a relative URL served here under the same policy.
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
    const refs = [...page.body.matchAll(/<(?:script|link)[^>]*\s(?:src|href)="([^"]+)"/gi)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^\.\//);
      const file = await t.app.inject({ method: 'GET', url: new URL(ref, 'http://localhost/docs/').pathname });
      expect(file.statusCode, ref).toBe(200);
      expect(file.headers['content-security-policy'], ref).toBe(csp);
      expect(file.headers['x-content-type-options'], ref).toBe('nosniff');
    }
    expect((await t.app.inject({ method: 'GET', url: '/docs/json' })).headers['content-security-policy']).toBe(csp);
  });

  it('API answers (JSON, errors, the OpenAPI document) carry nosniff and a CSP that loads nothing and forbids framing', async () => {
    for (const url of ['/health', '/api/v1/openapi.json', '/api/v1/no-such-route', '/api/v1/devices']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['content-security-policy'], url).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it('GET /.well-known/jwks.json lists public Ed25519 keys with kid that verify device JWTs', async () => {
    const res = await t.request({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.status).toBe(200);
    const keys = res.body.keys as JWK[];
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(k).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
      expect(typeof k.kid).toBe('string');
      expect(k.kid!.length).toBeGreaterThan(0);
      expect(k.d, 'no private key material').toBeUndefined();
    }
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);

    const owner = await newOwner(t);
    await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const { payload, protectedHeader } = await jwtVerify(agent.jwt, createLocalJWKSet({ keys }));
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(keys.map((k) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toMatchObject({ sub: agent.deviceId, typ: 'device' });
  });

  it('the CLI owner-token command prints a token the app accepts', { timeout: 60_000 }, async () => {
    const env = { ...process.env, DATA_DIR: t.config.dataDir, OIDC_ISSUER: '', OIDC_AUDIENCE: '', OIDC_JWKS_URL: '', LOG_LEVEL: 'silent' };
    const { stdout } = await run('npx', ['tsx', '--conditions=parley-source', 'packages/server/src/cli.ts', 'owner-token', '--sub', 'a@example.com'], { cwd: REPO_ROOT, env });
    const token = stdout.trim().split('\n').at(-1)!;
    expect(token.split('.')).toHaveLength(3);
    expect(decodeJwt(token).sub).toBe('a@example.com');
    const auth = { authorization: `Bearer ${token}` };
    const created = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: auth, payload: { name: 'CLI tenant' } });
    expect(created.status).toBe(201);
    const list = await t.request({ method: 'GET', url: '/api/v1/invites', headers: auth });
    expect(list.status).toBe(200);

    // A token minted with another data directory's key is not accepted.
    const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-other-'));
    try {
      const other = await run('npx', ['tsx', '--conditions=parley-source', 'packages/server/src/cli.ts', 'owner-token', '--sub', 'a@example.com'], { cwd: REPO_ROOT, env: { ...env, DATA_DIR: otherDir } });
      const foreign = other.stdout.trim().split('\n').at(-1)!;
      const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: { authorization: `Bearer ${foreign}` } });
      expect(res.status).toBe(401);
      expect(typeof res.body.detail).toBe('string');
    } finally {
      fs.rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

describe('platform: global per-principal rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_DEFAULT_PER_MIN: '3' } });
  });
  afterAll(() => t?.close());

  it('the 4th owner call in a minute answers 429 with Retry-After and {detail}; other principals are unaffected', async () => {
    const token = await t.ownerToken('limited@example.com');
    const auth = { authorization: `Bearer ${token}` };
    expect((await t.request({ method: 'POST', url: '/api/v1/tenants', headers: auth, payload: { name: 'Limited' } })).status).toBe(201);
    expect((await t.request({ method: 'GET', url: '/api/v1/conversations', headers: auth })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/invites', headers: auth })).status).toBe(200);
    const fourth = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: auth });
    expect(fourth.status).toBe(429);
    expect(typeof fourth.body.detail).toBe('string');
    const retryAfter = Number(fourth.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const other = await t.ownerToken('other@example.com');
    const res = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${other}` }, payload: { name: 'Other' } });
    expect(res.status).toBe(201);
  });

  it('the limit is checked before token verification (contract §5 rule 1)', async () => {
    const auth = { authorization: 'Bearer not-a-valid-token' };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.request({ method: 'GET', url: '/api/v1/conversations', headers: auth })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('unauthenticated /health is limited per IP by RATE_LIMIT_PUBLIC_PER_MIN, not by the authenticated per-principal limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.request({ method: 'GET', url: '/health' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  });
});

describe('platform: external OIDC identity provider', () => {
  const ISSUER = 'https://idp.test';
  const AUDIENCE = 'parley';
  const TENANT_CLAIM = 'https://parley.test/tenant_id';
  const KID = 'idp-key-1';
  let t: TestApp;
  let server: http.Server;
  let idpKey: CryptoKey;
  let jwksHits = 0;

  async function sign(
    claims: Record<string, unknown>,
    opts: { key?: CryptoKey; kid?: string; iss?: string; aud?: string; exp?: number | string | null; iat?: number | null; sub?: string | null } = {},
  ) {
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: opts.kid ?? KID, typ: 'JWT' })
      .setIssuer(opts.iss ?? ISSUER)
      .setAudience(opts.aud ?? AUDIENCE);
    if (opts.iat !== null) jwt.setIssuedAt(opts.iat);
    if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? '10m');
    if (opts.sub !== null) jwt.setSubject(opts.sub ?? 'alice@idp.test');
    return jwt.sign(opts.key ?? idpKey);
  }
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    idpKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'ES256', use: 'sig' };
    server = http.createServer((req, res) => {
      if (req.url === '/jwks') {
        jwksHits++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    t = await startApp({
      env: { OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: AUDIENCE, OIDC_JWKS_URL: `http://127.0.0.1:${port}/jwks`, OIDC_TENANT_CLAIM: TENANT_CLAIM },
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('a token signed by the provider is accepted (POST /tenants 201) and its sub is the owner', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: bearer(await sign({})), payload: { name: 'OIDC tenant' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'OIDC tenant', role: 'OWNER_ADMIN' });
    expect(jwksHits).toBeGreaterThan(0);
    const list = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({})) });
    expect(list.status).toBe(200);
    // With an OIDC provider there is no development sign-in (design §8.31).
    const dev = await t.request({ method: 'POST', url: '/api/v1/dev/login', payload: { email: 'ada@example.com' } });
    expect(dev.status).toBe(404);
    expect(dev.body.detail).toMatch(/OIDC provider is configured/);
    // The web app learns the provider's public client from /auth/config (the audience by default).
    const auth = await t.request({ method: 'GET', url: '/api/v1/auth/config' });
    expect(auth.body).toEqual({ mode: 'oidc', dev_login: false, oidc: { issuer: ISSUER, client_id: AUDIENCE, scope: 'openid email profile' } });
  });

  it('tokens from another key, wrong issuer, wrong audience, expired, without sub or unsigned answer 401', async () => {
    const other = (await generateKeyPair('ES256')).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: 'alice@idp.test', iss: ISSUER, aud: AUDIENCE, exp: now + 600 }),
    ).toString('base64url')}.`;
    const cases: Record<string, string> = {
      'another key, same kid': await sign({}, { key: other }),
      'another key, unknown kid': await sign({}, { key: other, kid: 'rogue' }),
      'wrong issuer': await sign({}, { iss: 'https://evil.test' }),
      'wrong audience': await sign({}, { aud: 'someone-else' }),
      expired: await sign({}, { exp: now - 3600 }),
      'no sub': await sign({}, { sub: null }),
      unsigned,
    };
    const results: Record<string, number> = {};
    for (const [name, token] of Object.entries(cases)) {
      const res = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: bearer(token), payload: { name: 'x' } });
      results[name] = res.status;
      if (res.status === 401) expect(typeof res.body.detail).toBe('string');
    }
    expect(results).toEqual(Object.fromEntries(Object.keys(cases).map((k) => [k, 401])));
  });

  it('a token without exp, or living longer than OWNER_TOKEN_MAX_LIFETIME_SEC (24 h), answers 401; up to the maximum it is accepted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      'no exp': await sign({}, { exp: null }),
      'no exp, no iat': await sign({}, { exp: null, iat: null }),
      'exp - iat = 24 h + 1 s': await sign({}, { iat: now, exp: now + 86_401 }),
      'exp in year 9999': await sign({}, { exp: 253_402_300_799 }),
      'no iat, exp - now = 25 h': await sign({}, { iat: null, exp: now + 25 * 3600 }),
      'iat in the future, exp - now = 30 h': await sign({}, { iat: now + 6 * 3600, exp: now + 30 * 3600 }),
    };
    const results: Record<string, number> = {};
    for (const [name, token] of Object.entries(cases)) results[name] = (await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(token) })).status;
    expect(results).toEqual(Object.fromEntries(Object.keys(cases).map((k) => [k, 401])));
    const tenant = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: bearer(await sign({}, { sub: 'long@idp.test' })), payload: { name: 'Long' } });
    expect(tenant.status).toBe(201);
    for (const opts of [{ iat: now, exp: now + 86_400 }, { iat: null, exp: now + 23 * 3600 }]) {
      expect((await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({}, { sub: 'long@idp.test', ...opts })) })).status).toBe(200);
    }
  });

  it('the built-in development identity provider is disabled when OIDC is configured', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-devidp-'));
    try {
      const dev = await DevIdentityProvider.load(dir);
      const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await dev.mint('alice@idp.test')) });
      expect(res.status).toBe(401);
      const jwks = await t.request({ method: 'GET', url: '/.well-known/jwks.json' });
      expect(jwks.body.keys.map((k: JWK) => k.kid)).not.toContain(dev.publicJwk.kid);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the OIDC_TENANT_CLAIM claim selects the tenant; a tenant the user is not a member of answers 403', async () => {
    const carol = { sub: 'carol@idp.test' };
    const dave = { sub: 'dave@idp.test' };
    const cTenant = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: bearer(await sign({}, carol)), payload: { name: 'Carol' } });
    const dTenant = await t.request({ method: 'POST', url: '/api/v1/tenants', headers: bearer(await sign({}, dave)), payload: { name: 'Dave' } });
    expect(cTenant.status).toBe(201);
    expect(dTenant.status).toBe(201);

    const own = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: bearer(await sign({ [TENANT_CLAIM]: cTenant.body.tenant_id }, carol)) });
    expect(own.status).toBe(200);

    const foreign = await t.request({ method: 'GET', url: '/api/v1/conversations', headers: bearer(await sign({ [TENANT_CLAIM]: dTenant.body.tenant_id }, carol)) });
    expect(foreign.status).toBe(403);
    expect(typeof foreign.body.detail).toBe('string');
    const unknown = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({ [TENANT_CLAIM]: '00000000-0000-4000-8000-000000000000' }, carol)) });
    expect(unknown.status).toBe(403);

    // Only the configured claim selects: the default claim name is ignored here.
    const otherClaim = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({ tenant_id: dTenant.body.tenant_id }, carol)) });
    expect(otherClaim.status).toBe(200);
    // And what Carol sees with her own claim is her tenant's data, not Dave's.
    const inv = await t.request({ method: 'POST', url: '/api/v1/invites', headers: bearer(await sign({}, dave)), payload: { label: 'dave-only' } });
    expect(inv.status).toBe(201);
    const carolInvites = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({ [TENANT_CLAIM]: cTenant.body.tenant_id }, carol)) });
    expect(carolInvites.body.invites.map((i: { id: string }) => i.id)).not.toContain(inv.body.id);
  });

  it('a user with no tenant calling a tenant route answers 403', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/invites', headers: bearer(await sign({}, { sub: 'nobody@idp.test' })) });
    expect(res.status).toBe(403);
    expect(typeof res.body.detail).toBe('string');
  });
});
