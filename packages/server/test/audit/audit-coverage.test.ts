/**
 * Audit coverage of the remaining security-relevant actions (contract §4.14; design §8.10;
 * docs/decisions.md "Audit coverage"): agent activation, owner devices (register, rename, remove), webhooks
 * (registered, cleared), hub identities (register, DID update, capability, profile),
 * credentials (issued, revoked), federation agreements and A2A channels (recorded in both
 * tenants' chains), decisions (created, resolved, expired). Every action goes through the HTTP
 * API; each test reads GET /audit/events for type, actor, subject and data, checks that no secret
 * reached the log, and GET /audit/verify stays valid.
 */
import { randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hubIdentities } from '../../src/db/schema/index.js';
import { DecisionService } from '../../src/modules/decisions/service.js';
import { publicKeyMultibase } from '../../src/keys/index.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { activeAgent, createInvite, enroll, newOwner, registerOwnerDevice, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { hubOwnerKey, newDeviceKeys } from '../../testing/keys.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

interface AuditEvent {
  event_id: string;
  type: string;
  actor: string;
  subject: string | null;
  data: Record<string, unknown>;
}

const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
const OPTIONS = [
  { option_id: 'ship', label: 'Ship it', risk_level: 'medium', is_default: true },
  { option_id: 'wait', label: 'Wait a day', risk_level: 'low' },
];

