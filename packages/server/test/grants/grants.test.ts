/**
 * Skill Permission Tokens (design §8.7; contract §3.3, §5 rule 8): issuance (owner on behalf of any
 * tier, agent for itself from certified up, API key), the token verified independently with jose
 * against the published JWKS, validation checks (signature, expiration, revocation, skill,
 * audience, the audience required) including tampered and expired tokens, list and revoke (owner), downgrade revocation
 * through revokeGrantsAboveTier, the shared signing key, and the public validate rate limits.
 */
import { eq } from 'drizzle-orm';
import { createLocalJWKSet, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities, platformKeys } from '../../src/db/schema/index.js';
import { openPlatformKeyRow } from '../../src/keys/index.js';
import { crossTenant, withTenant } from '../../src/db/tenant.js';
import { decodePrivateKeyMultibase, SptKeys, SPT_KEY_PURPOSE } from '../../src/keys/index.js';
import { revokeGrantsAboveTier } from '../../src/modules/grants/repo.js';
import { decodePublicKeyMultibase } from '../../src/keys/index.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

let seq = 0;
const addr = () => `spt-${Date.now().toString(36)}-${++seq}`;
const NIL = '00000000-0000-4000-8000-000000000000';

describe('Skill Permission Tokens', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  let agent: Agent;
  let address: string;
  let bAgent: Agent;
  const pool = new WsPool();

  const db = () => t.app.parley.database.db;
  /** The default audience of issued SPTs (PUBLIC_URL): what a validator names itself as. */
  const aud = () => t.config.publicUrl;
  const setIdentity = (hubAddress: string, set: Partial<typeof hubIdentities.$inferInsert>) => db().update(hubIdentities).set(set).where(eq(hubIdentities.hubAddress, hubAddress));
  const register = async (owner: Owner, deviceId: string) => {
    const hub_address = addr();
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: owner.auth, payload: { hub_address, display_name: 'Agent', device_id: deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
    return hub_address;
  };
  const issue = (headers: Record<string, string> | undefined, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v1/grants', ...(headers ? { headers } : {}), payload });
  const validate = (payload: unknown, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/v1/grants/validate', headers, payload: payload as object });
  const list = (query = '', who: Owner = a) => t.request({ method: 'GET', url: `/api/v1/grants${query}`, headers: who.auth });
  const revoke = (jti: string, headers: Record<string, string> = a.auth, payload?: object) =>
    t.request({ method: 'POST', url: `/api/v1/grants/${jti}/revoke`, headers, ...(payload ? { payload } : {}) });
  const auditOf = async (type: string, subject: string) => (await t.request({ method: 'GET', url: `/api/v1/audit/events?type=${type}&subject=${subject}`, headers: a.auth })).body.events as any[];
  const checksOf = (body: any) => Object.fromEntries((body.checks as { check: string; passed: boolean }[]).map((c) => [c.check, c.passed]));
  const ownerIssue = async (extra: Record<string, unknown> = {}, deviceId = agent.deviceId) => {
    const res = await issue(a.auth, { skill: 'translate', device_id: deviceId, ...extra });
    expect(res.status).toBe(201);
    return res.body as Record<string, any>;
  };

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Grants A');
    b = await newOwner(t, 'Grants B');
    agent = await activeAgent(t, a);
    address = await register(a, agent.deviceId);
    bAgent = await activeAgent(t, b);
    await register(b, bAgent.deviceId);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  describe('POST /grants', () => {
    it('an owner issues for an unverified agent (manual approval); the token verifies with jose against the JWKS', async () => {
      const g = await ownerIssue();
      expect(g).toMatchObject({ skill: 'translate', tier: 'unverified', audience: t.config.publicUrl, subject: `did:hub:${address}`, device_id: agent.deviceId });
      const jwks = await t.request({ method: 'GET', url: '/api/v1/grants/jwks' });
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys).toHaveLength(1);
      expect(jwks.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(jwks.body.keys[0].d).toBeUndefined();
      const { payload, protectedHeader } = await jwtVerify(g.token, createLocalJWKSet(jwks.body), { issuer: 'did:hub:parley', audience: t.config.publicUrl, algorithms: ['EdDSA'] });
      expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: jwks.body.keys[0].kid, typ: 'spt+jwt' });
      expect(payload).toMatchObject({ sub: `did:hub:${address}`, skill: 'translate', tier: 'unverified', jti: g.jti });
      expect(payload.exp! - payload.iat!).toBe(900);
      expect(new Date(payload.exp! * 1000).toISOString()).toBe(g.expires_at);
      const events = await auditOf('grant.issued', g.jti);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ actor: a.sub, data: { device_id: agent.deviceId, skill: 'translate', tier: 'unverified' } });
      expect(JSON.stringify(events[0])).not.toContain(g.token);
    });

    it('ttl_seconds shortens the lifetime and is capped at SPT_TTL_SECONDS; audience sets aud', async () => {
      const short = await ownerIssue({ ttl_seconds: 60, audience: 'https://tools.example' });
      const p = JSON.parse(Buffer.from(short.token.split('.')[1], 'base64url').toString());
      expect(p.exp - p.iat).toBe(60);
      expect(p.aud).toBe('https://tools.example');
      expect(short.audience).toBe('https://tools.example');
      const capped = await ownerIssue({ ttl_seconds: 5000 });
      const q = JSON.parse(Buffer.from(capped.token.split('.')[1], 'base64url').toString());
      expect(q.exp - q.iat).toBe(900);
    });

    it('an agent issues for itself only from the certified tier up (403 naming its tier otherwise)', async () => {
      const self = await activeAgent(t, a);
      const selfAddress = await register(a, self.deviceId);
      const refused = await issue(self.auth, { skill: 'summarize' });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/unverified/);
      await setIdentity(selfAddress, { trustTier: 'certified', trustScore: 0.7 });
      const ok = await issue(self.auth, { skill: 'summarize' });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ tier: 'certified', device_id: self.deviceId, subject: `did:hub:${selfAddress}` });
      expect((await auditOf('grant.issued', ok.body.jti))[0].actor).toBe(`device:${self.deviceId}`);
      expect((await issue(self.auth, { skill: 'summarize', device_id: agent.deviceId })).status).toBe(403);
      expect((await issue(self.auth, { skill: 'summarize', device_id: self.deviceId })).status).toBe(201);
    });

    it('an API key issues for its bound (certified) agent; an unbound key is 403', async () => {
      const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: a.auth, payload: { name: 'spt-bot' } });
      const headers = { 'x-api-key': key.body.key as string };
      expect((await issue(headers, { skill: 'x' })).status).toBe(403);
      const keys = newDeviceKeys();
      const ws = await pool.open(wsAddress(t.wsUrl, { token: key.body.key }));
      ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
      const accepted = await ws.next('client_key_accepted');
      const deviceId = accepted.data.device_id as string;
      const keyAddress = await register(a, deviceId);
      await setIdentity(keyAddress, { trustTier: 'enterprise' });
      const res = await issue(headers, { skill: 'x' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ tier: 'enterprise', device_id: deviceId });
      expect((await auditOf('grant.issued', res.body.jti))[0].actor).toBe(`api_key:${key.body.id}`);
    });

    it('the pipeline decides: no hub identity, a revoked device, a block policy are 403 with the stage and reason', async () => {
      const bare = await activeAgent(t, a);
      const noId = await issue(a.auth, { skill: 'translate', device_id: bare.deviceId });
      expect(noId.status).toBe(403);
      expect(noId.body.detail).toMatch(/^identity: .*no hub identity/);

      const pol = await t.request({ method: 'POST', url: '/api/v1/policies', headers: a.auth, payload: { name: 'no exports', scope: { skill: 'export' }, conditions: {}, action: 'block' } });
      expect(pol.status).toBe(201);
      const blocked = await issue(a.auth, { skill: 'export', device_id: agent.deviceId });
      expect(blocked.status).toBe(403);
      expect(blocked.body.detail).toMatch(/^rules: blocked by policy "no exports"/);

      const revokedAgent = await activeAgent(t, a);
      await register(a, revokedAgent.deviceId);
      expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${revokedAgent.deviceId}/revoke`, headers: a.auth })).status).toBe(200);
      const gone = await issue(a.auth, { skill: 'translate', device_id: revokedAgent.deviceId });
      expect(gone.status).toBe(403);
      expect(gone.body.detail).toMatch(/^identity: .*REVOKED/);
    });

    it('a hold policy: the owner issuing is the approval; a certified agent asking for itself is refused', async () => {
      const self = await activeAgent(t, a);
      const selfAddress = await register(a, self.deviceId);
      await setIdentity(selfAddress, { trustTier: 'certified' });
      const pol = await t.request({ method: 'POST', url: '/api/v1/policies', headers: a.auth, payload: { name: 'hold payments', scope: { skill: 'pay' }, conditions: {}, action: 'hold' } });
      expect(pol.status).toBe(201);
      const refused = await issue(self.auth, { skill: 'pay' });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/requires owner approval/);
      expect((await issue(a.auth, { skill: 'pay', device_id: self.deviceId })).status).toBe(201);
    });

    it('answers 400 for bad input, 401 without credentials, 403/404 across tenants', async () => {
      const od = await registerOwnerDevice(t, a);
      const bad: Record<string, unknown>[] = [
        {},
        { skill: '' },
        { skill: 'x'.repeat(101) },
        { skill: 'x' },
        { skill: 'x', device_id: 'nope' },
        { skill: 'x', device_id: agent.deviceId, ttl_seconds: 0 },
        { skill: 'x', device_id: agent.deviceId, ttl_seconds: 86_401 },
        { skill: 'x', device_id: agent.deviceId, audience: '' },
        { skill: 'x', device_id: od.deviceId },
      ];
      for (const payload of bad) {
        const res = await issue(a.auth, payload);
        expect(res.status, JSON.stringify(payload)).toBe(400);
        expect(typeof res.body.detail).toBe('string');
      }
      expect((await issue(undefined, { skill: 'x' })).status).toBe(401);
      expect((await issue({ authorization: 'Bearer nope' }, { skill: 'x' })).status).toBe(401);
      expect((await issue(a.auth, { skill: 'x', device_id: bAgent.deviceId })).status).toBe(404);
      expect((await issue(a.auth, { skill: 'x', device_id: NIL })).status).toBe(404);
      expect((await issue(agent.auth, { skill: 'x', device_id: bAgent.deviceId })).status).toBe(403);
    });
  });

  describe('POST /grants/validate', () => {
    it('a fresh token is valid; skill is checked when asked, audience always; claims are returned', async () => {
      const g = await ownerIssue({ audience: 'https://tools.example' });
      const ok = await validate({ token: g.token, skill: 'translate', audience: 'https://tools.example' });
      expect(ok.status).toBe(200);
      expect(ok.body.valid).toBe(true);
      expect(ok.body.checks.map((c: any) => c.check)).toEqual(['signature', 'expiration', 'revocation', 'skill', 'audience']);
      expect(ok.body.claims).toMatchObject({ iss: 'did:hub:parley', sub: `did:hub:${address}`, skill: 'translate', tier: 'unverified', aud: 'https://tools.example', jti: g.jti });
      const wrong = await validate({ token: g.token, skill: 'summarize', audience: 'https://elsewhere.example' });
      expect(wrong.body.valid).toBe(false);
      expect(checksOf(wrong.body)).toEqual({ signature: true, expiration: true, revocation: true, skill: false, audience: false });
      const noSkill = await validate({ token: g.token, audience: 'https://tools.example' });
      expect(noSkill.body.valid).toBe(true);
    });

    it('audience is required (RFC 7519 §4.1.3): absent or empty is 400, not a pass', async () => {
      const g = await ownerIssue();
      for (const payload of [{ token: g.token }, { token: g.token, skill: 'translate' }, { token: g.token, audience: '' }, { token: g.token, audience: 'x'.repeat(513) }]) {
        const r = await validate(payload);
        expect(r.status, JSON.stringify(payload).slice(0, 80)).toBe(400);
        expect(r.body.detail).toMatch(/audience/);
      }
      const ok = await validate({ token: g.token, audience: aud() });
      expect(ok.body.valid).toBe(true);
      const other = await validate({ token: g.token, audience: 'https://tools.example' });
      expect(other.body.valid).toBe(false);
      expect(checksOf(other.body)).toMatchObject({ signature: true, revocation: true, audience: false });
    });

    it('a tampered token fails the signature check; garbage too; 400 only when token is not a string', async () => {
      const g = await ownerIssue();
      const [h, p, s] = g.token.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, skill: 'admin' })).toString('base64url')}.${s}`;
      const res = await validate({ token: forged, audience: aud() });
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(false);
      expect(checksOf(res.body).signature).toBe(false);
      expect(res.body.claims).toBeUndefined();
      for (const token of ['', 'abc', 'a.b.c', g.token.slice(0, -4) + 'AAAA']) {
        const r = await validate({ token, audience: aud() });
        expect(r.status, token).toBe(200);
        expect(r.body.valid).toBe(false);
      }
      for (const payload of [{}, { token: 42 }, { token: null }, { token: ['x'] }, { token: { a: 1 } }]) {
        const r = await validate(payload);
        expect(r.status, JSON.stringify(payload)).toBe(400);
      }
    });

    it('an expired token (signed by the SPT key with a past exp) fails the expiration check', async () => {
      const g = await ownerIssue();
      const [row] = await crossTenant(db(), 'test: read the SPT key', (tx) => tx.select().from(platformKeys).where(eq(platformKeys.purpose, SPT_KEY_PURPOSE)));
      const seed = decodePrivateKeyMultibase(openPlatformKeyRow(t.app.parley.secrets, row!).privateKeyMultibase);
      const pub = decodePublicKeyMultibase(row!.publicKeyMultibase)!;
      const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url'), d: Buffer.from(seed).toString('base64url') }, 'EdDSA');
      const claims = JSON.parse(Buffer.from(g.token.split('.')[1], 'base64url').toString());
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ ...claims, iat: now - 1000, exp: now - 100 }).setProtectedHeader(decodeProtectedHeader(g.token) as never).sign(key);
      const res = await validate({ token: expired, audience: aud() });
      expect(res.body.valid).toBe(false);
      expect(checksOf(res.body)).toMatchObject({ signature: true, expiration: false, revocation: true });
    });

    it('a well-formed SPT signed by another key fails the signature check', async () => {
      const { privateKey } = await generateKeyPair('EdDSA');
      const fake = await new SignJWT({ skill: 'translate', tier: 'certified' })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'spt+jwt' })
        .setIssuer('did:hub:parley')
        .setSubject(`did:hub:${address}`)
        .setAudience(t.config.publicUrl)
        .setJti(NIL)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      const res = await validate({ token: fake, audience: aud() });
      expect(res.body.valid).toBe(false);
      expect(checksOf(res.body).signature).toBe(false);
    });
  });

  describe('GET /grants and POST /grants/{jti}/revoke', () => {
    it('lists newest first with filters and cursor paging; tenants see only their own', async () => {
      const listed = await activeAgent(t, a);
      await register(a, listed.deviceId);
      const g1 = await ownerIssue({ skill: 'one' }, listed.deviceId);
      const g2 = await ownerIssue({ skill: 'two' }, listed.deviceId);
      const g3 = await ownerIssue({ skill: 'three' }, listed.deviceId);
      const all = await list(`?device_id=${listed.deviceId}`);
      expect(all.status).toBe(200);
      expect(all.body.grants.map((g: any) => g.jti)).toEqual([g3.jti, g2.jti, g1.jti]);
      expect(all.body.grants[0]).toMatchObject({ device_id: listed.deviceId, skill: 'three', tier: 'unverified', issued_by: a.sub, revoked_at: null, active: true });
      expect(all.body.grants[0].token).toBeUndefined();
      const p1 = await list(`?device_id=${listed.deviceId}&limit=2`);
      expect(p1.body.grants).toHaveLength(2);
      const p2 = await list(`?device_id=${listed.deviceId}&limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
      expect(p2.body.grants.map((g: any) => g.jti)).toEqual([g1.jti]);
      expect(p2.body.next_cursor).toBeNull();

      expect((await revoke(g2.jti, a.auth, { reason: 'rotated' })).status).toBe(200);
      const active = await list(`?device_id=${listed.deviceId}&active=true`);
      expect(active.body.grants.map((g: any) => g.jti)).toEqual([g3.jti, g1.jti]);
      const inactive = await list(`?device_id=${listed.deviceId}&active=false`);
      expect(inactive.body.grants.map((g: any) => g.jti)).toEqual([g2.jti]);
      expect(inactive.body.grants[0]).toMatchObject({ active: false, revoked_reason: 'rotated' });

      expect((await list(`?device_id=${listed.deviceId}`, b)).body.grants).toEqual([]);
      expect((await list('?cursor=nope')).status).toBe(400);
      expect((await list('?limit=0')).status).toBe(400);
      expect((await list('?device_id=nope')).status).toBe(400);
      expect((await t.request({ method: 'GET', url: '/api/v1/grants' })).status).toBe(401);
      expect((await t.request({ method: 'GET', url: '/api/v1/grants', headers: agent.auth })).status).toBe(403);
    });

    it('revoke: 200 then 409; the token then fails revocation; audited; 404 across tenants; 400/401/403', async () => {
      const g = await ownerIssue();
      expect((await revoke(g.jti, b.auth)).status).toBe(404);
      const res = await revoke(g.jti);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ jti: g.jti, active: false, revoked_reason: 'revoked by the owner' });
      expect(res.body.revoked_at).not.toBeNull();
      const again = await revoke(g.jti);
      expect(again.status).toBe(409);
      const v = await validate({ token: g.token, audience: aud() });
      expect(v.body.valid).toBe(false);
      expect(checksOf(v.body)).toMatchObject({ signature: true, expiration: true, revocation: false });
      expect(await auditOf('grant.revoked', g.jti)).toHaveLength(1);
      expect((await revoke(NIL)).status).toBe(404);
      expect((await revoke('nope')).status).toBe(400);
      expect((await revoke(g.jti, {})).status).toBe(401);
      expect((await revoke(g.jti, agent.auth)).status).toBe(403);
    });

    it('a tier downgrade (revokeGrantsAboveTier) revokes the grants of the lost tier: they fail validation', async () => {
      const self = await activeAgent(t, a);
      const selfAddress = await register(a, self.deviceId);
      await setIdentity(selfAddress, { trustTier: 'certified' });
      const certified = await issue(self.auth, { skill: 'translate' });
      expect(certified.status).toBe(201);
      const manual = await ownerIssue({}, self.deviceId);
      expect(manual.tier).toBe('certified');
      const lowGrant = await (async () => {
        await setIdentity(selfAddress, { trustTier: 'unverified' });
        return ownerIssue({ skill: 'low' }, self.deviceId);
      })();
      const revoked = await withTenant(db(), a.tenantId, (tx) => revokeGrantsAboveTier(tx, self.deviceId, 'unverified', 'tier downgrade to unverified', new Date()));
      expect(revoked.sort()).toEqual([certified.body.jti, manual.jti].sort());
      const v = await validate({ token: certified.body.token, audience: aud() });
      expect(v.body.valid).toBe(false);
      expect(checksOf(v.body).revocation).toBe(false);
      expect((await validate({ token: lowGrant.token, audience: aud() })).body.valid).toBe(true);
      const listed = await list(`?device_id=${self.deviceId}&active=false`);
      expect(listed.body.grants.every((g: any) => g.revoked_reason === 'tier downgrade to unverified')).toBe(true);
    });
  });

  describe('signing key', () => {
    it('is stored once in platform_keys and shared: another instance loads the same kid', async () => {
      const jwks = await t.request({ method: 'GET', url: '/api/v1/grants/jwks' });
      const other = new SptKeys(db(), t.app.parley.secrets);
      await other.init();
      expect(other.kid).toBe(jwks.body.keys[0].kid);
      const rows = await crossTenant(db(), 'test', (tx) => tx.select().from(platformKeys).where(eq(platformKeys.purpose, SPT_KEY_PURPOSE)));
      expect(rows).toHaveLength(1);
      const issuerRows = await crossTenant(db(), 'test', (tx) => tx.select().from(platformKeys).where(eq(platformKeys.purpose, 'vc-issuer')));
      expect(issuerRows[0]!.publicKeyMultibase).not.toBe(rows[0]!.publicKeyMultibase);
    });
  });
});

describe('POST /grants/validate rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_GRANT_VALIDATE_PUBLIC_PER_MIN: '2', RATE_LIMIT_GRANT_VALIDATE_API_KEY_PER_MIN: '4' } });
  });
  afterAll(() => t.close());

  it('counts per IP publicly and per API key (higher); 429 carries Retry-After', async () => {
    const owner = await newOwner(t);
    const key = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'v' } });
    const call = (headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/v1/grants/validate', headers, payload: { token: 'abc', audience: 'https://tools.example' } });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const limited = await call();
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(typeof limited.body.detail).toBe('string');
    const withKey = { 'x-api-key': key.body.key as string };
    for (let i = 0; i < 4; i++) expect((await call(withKey)).status).toBe(200);
    expect((await call(withKey)).status).toBe(429);
    expect((await call({ 'x-api-key': 'svc_agent_sk_dev_' + '0'.repeat(64) })).status).toBe(401);
  });
});
