/**
 * Key rotation (docs/operations.md "Key rotation"): the device-token signing keys
 * (auth/device-tokens.ts: rotate, retireSigningKeys), the SPT keys (keys/spt-keys.ts:
 * rotateSptKey, retireSptKeys) and the secrets keyring (lib/secret-box.ts with
 * SECRETS_KEY_PREVIOUS, modules/webhooks/secrets.ts resealWebhookSecrets). Two service objects on
 * one database stand for two instances: tokens signed before a rotation verify on both until the
 * old key is retired, new tokens carry the new kid once the (shortened) cache interval has passed,
 * a retired key's tokens fail, and webhook secrets sealed under the old secrets key still open and
 * are re-sealed under the new one, as are the platform private keys (keys/sealed-keys.ts), which
 * are sealed at rest. On PostgreSQL, the CLI commands themselves run against the
 * database of a running service.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceTokenService, retireSigningKeys } from '../../src/auth/device-tokens.js';
import { RenewalChallenges } from '../../src/auth/renewal-challenges.js';
import { openPlatformKeyRow, openStoredKey, resealPlatformKeys, signingKeyContext } from '../../src/keys/index.js';
import { AuditLogKeys } from '../../src/keys/index.js';
import { PlatformIssuer } from '../../src/modules/credentials/issuer.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { devices, platformKeys, signingKeys } from '../../src/db/schema/index.js';
import { crossTenant } from '../../src/db/tenant.js';
import { loadSecretsKey, SecretBox, SecretBoxError } from '../../src/lib/secret-box.js';
import { KEY_REFRESH_MS, retireSptKeys, rotateSptKey, SptKeys } from '../../src/keys/index.js';
import { SptTokens } from '../../src/modules/grants/tokens.js';
import { openWebhookSecret, resealWebhookSecrets, sealWebhookSecret } from '../../src/modules/webhooks/secrets.js';
import { newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { backend, startApp, type TestApp } from '../../testing/harness.js';

const REFRESH_MS = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const TENANT = '00000000-0000-4000-8000-000000000001';
const later = (ms: number) => new Date(Date.now() + ms);
/** `keys` once its `init()` has run. */
const started = async <K extends { init(): Promise<void> }>(keys: K): Promise<K> => {
  await keys.init();
  return keys;
};
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli.ts');

/**
 * Run `npm run cli -- <args>` (the CLI from source) with `env` on top of this process's; answers
 * its last output line parsed as JSON, with `exit` its exit status (0 or 1; anything else throws).
 */
async function cli(args: string[], env: Record<string, string>): Promise<any> {
  const { SECRETS_KEY: _k, SECRETS_KEY_PREVIOUS: _p, ...rest } = process.env;
  const run = promisify(execFile)(process.execPath, ['--conditions=parley-source', '--import', 'tsx', CLI, ...args], { env: { ...rest, ...env } });
  const { stdout, exit } = await run.then(
    (r) => ({ stdout: r.stdout, exit: 0 }),
    (err: { code?: number; stdout?: string }) => {
      if (err.code !== 1) throw err;
      return { stdout: err.stdout ?? '', exit: 1 };
    },
  );
  return { ...JSON.parse(stdout.trim().split('\n').at(-1)!), exit };
}