describe('audit coverage', () => {
  let t: TestApp;
  let a: Owner;
  let b: Owner;
  const pool = new WsPool();
  /** Strings that must never appear in any audit event (raw keys, tokens, secrets, content). */
  const secrets: string[] = [];

  beforeAll(async () => {
    // The app's own decision deadline job stays out of the way; the test runs a tick itself.
    t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000', DECISION_DEADLINE_INTERVAL_MS: '3600000' } });
    a = await newOwner(t, 'Tenant A');
    b = await newOwner(t, 'Tenant B');
  });
  afterEach(() => pool.closeAll());
  afterAll(async () => {
    // Neither chain holds a secret, and both still verify after everything above.
    for (const o of [a, b]) {
      const all = JSON.stringify(await events(o));
      for (const s of secrets) expect(all).not.toContain(s);
      expect((await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: o.auth })).body).toMatchObject({ valid: true, first_broken: null });
    }
    await t.close();
  });

  /** Every event of `o`'s chain, newest first. */
  async function events(o: Owner, query = ''): Promise<AuditEvent[]> {
    const res = await t.request({ method: 'GET', url: `/api/v1/audit/events?limit=200${query}`, headers: o.auth });
    expect(res.status).toBe(200);
    return res.body.events as AuditEvent[];
  }
  /** The one event of `type` about `subject` in `o`'s chain, with the expected actor; answers its data. */
  async function expectEvent(o: Owner, type: string, subject: string, actor: string): Promise<Record<string, unknown>> {
    const found = (await events(o, `&type=${type}&subject=${encodeURIComponent(subject)}`)).filter((e) => e.type === type && e.subject === subject);
    expect(found, `${type} ${subject}`).toHaveLength(1);
    expect(found[0]!.actor).toBe(actor);
    return found[0]!.data;
  }
  async function expectValid(o: Owner): Promise<void> {
    const v = await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: o.auth });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ valid: true, first_broken: null });
  }
  const setTier = (address: string, trustTier: string, trustScore: number | null = 0.9) =>
    t.app.parley.database.db.update(hubIdentities).set({ trustTier, trustScore }).where(eq(hubIdentities.hubAddress, address));
  const newAddress = () => `audit-${randomBytes(5).toString('hex')}`;

  /** An API key bound to key material over the socket (client_key_register): an ACTIVE agent device. */
  async function boundKey(o: Owner): Promise<{ id: string; deviceId: string; headers: Record<string, string> }> {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: o.auth, payload: { name: 'audit-agent' } });
    expect(created.status).toBe(201);
    secrets.push(created.body.key);
    const ws = await pool.open(wsAddress(t.wsUrl, { token: created.body.key }));
    const keys = newDeviceKeys();
    ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
    const deviceId = (await ws.next('client_key_accepted')).data.device_id as string;
    return { id: created.body.id, deviceId, headers: { 'x-api-key': created.body.key } };
  }
  /** A hub identity bound to `deviceId`, given `tier` and a trust score by the superuser handle. */
  async function identity(o: Owner, deviceId: string, tier: string): Promise<{ id: string; address: string }> {
    const address = newAddress();
    const res = await t.request({ method: 'POST', url: '/api/v1/hub/register', headers: o.auth, payload: { hub_address: address, display_name: address, device_id: deviceId, public_key: hubOwnerKey() } });
    expect(res.status).toBe(201);
    await setTier(address, tier);
    return { id: res.body.id, address };
  }

  it('agent activation: device.activated by the device itself, in order after approval; a refused activation records nothing', async () => {
    const invite = await createInvite(t, a);
    const { res, keys } = await enroll(t, invite.token);
    expect(res.status).toBe(201);
    const id = res.body.device_id as string;
    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${id}/approve`, headers: a.auth })).status).toBe(200);
    const activate = (signature: string) => t.request({ method: 'POST', url: `/api/v1/devices/${id}/activate`, payload: { signature } });
    expect((await activate(newDeviceKeys().sign(`activate:${id}`))).status).toBe(401);
    expect(await events(a, `&type=device.activated&subject=${id}`)).toHaveLength(0);
    const ok = await activate(keys.sign(`activate:${id}`));
    expect(ok.status).toBe(200);
    secrets.push(ok.body.device_jwt);
    expect(await expectEvent(a, 'device.activated', id, `device:${id}`)).toEqual({ from: 'APPROVED', fingerprint: expect.any(String) });
    const lifecycle = (await events(a)).filter((e) => e.subject === id).map((e) => e.type).reverse();
    expect(lifecycle).toEqual(['device.enrolled', 'device.approved', 'device.activated']);
    await expectValid(a);
  });

  it('owner devices: registered, renamed, removed; webhooks registered and cleared (host only, never the secret)', async () => {
    const od = await registerOwnerDevice(t, a);
    const data = await expectEvent(a, 'device.registered', od.deviceId, a.sub);
    expect(data).toMatchObject({ kind: 'owner', fingerprint: expect.any(String) });

    expect((await t.request({ method: 'PATCH', url: `/api/v1/devices/${od.deviceId}`, headers: a.auth, payload: { name: 'work laptop' } })).status).toBe(200);
    expect(await expectEvent(a, 'device.renamed', od.deviceId, a.sub)).toEqual({ from: 'laptop', to: 'work laptop' });

    // Owner sets an agent's webhook; the agent sets its own; the owner clears it.
    const agent = await activeAgent(t, a);
    const set = await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/webhook`, headers: a.auth, payload: { url: 'https://hooks.example.com/in?token=q-s3cr3t-value' } });
    expect(set.status).toBe(200);
    secrets.push(set.body.secret, 'q-s3cr3t-value', '/in?token');
    const self = await t.request({ method: 'PATCH', url: '/api/v1/devices/self/webhook', headers: agent.auth, payload: { url: 'https://agent.example.net:8443/path/secret-path' } });
    expect(self.status).toBe(200);
    secrets.push(self.body.secret, 'secret-path');
    const cleared = await t.request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/webhook`, headers: a.auth, payload: { url: null } });
    expect(cleared.status).toBe(200);
    const hooks = (await events(a)).filter((e) => e.subject === agent.deviceId && e.type.startsWith('webhook.')).reverse();
    expect(hooks.map((e) => [e.type, e.actor, e.data])).toEqual([
      ['webhook.registered', a.sub, { host: 'hooks.example.com' }],
      ['webhook.registered', `device:${agent.deviceId}`, { host: 'agent.example.net:8443' }],
      ['webhook.cleared', a.sub, { previous_host: 'agent.example.net:8443' }],
    ]);

    // A second owner device removes the first (X-Device-Id names the acting device).
    const acting = await registerOwnerDevice(t, a);
    const removed = await t.request({ method: 'DELETE', url: `/api/v1/devices/${od.deviceId}/remove`, headers: { ...a.auth, 'x-device-id': acting.deviceId } });
    expect(removed.status).toBe(204);
    expect(await expectEvent(a, 'device.removed', od.deviceId, a.sub)).toEqual({ from: 'ACTIVE', acting_device_id: acting.deviceId });
    // A refused action (400: agent devices are revoked, not removed) records nothing.
    expect((await t.request({ method: 'DELETE', url: `/api/v1/devices/${agent.deviceId}/remove`, headers: { ...a.auth, 'x-device-id': acting.deviceId } })).status).toBe(400);
    expect((await events(a, `&type=device.removed&subject=${agent.deviceId}`))).toHaveLength(0);
    await expectValid(a);
  });

  it('hub identities: registered, DID updated (key id), capability registered, profile updated', async () => {
    const ownerKey = newDeviceKeys();
    const address = newAddress();
    const reg = await t.request({
      method: 'POST',
      url: '/api/v1/hub/register',
      headers: a.auth,
      payload: { hub_address: address, display_name: 'Audited', public_key: Buffer.from(ownerKey.identityPublicKey, 'hex').toString('base64') },
    });
    expect(reg.status).toBe(201);
    const id = reg.body.id as string;
    expect(await expectEvent(a, 'hub.registered', id, a.sub)).toEqual({ hub_address: address, device_id: null, owner_key: true });

    const added = publicKeyMultibase(Buffer.from(newDeviceKeys().identityPublicKey, 'hex'));
    const unsigned = { add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: added }, timestamp: new Date().toISOString() };
    const signature = Buffer.from(ownerKey.sign(Buffer.from(canonicalize(unsigned)!, 'utf8')), 'hex').toString('base64');
    secrets.push(signature);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/did`, headers: a.auth, payload: { ...unsigned, signature } })).status).toBe(200);
    expect(await expectEvent(a, 'hub.did_updated', id, a.sub)).toEqual({ hub_address: address, key_id: 'key-2', key_type: 'Ed25519VerificationKey2020', public_key_multibase: added });
    // A bad signature is refused (403) and leaves no event.
    const forged = { add_verification_method: { type: 'Ed25519VerificationKey2020', publicKeyMultibase: publicKeyMultibase(Buffer.from(newDeviceKeys().identityPublicKey, 'hex')) }, timestamp: new Date(Date.now() + 1000).toISOString(), signature };
    expect((await t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/did`, headers: a.auth, payload: forged })).status).toBe(403);
    expect(await events(a, `&type=hub.did_updated&subject=${id}`)).toHaveLength(1);

    const cap = await t.request({ method: 'POST', url: `/api/v1/hub/${address}/capabilities`, headers: a.auth, payload: { name: 'translate', version: '1.2.0', input_schema: { type: 'object' } } });
    expect(cap.status).toBe(201);
    expect(await expectEvent(a, 'hub.capability_registered', id, a.sub)).toMatchObject({ hub_address: address, name: 'translate', version: '1.2.0', capability_id: expect.any(String) });

    expect((await t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/profile`, headers: a.auth, payload: { description: 'private roadmap words' } })).status).toBe(200);
    secrets.push('private roadmap words');
    expect(await expectEvent(a, 'hub.profile_updated', id, a.sub)).toEqual({ hub_address: address, fields: ['description'] });
    // Another tenant's owner cannot update it (404) and nothing lands in either chain.
    expect((await t.request({ method: 'PATCH', url: `/api/v1/hub/${address}/profile`, headers: b.auth, payload: { display_name: 'hijack' } })).status).toBe(404);
    expect(await events(b, '&type=hub.profile_updated')).toHaveLength(0);
    await expectValid(a);
  });

  it('credentials: issued and revoked (never the proof)', async () => {
    const address = newAddress();
    const reg = await t.request({ method: 'POST', url: '/api/v1/hub/identities', headers: a.auth, payload: { hub_address: address, display_name: 'Certified', public_key: hubOwnerKey() } });
    expect(reg.status).toBe(201);
    await setTier(address, 'certified');
    const issued = await t.request({ method: 'POST', url: `/api/v1/hub/identities/${reg.body.id}/credentials`, headers: a.auth });
    expect(issued.status).toBe(201);
    const credentialId = issued.body.id as string;
    secrets.push(issued.body.proof.proofValue);
    expect(await expectEvent(a, 'credential.issued', credentialId, a.sub)).toEqual({
      identity_id: reg.body.id,
      credential_subject: `did:hub:${address}`,
      trust_tier: 'certified',
      expires_at: expect.any(String),
    });
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/credentials/${encodeURIComponent(credentialId)}/revoke`, headers: a.auth })).status).toBe(200);
    expect(await expectEvent(a, 'credential.revoked', credentialId, a.sub)).toEqual({ identity_id: reg.body.id, credential_subject: `did:hub:${address}` });
    // Revoking twice is 409 and records nothing more.
    expect((await t.request({ method: 'POST', url: `/api/v1/hub/credentials/${encodeURIComponent(credentialId)}/revoke`, headers: a.auth })).status).toBe(409);
    expect(await events(a, `&type=credential.revoked&subject=${encodeURIComponent(credentialId)}`)).toHaveLength(1);
    await expectValid(a);
  });

  it('decisions: created (owner, device JWT, API key), resolved (never the note), expired by the deadline job and on a late resolve (system)', async () => {
    const agent = await activeAgent(t, a);
    const key = await boundKey(a);
    const create = async (headers: Record<string, string>, extra: Record<string, unknown> = {}) => {
      const res = await t.request({ method: 'POST', url: '/api/v1/decisions', headers, payload: { title: 'Wire the funds?', description: 'account 12345', options: OPTIONS, ...extra } });
      expect(res.status).toBe(201);
      return res.body.decision_id as string;
    };
    secrets.push('Wire the funds?', 'account 12345', 'Ship it');
    const byOwner = await create(a.auth, { device_id: agent.deviceId });
    const byDevice = await create(agent.auth, { deadline: inDays(1), auto_action: { resolution: 'deny', option_id: 'wait' } });
    const byKey = await create(key.headers);
    expect(await expectEvent(a, 'decision.created', byOwner, a.sub)).toEqual({ device_id: agent.deviceId, option_count: 2, deadline: null, auto_action: null });
    expect(await expectEvent(a, 'decision.created', byDevice, `device:${agent.deviceId}`)).toMatchObject({ device_id: agent.deviceId, auto_action: 'deny' });
    expect(await expectEvent(a, 'decision.created', byKey, `api_key:${key.id}`)).toMatchObject({ device_id: key.deviceId });

    const note = 'the board said so, confidential';
    secrets.push(note);
    expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${byOwner}/resolve`, headers: a.auth, payload: { resolution: 'approve', note } })).status).toBe(200);
    expect(await expectEvent(a, 'decision.resolved', byOwner, a.sub)).toEqual({ from: 'pending', resolution: 'approve', option_id: 'ship' });
    expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${byKey}/resolve`, headers: a.auth, payload: { resolution: 'defer' } })).status).toBe(200);
    expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${byKey}/resolve`, headers: a.auth, payload: { resolution: 'deny' } })).status).toBe(200);
    const keyEvents = (await events(a, `&type=decision.resolved&subject=${byKey}`)).reverse();
    expect(keyEvents.map((e) => e.data)).toEqual([
      { from: 'pending', resolution: 'defer', option_id: null },
      { from: 'deferred', resolution: 'deny', option_id: null },
    ]);

    // The deadline job (one tick, across tenants) expires the device's decision as `system`.
    const job = new DecisionService({ db: t.app.parley.database.db, notifier: new Notifier(t.app.parley.bus), listDefault: 50, listMax: 200 });
    expect(await job.expireDue(new Date(Date.now() + 2 * 86_400_000))).toBeGreaterThanOrEqual(1);
    expect(await expectEvent(a, 'decision.expired', byDevice, 'system')).toEqual({ auto_action: 'deny', option_id: 'wait' });

    // A resolution that arrives after the deadline expires it there and then (409), also as `system`.
    const late = await create(agent.auth, { deadline: new Date(Date.now() + 300).toISOString(), auto_action: { resolution: 'approve' } });
    await new Promise((r) => setTimeout(r, 400));
    expect((await t.request({ method: 'POST', url: `/api/v1/decisions/${late}/resolve`, headers: a.auth, payload: { resolution: 'deny' } })).status).toBe(409);
    expect(await expectEvent(a, 'decision.expired', late, 'system')).toEqual({ from: 'pending', auto_action: 'approve', option_id: null });
    expect(await events(a, `&type=decision.resolved&subject=${late}`)).toHaveLength(0);
    await expectValid(a);
  });

  it('federation and federated A2A channels: each transition lands in both tenants’ chains', async () => {
    // Federation: A proposes, B accepts, A renews (B's chain names tenant A as the actor, and vice versa).
    const proposed = await t.request({
      method: 'POST',
      url: '/api/v1/federation/agreements',
      headers: a.auth,
      payload: { partner_tenant_id: b.tenantId, trust_floor: 0.5, allowed_capabilities: [], audit_sharing: true, expires_at: inDays(30) },
    });
    expect(proposed.status).toBe(201);
    const fed = proposed.body.id as string;
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${fed}/accept`, headers: b.auth })).status).toBe(200);
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${fed}/renew`, headers: a.auth, payload: { expires_at: inDays(60) } })).status).toBe(200);
    const proposedData = { tenant_id: a.tenantId, partner_tenant_id: b.tenantId, trust_floor: 0.5, audit_sharing: true, expires_at: expect.any(String) };
    expect(await expectEvent(a, 'federation.proposed', fed, a.sub)).toEqual(proposedData);
    expect(await expectEvent(b, 'federation.proposed', fed, `tenant:${a.tenantId}`)).toEqual(proposedData);
    expect(await expectEvent(b, 'federation.accepted', fed, b.sub)).toMatchObject({ from: 'pending', to: 'active' });
    expect(await expectEvent(a, 'federation.accepted', fed, `tenant:${b.tenantId}`)).toMatchObject({ from: 'pending', to: 'active' });
    expect(await expectEvent(a, 'federation.renewed', fed, a.sub)).toMatchObject({ from: 'active', to: 'active' });
    expect(await expectEvent(b, 'federation.renewed', fed, `tenant:${a.tenantId}`)).toMatchObject({ from: 'active', to: 'active' });
    // B's owner sub never appears in A's chain (principals stay inside their tenant).
    expect(JSON.stringify(await events(a))).not.toContain(b.sub);

    // Federated A2A: A's owner requests for its agent, B approves, A revokes; a second request is rejected by B.
    const agentA = await activeAgent(t, a);
    const agentB = await activeAgent(t, b);
    const agentB2 = await activeAgent(t, b);
    const idA = await identity(a, agentA.deviceId, 'enterprise');
    const idB = await identity(b, agentB.deviceId, 'enterprise');
    const idB2 = await identity(b, agentB2.deviceId, 'enterprise');
    const request = (to: string) => t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: a.auth, payload: { responder_hub_address: to, initiator_device_id: agentA.deviceId } });
    const req1 = await request(idB.address);
    expect(req1.status).toBe(201);
    const ch = req1.body.channel_id as string;
    const requestedData = {
      initiator_hub_address: idA.address,
      responder_hub_address: idB.address,
      initiator_device_id: agentA.deviceId,
      responder_device_id: agentB.deviceId,
      capability: null,
      federated: true,
    };
    expect(await expectEvent(a, 'a2a_channel.requested', ch, a.sub)).toEqual(requestedData);
    expect(await expectEvent(b, 'a2a_channel.requested', ch, `tenant:${a.tenantId}`)).toEqual(requestedData);
    // The initiator's side cannot approve (403): nothing recorded.
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch}/approve`, headers: a.auth })).status).toBe(403);
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch}/approve`, headers: b.auth })).status).toBe(200);
    expect(await expectEvent(b, 'a2a_channel.approved', ch, b.sub)).toEqual({ from: 'pending', to: 'approved' });
    expect(await expectEvent(a, 'a2a_channel.approved', ch, `tenant:${b.tenantId}`)).toEqual({ from: 'pending', to: 'approved' });
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch}/revoke`, headers: a.auth })).status).toBe(200);
    expect(await expectEvent(a, 'a2a_channel.revoked', ch, a.sub)).toEqual({ from: 'approved', to: 'revoked' });
    expect(await expectEvent(b, 'a2a_channel.revoked', ch, `tenant:${a.tenantId}`)).toEqual({ from: 'approved', to: 'revoked' });

    const req2 = await request(idB2.address);
    expect(req2.status).toBe(201);
    const ch2 = req2.body.channel_id as string;
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch2}/reject`, headers: b.auth })).status).toBe(200);
    expect(await expectEvent(b, 'a2a_channel.rejected', ch2, b.sub)).toEqual({ from: 'pending', to: 'rejected' });
    expect(await expectEvent(a, 'a2a_channel.rejected', ch2, `tenant:${b.tenantId}`)).toEqual({ from: 'pending', to: 'rejected' });

    // B revokes the agreement (terminal): both chains.
    expect((await t.request({ method: 'POST', url: `/api/v1/federation/agreements/${fed}/revoke`, headers: b.auth })).status).toBe(200);
    expect(await expectEvent(b, 'federation.revoked', fed, b.sub)).toMatchObject({ from: 'active', to: 'revoked' });
    expect(await expectEvent(a, 'federation.revoked', fed, `tenant:${b.tenantId}`)).toMatchObject({ from: 'active', to: 'revoked' });
    await expectValid(a);
    await expectValid(b);
  });

  it('same-tenant A2A channel requested by an API key agent: one event per transition in the one chain', async () => {
    const o = await newOwner(t, 'Tenant C');
    const x = await boundKey(o);
    const y = await activeAgent(t, o);
    await identity(o, x.deviceId, 'certified');
    const idY = await identity(o, y.deviceId, 'certified');
    const req = await t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: x.headers, payload: { responder_hub_address: idY.address } });
    expect(req.status).toBe(201);
    const ch = req.body.channel_id as string;
    expect(await expectEvent(o, 'a2a_channel.requested', ch, `api_key:${x.id}`)).toMatchObject({ federated: false, initiator_device_id: x.deviceId });
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch}/approve`, headers: o.auth })).status).toBe(200);
    expect(await expectEvent(o, 'a2a_channel.approved', ch, o.sub)).toEqual({ from: 'pending', to: 'approved' });
    expect((await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${ch}/revoke`, headers: x.headers })).status).toBe(200);
    expect(await expectEvent(o, 'a2a_channel.revoked', ch, `api_key:${x.id}`)).toEqual({ from: 'approved', to: 'revoked' });
    // Nothing of this channel reached the other tenants' chains.
    for (const other of [a, b]) expect((await events(other)).some((e) => e.subject === ch)).toBe(false);
    await expectValid(o);
  });
});
