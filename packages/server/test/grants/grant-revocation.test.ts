/**
 * SPTs never outlive the agent they were issued to (design §8.7; contract §3.3; docs/decisions.md
 * "Skill Permission Tokens…"): revoking a device revokes its grants (reason `device_revoked`, the
 * jtis in the `device.revoked` audit) and demotes its hub identity to unverified through
 * decideTier (a `hub_tier_changes` row with reason `device_revoked`, audit `hub.tier_changed`);
 * deleting it sweeps what is left (`device_deleted`); validation also fails `revocation` while the
 * device is not ACTIVE or the identity is suspended or unbound, whatever the grant row says; and an
 * issue racing a downgrade waits for the identity lock (FOR SHARE) instead of issuing at the lost
 * tier.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities, hubTierChanges, skillGrants } from '../../src/db/schema/index.js';
import { crossTenant, withTenant } from '../../src/db/tenant.js';
import { decideTier } from '../../src/modules/trust/certify.js';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey } from '../../testing/keys.js';

let seq = 0;
const addr = () => `rvk-${Date.now().toString(36)}-${++seq}`;

describe('grant revocation on device loss', () => {
  let t: TestApp;
  let a: Owner;

  const db = () => t.app.parley.database.db;
  const aud = () => t.config.publicUrl;
  /** An ACTIVE agent with a hub identity at `tier`. */
  const subject = async (tier = 'certified'): Promise<{ agent: Agent; address: string; identityId: string }> => {
    const agent = await activeAgent(t, a);
    const address = addr();
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: a.auth, payload: { hub_address: address, display_name: 'Agent', device_id: agent.deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
    await db().update(hubIdentities).set({ trustTier: tier, trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
    return { agent, address, identityId: res.body.id as string };
  };
  const issue = async (deviceId: string, skill = 'translate') => {
    const res = await t.request({ method: 'POST', url: '/api/v1/grants', headers: a.auth, payload: { skill, device_id: deviceId } });
    expect(res.status).toBe(201);
    return res.body as { token: string; jti: string; tier: string };
  };
  const checks = async (token: string) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/grants/validate', payload: { token, audience: aud() } });
    expect(res.status).toBe(200);
    return { valid: res.body.valid as boolean, ...(Object.fromEntries((res.body.checks as { check: string; passed: boolean }[]).map((c) => [c.check, c.passed])) as Record<string, boolean>) };
  };
  const audit = async (type: string, subjectId: string) =>
    (await t.request({ method: 'GET', url: `/api/v1/audit/events?type=${type}&subject=${subjectId}`, headers: a.auth })).body.events as any[];
  const tierOf = async (address: string) => (await db().select().from(hubIdentities).where(eq(hubIdentities.hubAddress, address)))[0]!.trustTier;
  const tierChanges = (identityId: string) => crossTenant(db(), 'test', (tx) => tx.select().from(hubTierChanges).where(eq(hubTierChanges.identityId, identityId)));
  const grantRow = async (jti: string) => (await db().select().from(skillGrants).where(eq(skillGrants.jti, jti)))[0]!;
  const revokeDevice = (deviceId: string) => t.request({ method: 'PATCH', url: `/api/v1/devices/${deviceId}/revoke`, headers: a.auth });

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
    a = await newOwner(t, 'Revocation A');
  });
  afterAll(() => t.close());

  it('revoking a device revokes its SPTs (validate: revocation false) and demotes its identity to unverified, recorded and audited', async () => {
    const s = await subject('enterprise');
    const g1 = await issue(s.agent.deviceId, 'translate');
    const g2 = await issue(s.agent.deviceId, 'summarize');
    expect(g1.tier).toBe('enterprise');
    expect(await checks(g1.token)).toMatchObject({ valid: true, revocation: true });

    expect((await revokeDevice(s.agent.deviceId)).status).toBe(200);

    for (const g of [g1, g2]) {
      expect(await checks(g.token)).toMatchObject({ valid: false, signature: true, expiration: true, revocation: false });
      const row = await grantRow(g.jti);
      expect(row.revokedAt).not.toBeNull();
      expect(row.revokedReason).toBe('device_revoked');
    }
    const revokedAudit = await audit('device.revoked', s.agent.deviceId);
    expect(revokedAudit).toHaveLength(1);
    expect(revokedAudit[0].data.from).toBe('ACTIVE');
    expect([...revokedAudit[0].data.revoked_grants].sort()).toEqual([g1.jti, g2.jti].sort());

    expect(await tierOf(s.address)).toBe('unverified');
    const changes = await tierChanges(s.identityId);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ fromTier: 'enterprise', toTier: 'unverified', reason: 'device_revoked' });
    const tierAudit = await audit('hub.tier_changed', s.identityId);
    expect(tierAudit).toHaveLength(1);
    expect(tierAudit[0]).toMatchObject({ actor: a.sub, data: { from: 'enterprise', to: 'unverified', reason: 'device_revoked' } });

    // Listed as revoked to the owner too.
    const listed = await t.request({ method: 'GET', url: `/api/v1/grants?device_id=${s.agent.deviceId}&active=true`, headers: a.auth });
    expect(listed.body.grants).toEqual([]);
  });

  it('an identity already unverified gets no tier change; its grants are still revoked', async () => {
    const s = await subject('unverified');
    const g = await issue(s.agent.deviceId);
    expect((await revokeDevice(s.agent.deviceId)).status).toBe(200);
    expect(await checks(g.token)).toMatchObject({ valid: false, revocation: false });
    expect(await tierChanges(s.identityId)).toHaveLength(0);
    expect(await audit('hub.tier_changed', s.identityId)).toHaveLength(0);
  });

  it('deleting a revoked device sweeps any grant left active (reason device_deleted, jtis audited)', async () => {
    const s = await subject('certified');
    const g = await issue(s.agent.deviceId);
    expect((await revokeDevice(s.agent.deviceId)).status).toBe(200);
    // A grant row left active by an older code path (before device revocation revoked grants).
    await db().update(skillGrants).set({ revokedAt: null, revokedReason: null }).where(eq(skillGrants.jti, g.jti));
    // Still not valid: the device is not ACTIVE.
    expect(await checks(g.token)).toMatchObject({ valid: false, revocation: false });
    const del = await t.request({ method: 'DELETE', url: `/api/v1/devices/${s.agent.deviceId}`, headers: a.auth });
    expect(del.status).toBe(204);
    expect(await grantRow(g.jti)).toMatchObject({ revokedReason: 'device_deleted' });
    const deleted = await audit('device.deleted', s.agent.deviceId);
    expect(deleted).toHaveLength(1);
    expect(deleted[0].data.revoked_grants).toEqual([g.jti]);
    expect(await checks(g.token)).toMatchObject({ valid: false, revocation: false });
  });

  it('validate fails revocation while the identity is suspended or unbound, and passes again once restored', async () => {
    const s = await subject('certified');
    const g = await issue(s.agent.deviceId);
    expect(await checks(g.token)).toMatchObject({ valid: true });
    await db().update(hubIdentities).set({ status: 'suspended' }).where(eq(hubIdentities.hubAddress, s.address));
    expect(await checks(g.token)).toMatchObject({ valid: false, revocation: false });
    await db().update(hubIdentities).set({ status: 'active', deviceId: null }).where(eq(hubIdentities.hubAddress, s.address));
    expect(await checks(g.token)).toMatchObject({ valid: false, revocation: false });
    await db().update(hubIdentities).set({ deviceId: s.agent.deviceId }).where(eq(hubIdentities.hubAddress, s.address));
    expect(await checks(g.token)).toMatchObject({ valid: true, revocation: true });
  });

  it('an agent issuing for itself while a downgrade holds its identity waits and is refused at the new tier', async () => {
    const s = await subject('certified');
    let locked!: () => void;
    const lockedP = new Promise<void>((r) => (locked = r));
    let release!: () => void;
    const releaseP = new Promise<void>((r) => (release = r));
    // A tier decision in flight: identity locked FOR UPDATE, downgraded, grants revoked, not yet committed.
    const downgrade = withTenant(db(), a.tenantId, async (tx) => {
      const [identity] = await tx.select().from(hubIdentities).where(eq(hubIdentities.id, s.identityId)).for('update');
      const now = new Date();
      const d = await decideTier(tx, { tenantId: a.tenantId, identity: identity!, latest: 0.2, series: [{ at: now, composite: 0.2 }], now, reason: 'trust_recompute', actor: 'system' });
      expect(d).toMatchObject({ from: 'certified', to: 'unverified', direction: 'down' });
      locked();
      await releaseP;
    });
    await lockedP;
    const issuing = t.request({ method: 'POST', url: '/api/v1/grants', headers: s.agent.auth, payload: { skill: 'race' } });
    await new Promise((r) => setTimeout(r, 300));
    release();
    await downgrade;
    const res = await issuing;
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/unverified/);
    const active = await db()
      .select()
      .from(skillGrants)
      .where(and(eq(skillGrants.deviceId, s.agent.deviceId), isNull(skillGrants.revokedAt)));
    expect(active).toEqual([]);
  });
});
