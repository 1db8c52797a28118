/**
 * The tenant setting `require_post_quantum` (boolean, default false): set and reset by the owner
 * (`PATCH /settings`), and readable by every device of the tenant where devices read their own
 * settings (`GET /devices/self/settings`; owner devices through `GET /devices/{id}/settings`), so
 * their messengers refuse classical X3DH (PQXDH rev. 3) and non-hybrid MLS sessions. Only devices
 * of that tenant see it on.
 */
import { describe, expect, it } from 'vitest';
import { appWithAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';

describe('tenant setting require_post_quantum', () => {
  const s = appWithAgent();
  const patch = (body: unknown, headers: Record<string, string> = s.owner.auth) => s.t.request({ method: 'PATCH', url: '/api/v1/settings', headers, payload: body as object });
  const selfSettings = (headers: Record<string, string>) => s.t.request({ method: 'GET', url: '/api/v1/devices/self/settings', headers });

  it('is off by default, set and reset by the owner, and refuses non-booleans', async () => {
    expect((await s.t.request({ method: 'GET', url: '/api/v1/settings', headers: s.owner.auth })).body.require_post_quantum).toBe(false);
    expect((await patch({ require_post_quantum: 'yes' })).status).toBe(400);
    const on = await patch({ require_post_quantum: true });
    expect(on.status).toBe(200);
    expect(on.body.require_post_quantum).toBe(true);
    expect((await patch({ require_post_quantum: null })).body.require_post_quantum).toBe(false);
  });

  it("devices of the tenant read it from their settings (agent: self; owner device: by id); other tenants' do not", async () => {
    const od = await registerOwnerDevice(s.t, s.owner);
    const other = await newOwner(s.t, 'Other');
    const otherDevice = await registerOwnerDevice(s.t, other);
    const ownerView = (id: string, auth = s.owner.auth) => s.t.request({ method: 'GET', url: `/api/v1/devices/${id}/settings`, headers: auth });
    expect((await selfSettings(s.agent.auth)).body.require_post_quantum).toBe(false);

    await patch({ require_post_quantum: true });
    const agent = await selfSettings(s.agent.auth);
    expect(agent.status).toBe(200);
    expect(agent.body).toEqual({ device_id: s.agent.deviceId, read_receipts_enabled: true, read_receipts_effective: true, require_post_quantum: true });
    expect((await ownerView(od.deviceId)).body.require_post_quantum).toBe(true);
    expect((await ownerView(otherDevice.deviceId, other.auth)).body.require_post_quantum).toBe(false);

    // A device cannot change it: it is not a device setting.
    expect((await s.t.request({ method: 'PATCH', url: '/api/v1/devices/self/settings', headers: s.agent.auth, payload: { require_post_quantum: false } })).status).toBe(400);
    expect((await patch({ require_post_quantum: false }, s.agent.auth)).status).toBe(403);
    await patch({ require_post_quantum: null });
    expect((await selfSettings(s.agent.auth)).body.require_post_quantum).toBe(false);
  });
});
