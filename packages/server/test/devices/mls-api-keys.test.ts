/**
 * MLS KeyPackages for API-key agents and across tenants over A2A channels (docs/decisions.md "MLS
 * over A2A channels"): an API key with registered key material publishes, counts and claims as
 * its device; an unregistered key gets 403; an API-key agent's KeyPackages are claimed only by the
 * other party of an approved or active channel with it (same tenant, or another tenant with a
 * live agreement), capped per device pair, and an API key claims nothing else; other devices keep
 * the same-tenant rules; a cross-tenant claim reads nothing else of the other tenant (RLS intact).
 */
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MLS_MAX_CHANNEL_CLAIMS } from '@parley/protocol';
import { hubIdentities, mlsKeyPackages } from '../../src/db/schema/index.js';
import { withTenant } from '../../src/db/tenant.js';
import { activeAgent, newOwner, registerOwnerDevice, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { keyAgent as newKeyAgent, type KeyAgent } from '../../testing/key-agents.js';
import { hubOwnerKey } from '../../testing/keys.js';
import { WsPool } from '../../testing/ws-client.js';

const KP = '/api/v1/mls/key-packages';
const CHANNELS = '/api/v1/a2a/channels';
const inDays = (n: number) => new Date(Date.now() + n * 24 * 3600 * 1000).toISOString();
const kp = (s: string) => Buffer.from(`key-package-${s}`).toString('base64');

describe('MLS KeyPackages with API keys and over A2A channels', () => {
  let t: TestApp;
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => t.close());

  async function newKey(owner: Owner): Promise<string> {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'agent' } });
    expect(created.status).toBe(201);
    return created.body.key as string;
  }

  /** An API key whose socket registered key material, with a hub identity of `tier`. */
  const keyAgent = (owner: Owner, tier = 'certified') => newKeyAgent(t, pool, owner, { tier, prefix: 'mls' });

  async function federate(a: Owner, b: Owner): Promise<string> {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/federation/agreements',
      headers: a.auth,
      payload: { partner_tenant_id: b.tenantId, trust_floor: 0.5, allowed_capabilities: [], expires_at: inDays(30) },
    });
    expect(res.status).toBe(201);
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${res.body.id}/accept`, headers: b.auth })).status).toBe(200);
    return res.body.id as string;
  }

  const publish = (headers: Record<string, string>, key_packages: string[]) => t.request({ method: 'POST', url: KP, headers, payload: { key_packages } });
  const count = (headers: Record<string, string>, deviceId: string) => t.request({ method: 'GET', url: `${KP}/${deviceId}`, headers });
  const claim = (headers: Record<string, string>, deviceId: string) => t.request({ method: 'POST', url: `${KP}/claim`, headers, payload: { device_id: deviceId } });
  const request = (x: KeyAgent, y: KeyAgent) => t.request({ method: 'POST', url: `${CHANNELS}/request`, headers: x.headers, payload: { responder_hub_address: y.address } });
  const act = (headers: Record<string, string>, id: string, verb: 'approve' | 'reject' | 'revoke') => t.request({ method: 'POST', url: `${CHANNELS}/${id}/${verb}`, headers });

  it('an API key with registered key material publishes, counts and claims as its device; an unregistered key gets 403', async () => {
    const owner = await newOwner(t);
    const x = await keyAgent(owner);
    const y = await keyAgent(owner);

    const pub = await publish(x.headers, [kp('x1'), kp('x2')]);
    expect(pub.status).toBe(201);
    expect(pub.body).toEqual({ device_id: x.deviceId, published: 2, available: 2 });
    // An X-Device-Id header does not let a key act as another device.
    const spoof = await t.request({ method: 'POST', url: KP, headers: { ...y.headers, 'x-device-id': x.deviceId }, payload: { key_packages: [kp('y1')] } });
    expect(spoof.status).toBe(201);
    expect(spoof.body.device_id).toBe(y.deviceId);

    expect((await count(y.headers, x.deviceId)).body).toEqual({ device_id: x.deviceId, available: 2, by_cipher_suite: [{ cipher_suite: 3, available: 2 }] });
    // An API-key agent's KeyPackages serve its A2A channels: no claim without an approved channel,
    // neither by another agent of the tenant nor by an owner device (its owner conversations stay
    // X3DH + Double Ratchet).
    const od = await registerOwnerDevice(t, owner);
    const ownerHeaders = { ...owner.auth, 'x-device-id': od.deviceId };
    expect((await claim(y.headers, x.deviceId)).status).toBe(404);
    expect((await claim(ownerHeaders, x.deviceId)).status).toBe(404);
    const req = await request(y, x);
    expect(req.status).toBe(201);
    expect((await claim(y.headers, x.deviceId)).status).toBe(404); // pending
    expect((await act(owner.auth, req.body.channel_id, 'approve')).status).toBe(200);
    const first = await claim(y.headers, x.deviceId);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ device_id: x.deviceId, key_package: kp('x1') });
    expect((await count(x.headers, x.deviceId)).body.available).toBe(1);
    expect((await claim(ownerHeaders, x.deviceId)).status).toBe(404); // still only the channel party
    const [row] = await t.app.parley.database.db.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.id, first.body.key_package_id));
    expect(row!.claimedBy).toBe(y.deviceId);

    // A device that is not an API-key agent keeps today's rules for devices that are not either: its
    // KeyPackages serve its conversations, so an API key (whose claims are for channels) gets none.
    const enrolled = await activeAgent(t, owner);
    expect((await publish(enrolled.auth, [kp('e1')])).status).toBe(201);
    expect((await claim(x.headers, enrolled.deviceId)).status).toBe(404);
    expect((await claim(ownerHeaders, enrolled.deviceId)).body).toMatchObject({ device_id: enrolled.deviceId, key_package: kp('e1') });
    expect((await claim(ownerHeaders, enrolled.deviceId)).status).toBe(404); // none left

    const unregistered = { 'x-api-key': await newKey(owner) };
    for (const res of [await publish(unregistered, [kp('u')]), await count(unregistered, x.deviceId), await claim(unregistered, x.deviceId)]) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/no registered key material yet/);
    }
    expect((await publish({ 'x-api-key': 'svc_agent_sk_dev_' + '0'.repeat(64) }, [kp('bad')])).status).toBe(401);
  });

  it('across tenants: refused without a channel, allowed to a party of an approved channel only, capped; RLS intact', async () => {
    const a = await newOwner(t, 'Initiator Inc');
    const b = await newOwner(t, 'Responder Ltd');
    const x = await keyAgent(a, 'enterprise');
    const y = await keyAgent(b, 'enterprise');
    const bystander = await keyAgent(b, 'enterprise');
    const stranger = await keyAgent(a, 'enterprise');
    expect((await publish(y.headers, Array.from({ length: MLS_MAX_CHANNEL_CLAIMS + 2 }, (_, i) => kp(`y${i}`)))).status).toBe(201);
    expect((await publish(bystander.headers, [kp('b1')])).status).toBe(201);
    expect((await publish(x.headers, [kp('x1')])).status).toBe(201);

    // No channel: the other tenant's device is unknown (404), its count too.
    expect((await claim(x.headers, y.deviceId)).status).toBe(404);
    expect((await count(x.headers, y.deviceId)).status).toBe(404);

    await federate(a, b);
    const req = await request(x, y);
    expect(req.status).toBe(201);
    const id = req.body.channel_id as string;
    // Pending is not enough.
    expect((await claim(x.headers, y.deviceId)).status).toBe(404);
    expect((await act(b.auth, id, 'approve')).status).toBe(200);

    // Approved: either party claims the other's KeyPackage, oldest first.
    const got = await claim(x.headers, y.deviceId);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ device_id: y.deviceId, key_package: kp('y0') });
    const back = await claim(y.headers, x.deviceId);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ device_id: x.deviceId, key_package: kp('x1') });
    // Nothing else of the other tenant: not another device, not the count, not for a non-party.
    // (An enrolled agent device of B would not be claimable either: its KeyPackages serve its conversations.)
    expect((await claim(x.headers, bystander.deviceId)).status).toBe(404);
    expect((await count(x.headers, y.deviceId)).status).toBe(404);
    expect((await claim(stranger.headers, y.deviceId)).status).toBe(404);
    expect((await claim(a.auth, y.deviceId)).status).toBe(400); // an owner acts through X-Device-Id of its own device, no channel party

    // The cap per device pair since the approval.
    for (let i = 1; i < MLS_MAX_CHANNEL_CLAIMS; i++) expect((await claim(x.headers, y.deviceId)).status).toBe(200);
    const capped = await claim(x.headers, y.deviceId);
    expect(capped.status).toBe(409);
    expect((await count(y.headers, y.deviceId)).body.available).toBe(2);

    // RLS: tenant A's scope still sees none of B's KeyPackages (the claim switched scope only inside its transaction).
    const db = t.app.parley.database.db;
    const seenByA = await withTenant(db, a.tenantId, (tx) => tx.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.deviceId)));
    expect(seenByA).toEqual([]);
    const seenByB = await withTenant(db, b.tenantId, (tx) => tx.select().from(mlsKeyPackages).where(eq(mlsKeyPackages.deviceId, y.deviceId)));
    expect(seenByB).toHaveLength(MLS_MAX_CHANNEL_CLAIMS + 2);
    expect(seenByB.filter((r) => r.claimedBy === x.deviceId)).toHaveLength(MLS_MAX_CHANNEL_CLAIMS);
    const foreign = await withTenant(db, a.tenantId, (tx) => tx.execute(sql`select count(*)::int as n from mls_key_packages where tenant_id = ${b.tenantId}`));
    expect((foreign as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(0);

    // Revoked: refused again.
    expect((await act(b.auth, id, 'revoke')).status).toBe(200);
    expect((await claim(y.headers, x.deviceId)).status).toBe(404);

    // An enrolled agent device of A in an approved channel with y: its KeyPackages serve its
    // conversations, so y gets none (y falls back to X3DH + Double Ratchet).
    const enrolled = await activeAgent(t, a);
    expect((await publish(enrolled.auth, [kp('e1')])).status).toBe(201);
    const address = `mls-${randomBytes(5).toString('hex')}`;
    expect((await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: a.auth, payload: { hub_address: address, display_name: address, device_id: enrolled.deviceId, public_key: hubOwnerKey() } })).status).toBe(201);
    await db.update(hubIdentities).set({ trustTier: 'enterprise', trustScore: 0.9 }).where(eq(hubIdentities.hubAddress, address));
    const byOwner = await t.request({ method: 'POST', url: `${CHANNELS}/request`, headers: a.auth, payload: { responder_hub_address: y.address, initiator_device_id: enrolled.deviceId } });
    expect(byOwner.status).toBe(201);
    expect((await act(b.auth, byOwner.body.channel_id, 'approve')).status).toBe(200);
    expect((await claim(y.headers, enrolled.deviceId)).status).toBe(404);
    expect((await count(enrolled.auth, enrolled.deviceId)).body.available).toBe(1);
  });

  it('a federated channel whose agreement was revoked gives no claim', async () => {
    const a = await newOwner(t, 'Left');
    const b = await newOwner(t, 'Right');
    const x = await keyAgent(a, 'enterprise');
    const y = await keyAgent(b, 'enterprise');
    expect((await publish(y.headers, [kp('y')])).status).toBe(201);
    const agreementId = await federate(a, b);
    const req = await request(x, y);
    expect(req.status).toBe(201);
    expect((await act(b.auth, req.body.channel_id, 'approve')).status).toBe(200);
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${agreementId}/revoke`, headers: a.auth })).status).toBe(200);
    expect((await claim(x.headers, y.deviceId)).status).toBe(404);
    expect((await count(y.headers, y.deviceId)).body.available).toBe(1);
  });
});