describe('key rotation', () => {
  let t: TestApp;
  const db = () => t.app.parley.database.db;
  const box = () => t.app.parley.secrets;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('device-token keys: old tokens verify on every instance until retired, new tokens use the new key, retired tokens fail', async () => {
    const ttl = 3600;
    const a = new DeviceTokenService(db(), box(), ttl, REFRESH_MS);
    const b = new DeviceTokenService(db(), box(), ttl, REFRESH_MS);
    await a.init();
    await b.init();
    const before = await a.issue('11111111-1111-4111-8111-111111111111', TENANT);
    const oldKid = kidOf(before.token);

    const cli = new DeviceTokenService(db(), box(), ttl, REFRESH_MS); // the rotate-signing-key command
    await cli.init();
    const newKid = await cli.rotate();
    expect(newKid).not.toBe(oldKid);

    await sleep(REFRESH_MS + 10);
    const after = await b.issue('22222222-2222-4222-8222-222222222222', TENANT);
    expect(kidOf(after.token)).toBe(newKid);
    expect(kidOf((await a.issue('33333333-3333-4333-8333-333333333333', TENANT)).token)).toBe(newKid);
    for (const instance of [a, b]) {
      expect((await instance.verify(before.token))?.deviceId).toBe('11111111-1111-4111-8111-111111111111');
      expect((await instance.verify(after.token))?.deviceId).toBe('22222222-2222-4222-8222-222222222222');
    }
    expect(a.publicJwks().keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    // The app's own instance (default cache interval) learns the new kid on first sight.
    expect(await t.app.parley.deviceTokens.verify(after.token)).toBeDefined();
    const published = await t.request({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(published.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));

    // Not yet retirable: the old key stopped signing just now; retirable after ttl + the refresh interval.
    const early = await retireSigningKeys(db(), ttl);
    expect(early.retired).not.toContain(oldKid);
    const kept = early.kept.find((k) => k.kid === oldKid)!;
    expect(Date.parse(kept.retirable_at) - Date.parse(kept.deactivated_at)).toBe(ttl * 1000 + KEY_REFRESH_MS);

    const retired = await retireSigningKeys(db(), ttl, { now: later(ttl * 1000 + KEY_REFRESH_MS + 1000) });
    expect(retired.retired).toContain(oldKid);
    expect(retired.retired).not.toContain(newKid);
    await sleep(REFRESH_MS + 10);
    expect(await a.verify(before.token)).toBeUndefined();
    expect(await b.verify(before.token)).toBeUndefined();
    expect(await b.verify(after.token)).toBeDefined();
    expect(a.publicJwks().keys.map((k) => k.kid)).not.toContain(oldKid);
  });

  it('device-token keys: --force retires every inactive key at once (a compromised key), never the active one', async () => {
    const a = new DeviceTokenService(db(), box(), 3600, REFRESH_MS);
    await a.init();
    const old = await a.issue('44444444-4444-4444-8444-444444444444', TENANT);
    const newKid = await a.rotate();
    const { retired } = await retireSigningKeys(db(), 3600, { force: true });
    expect(retired).toContain(kidOf(old.token));
    expect(retired).not.toContain(newKid);
    await sleep(REFRESH_MS + 10);
    expect(await a.verify(old.token)).toBeUndefined();
    expect(await a.verify((await a.issue('44444444-4444-4444-8444-444444444444', TENANT)).token)).toBeDefined();
  });

  it('SPT keys: old SPTs verify until retired, new SPTs use the new key, the JWKS lists both, retired SPTs fail', async () => {
    const ttl = 900;
    const keysA = new SptKeys(db(), box(), REFRESH_MS);
    const keysB = new SptKeys(db(), box(), REFRESH_MS);
    await keysA.init();
    await keysB.init();
    const issuer = 'did:hub:parley';
    const a = new SptTokens(keysA, issuer);
    const b = new SptTokens(keysB, issuer);
    const now = Math.floor(Date.now() / 1000);
    const claims = (jti: string) => ({ sub: 'did:hub:agent-x', skill: 'translate', tier: 'certified' as const, aud: 'https://rp.example', jti, iat: now, exp: now + ttl });
    const before = await a.sign(claims('aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'));
    const oldKid = kidOf(before);

    const rotated = await rotateSptKey(db(), box(), ttl);
    expect(rotated.previous.kid).toBe(oldKid);
    expect(Date.parse(rotated.previous.retirable_at) - Date.parse(rotated.previous.deactivated_at)).toBe(ttl * 1000 + KEY_REFRESH_MS);
    await sleep(REFRESH_MS + 10);
    const after = await b.sign(claims('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'));
    expect(kidOf(after)).toBe(rotated.kid);
    for (const tokens of [a, b]) {
      expect((await tokens.verifySignature(before))?.jti).toBe('aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa');
      expect((await tokens.verifySignature(after))?.jti).toBe('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb');
    }
    expect((await keysA.jwks()).keys.map((k) => k.kid)).toEqual([rotated.kid, oldKid]);
    // The app (default cache interval) publishes both once its cache is reloaded: an unknown kid reloads it.
    const app = await t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token: after, audience: 'https://rp.example' } });
    expect(app.body.checks.find((c: { check: string }) => c.check === 'signature').passed).toBe(true);
    expect((await t.request({ method: 'GET', url: '/api/v1/grants/jwks' })).body.keys.map((k: { kid: string }) => k.kid)).toEqual([rotated.kid, oldKid]);

    expect((await retireSptKeys(db(), ttl)).kept.map((k) => k.kid)).toContain(oldKid);
    const retired = await retireSptKeys(db(), ttl, { now: later(ttl * 1000 + KEY_REFRESH_MS + 1000) });
    expect(retired.retired).toEqual([oldKid]);
    await sleep(REFRESH_MS + 10);
    expect(await a.verifySignature(before)).toBeNull();
    expect(await b.verifySignature(before)).toBeNull();
    expect(await a.verifySignature(after)).not.toBeNull();
    expect((await keysB.jwks()).keys.map((k) => k.kid)).toEqual([rotated.kid]);
  });

  it('SPT keys: a forced retirement drops every previous key; rotating twice keeps both previous keys verifying', async () => {
    const keys = new SptKeys(db(), box(), REFRESH_MS);
    await keys.init();
    const first = await rotateSptKey(db(), box(), 900);
    const second = await rotateSptKey(db(), box(), 900);
    expect(second.previous.kid).toBe(first.kid);
    await sleep(REFRESH_MS + 10);
    expect((await keys.jwks()).keys.map((k) => k.kid)).toEqual([second.kid, first.kid, first.previous.kid]);
    expect((await retireSptKeys(db(), 900, { force: true })).retired.sort()).toEqual([first.kid, first.previous.kid].sort());
    await sleep(REFRESH_MS + 10);
    expect((await keys.jwks()).keys.map((k) => k.kid)).toEqual([second.kid]);
  });

  it('secrets key: values sealed under the old key open through SECRETS_KEY_PREVIOUS and are re-sealed under the new key', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const oldBox = new SecretBox(oldKey);
    const ring = new SecretBox(newKey, [oldKey]);
    const newOnly = new SecretBox(newKey);

    const owner = await newOwner(t, 'Rotation');
    const dev1 = await registerOwnerDevice(t, owner);
    const dev2 = await registerOwnerDevice(t, owner);
    const legacy = await registerOwnerDevice(t, owner);
    const setSecret = (id: string, value: string) => crossTenant(db(), 'test', (tx) => tx.update(devices).set({ webhookSecret: value }).where(eq(devices.id, id)));
    const secretOf = async (id: string) => (await crossTenant(db(), 'test', (tx) => tx.select({ s: devices.webhookSecret }).from(devices).where(eq(devices.id, id))))[0]!.s!;
    await setSecret(dev1.deviceId, sealWebhookSecret(oldBox, dev1.deviceId, 'whsec_one'));
    await setSecret(dev2.deviceId, sealWebhookSecret(ring, dev2.deviceId, 'whsec_two')); // sealed after the switch: new key
    await setSecret(legacy.deviceId, 'whsec_clear');

    // During the rotation: the ring opens both, seals with the new key only.
    const stored1 = await secretOf(dev1.deviceId);
    const stored2 = await secretOf(dev2.deviceId);
    expect(openWebhookSecret(ring, dev1.deviceId, stored1)).toBe('whsec_one');
    expect(openWebhookSecret(ring, dev2.deviceId, await secretOf(dev2.deviceId))).toBe('whsec_two');
    expect(() => openWebhookSecret(newOnly, dev1.deviceId, stored1)).toThrow(SecretBoxError);
    expect(() => openWebhookSecret(oldBox, dev2.deviceId, stored2)).toThrow(SecretBoxError);
    expect(newOnly.open(ring.seal('x', 'c'), 'c')).toBe('x');

    const first = await resealWebhookSecrets(db(), ring);
    expect(first.failed).toBe(0);
    expect(first.resealed).toBeGreaterThanOrEqual(2); // dev1 (old key) and the legacy clear value
    expect(first.current).toBeGreaterThanOrEqual(1); // dev2
    for (const [id, clear] of [[dev1.deviceId, 'whsec_one'], [dev2.deviceId, 'whsec_two'], [legacy.deviceId, 'whsec_clear']] as const) {
      const stored = await secretOf(id);
      expect(SecretBox.isSealed(stored)).toBe(true);
      expect(openWebhookSecret(newOnly, id, stored)).toBe(clear);
      expect(() => openWebhookSecret(oldBox, id, stored)).toThrow(SecretBoxError);
    }
    const second = await resealWebhookSecrets(db(), ring);
    expect(second.resealed).toBe(0);

    // A value under a key in no ring is reported, not overwritten.
    await setSecret(dev1.deviceId, sealWebhookSecret(new SecretBox(randomBytes(32)), dev1.deviceId, 'whsec_lost'));
    const third = await resealWebhookSecrets(db(), newOnly);
    expect(third.failed).toBeGreaterThanOrEqual(1);
  });

  it.runIf(backend === 'postgres')('the CLI rotates and retires both signing keys and re-seals webhook secrets on the database of a running service', async () => {
    const env = { DATABASE_URL: t.config.databaseUrl!, DATA_DIR: t.config.dataDir, SECRETS_KEY: t.config.secretsKey! };
    const before = new DeviceTokenService(db(), box(), 3600); // an instance that loaded the keys just now
    await before.init();
    const oldDevice = await before.issue('55555555-5555-4555-8555-555555555555', TENANT);
    const rotated = await cli(['rotate-signing-key'], env);
    expect(rotated.previous.kid).toBe(kidOf(oldDevice.token));
    const other = new DeviceTokenService(db(), box(), 3600); // another instance starting now signs with the new key
    await other.init();
    const fresh = await other.issue('55555555-5555-4555-8555-555555555555', TENANT);
    expect(kidOf(fresh.token)).toBe(rotated.kid);
    expect(await t.app.parley.deviceTokens.verify(fresh.token)).toBeDefined(); // unknown kid: reloaded
    expect(await t.app.parley.deviceTokens.verify(oldDevice.token)).toBeDefined();
    expect((await cli(['retire-signing-keys'], env)).kept.map((k: { kid: string }) => k.kid)).toContain(rotated.previous.kid);
    expect((await cli(['retire-signing-keys', '--force'], env)).retired).toContain(rotated.previous.kid);

    const spt = await cli(['rotate-spt-key'], env);
    const jwks = await t.request({ method: 'GET', url: '/api/v1/grants/jwks' });
    expect(jwks.status).toBe(200);
    expect((await cli(['retire-spt-keys', '--force'], env)).retired).toContain(spt.previous.kid);

    const owner = await newOwner(t, 'CLI rotation');
    const dev = await registerOwnerDevice(t, owner);
    const oldKey = t.config.secretsKey!;
    const oldBox = new SecretBox(Buffer.from(oldKey, 'base64'));
    await crossTenant(db(), 'test', (tx) => tx.update(devices).set({ webhookSecret: sealWebhookSecret(oldBox, dev.deviceId, 'whsec_cli') }).where(eq(devices.id, dev.deviceId)));
    const newKey = randomBytes(32).toString('base64');
    const report = await cli(['reseal-secrets'], { ...env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
    expect(report.resealed).toBeGreaterThanOrEqual(1);
    // An earlier test left a value under a key in no ring: reported, and the exit status says so.
    expect(report.exit).toBe(report.failed > 0 ? 1 : 0);
    const [row] = await crossTenant(db(), 'test', (tx) => tx.select({ s: devices.webhookSecret }).from(devices).where(eq(devices.id, dev.deviceId)));
    expect(openWebhookSecret(new SecretBox(Buffer.from(newKey, 'base64')), dev.deviceId, row!.s!)).toBe('whsec_cli');
    // The platform private keys moved under the new key too; give the service (old key only) its keys back.
    const [sptRow] = await crossTenant(db(), 'test', (tx) => tx.select().from(platformKeys).where(eq(platformKeys.purpose, 'spt-signing')));
    expect(openPlatformKeyRow(new SecretBox(Buffer.from(newKey, 'base64')), sptRow!).privateKeyMultibase).toMatch(/^z/);
    expect((await resealPlatformKeys(db(), new SecretBox(Buffer.from(oldKey, 'base64'), [Buffer.from(newKey, 'base64')]))).failed).toBe(0);
  }, 60_000);

  it('SecretBox keyring: the current key seals; previous keys open; reseal is null under the current key', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const ring = new SecretBox(newKey, [randomBytes(32), oldKey]);
    const sealedOld = new SecretBox(oldKey).seal('s', 'ctx');
    expect(ring.open(sealedOld, 'ctx')).toBe('s');
    expect(() => ring.open(sealedOld, 'other')).toThrow(SecretBoxError);
    const resealed = ring.reseal(sealedOld, 'ctx')!;
    expect(new SecretBox(newKey).open(resealed, 'ctx')).toBe('s');
    expect(ring.reseal(resealed, 'ctx')).toBeNull();
    expect(() => new SecretBox(newKey, [randomBytes(16)])).toThrow(RangeError);
  });

  it('platform private keys are sealed at rest; legacy clear rows still work and are sealed; after a SECRETS_KEY rotation tokens still sign and verify', async () => {
    const oldKey = loadSecretsKey(t.config.secretsKey, t.config.dataDir);
    const newKey = randomBytes(32);
    const oldOnly = new SecretBox(oldKey);
    const ring = new SecretBox(newKey, [oldKey]);
    const newOnly = new SecretBox(newKey);
    const stored = () =>
      crossTenant(db(), 'test', async (tx) => ({
        signing: await tx.select().from(signingKeys),
        platform: await tx.select().from(platformKeys),
      }));
    const device = '66666666-6666-4666-8666-666666666666';
    const before = await (await started(new DeviceTokenService(db(), t.app.parley.secrets, 3600, REFRESH_MS))).issue(device, TENANT);

    // At rest: every private half is sealed, and the clear key appears nowhere in the column.
    const rows = await stored();
    expect(rows.signing.length).toBeGreaterThan(0);
    expect(rows.platform.map((r) => r.purpose)).toEqual(expect.arrayContaining(['vc-issuer', 'spt-signing', 'audit-log', 'renewal-challenge']));
    for (const r of rows.signing) {
      expect(SecretBox.isSealed(r.privateJwk)).toBe(true);
      const d = (JSON.parse(openStoredKey(oldOnly, r.privateJwk, signingKeyContext(r.kid))) as { d: string }).d;
      expect(r.privateJwk).not.toContain(d);
    }
    for (const r of rows.platform) {
      expect(SecretBox.isSealed(r.privateKeyMultibase)).toBe(true);
      expect(r.privateKeyMultibase).not.toContain(openPlatformKeyRow(oldOnly, r).privateKeyMultibase);
      expect(() => openPlatformKeyRow(oldOnly, { ...r, publicKeyMultibase: rows.platform.find((o) => o !== r)!.publicKeyMultibase })).toThrow(SecretBoxError);
    }

    // A legacy row in clear is read as it is, and sealed by the start-up pass.
    const active = rows.signing.find((r) => r.active)!;
    const clearJwk = openStoredKey(oldOnly, active.privateJwk, signingKeyContext(active.kid));
    await crossTenant(db(), 'test', (tx) => tx.update(signingKeys).set({ privateJwk: clearJwk }).where(eq(signingKeys.kid, active.kid)));
    const legacy = new DeviceTokenService(db(), oldOnly, 3600, REFRESH_MS);
    await legacy.init();
    expect(await t.app.parley.deviceTokens.verify((await legacy.issue(device, TENANT)).token)).toBeDefined();
    expect((await resealPlatformKeys(db(), oldOnly, { clearOnly: true })).resealed).toBe(1);
    expect(SecretBox.isSealed((await stored()).signing.find((r) => r.kid === active.kid)!.privateJwk)).toBe(true);

    // Rotation: with the new key current and the old one previous, a re-seal pass moves every key under the new key.
    const report = await resealPlatformKeys(db(), ring);
    expect(report).toMatchObject({ resealed: rows.signing.length + rows.platform.length, failed: 0 });
    try {
      for (const r of (await stored()).platform) expect(() => openPlatformKeyRow(oldOnly, r)).toThrow(SecretBoxError);
      // An instance that knows only the new key signs; everyone verifies, old tokens too.
      const tokens = new DeviceTokenService(db(), newOnly, 3600, REFRESH_MS);
      await tokens.init();
      const after = await tokens.issue(device, TENANT);
      for (const token of [before.token, after.token]) {
        expect((await tokens.verify(token))?.deviceId).toBe(device);
        expect((await t.app.parley.deviceTokens.verify(token))?.deviceId).toBe(device);
      }
      const spt = new SptTokens(await started(new SptKeys(db(), newOnly, REFRESH_MS)), 'did:hub:parley');
      const now = Math.floor(Date.now() / 1000);
      const signed = await spt.sign({ sub: 'did:hub:agent-x', skill: 'translate', tier: 'certified', aud: 'https://rp.example', jti: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc', iat: now, exp: now + 60 });
      expect((await spt.verifySignature(signed))?.jti).toBe('cccccccc-cccc-4ccc-8ccc-cccccccccccc');
      const checkpoint = (await (await started(new AuditLogKeys(db(), newOnly, t.config.publicUrl))).signer()).sign('tree\n');
      expect(checkpoint).toContain('/audit-log ');
      const issuer = await started(new PlatformIssuer(db(), newOnly, 'parley', t.config.publicUrl));
      expect(issuer.signingKey().privateKeyMultibase).toBe(openPlatformKeyRow(oldOnly, rows.platform.find((r) => r.purpose === 'vc-issuer')!).privateKeyMultibase);
      await started(new RenewalChallenges(db(), newOnly));
      // The old key alone no longer opens them.
      await expect(started(new SptKeys(db(), oldOnly))).rejects.toThrow(SecretBoxError);
    } finally {
      // Give the service (which knows only the old key) its keys back.
      expect((await resealPlatformKeys(db(), new SecretBox(oldKey, [newKey]))).failed).toBe(0);
    }
  });

  it('SECRETS_KEY_PREVIOUS: comma-separated base64 keys, each checked, and only with SECRETS_KEY', () => {
    const k = () => randomBytes(32).toString('base64');
    const [cur, p1, p2] = [k(), k(), k()];
    expect(loadConfig({ SECRETS_KEY: cur, SECRETS_KEY_PREVIOUS: ` ${p1} , ${p2},` }).secretsKeyPrevious).toEqual([p1, p2]);
    expect(loadConfig({}).secretsKeyPrevious).toEqual([]);
    expect(() => loadConfig({ SECRETS_KEY: cur, SECRETS_KEY_PREVIOUS: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: p1 })).toThrow(/needs SECRETS_KEY/);
  });
});
