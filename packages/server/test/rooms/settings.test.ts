/**
 * Tenant settings (contract §4.14; design §8.22): defaults, merge and reset by null, field-by-field
 * validation (unknown keys and out-of-range values are 400 naming the key), owner-only access,
 * tenant isolation, and the honoured settings taking effect (room default security level,
 * held-message TTL).
 */
import { describe, expect, it } from 'vitest';
import { appWithAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const DEFAULTS = { held_message_ttl_hours: 72, default_room_security_level: 'standard', scan_rules_enabled: true, model_prices: {}, read_receipts_enabled: true, require_post_quantum: false, key_transparency_witnesses: [], key_transparency_min_cosignatures: 0 };

describe('tenant settings', () => {
  const s = appWithAgent();

  const get = (headers: Record<string, string> = s.owner.auth) => s.t.request({ method: 'GET', url: '/api/v1/settings', headers });
  const patch = (body: unknown, headers: Record<string, string> = s.owner.auth) => s.t.request({ method: 'PATCH', url: '/api/v1/settings', headers, payload: body as object });

  it('answers the defaults for a tenant that set nothing', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DEFAULTS);
  });

  it('merges a patch, answers the full object, and resets a key with null', async () => {
    const a = await patch({ held_message_ttl_hours: 12 });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ ...DEFAULTS, held_message_ttl_hours: 12 });
    const b = await patch({ default_room_security_level: 'strict', scan_rules_enabled: false });
    expect(b.body).toEqual({ ...DEFAULTS, held_message_ttl_hours: 12, default_room_security_level: 'strict', scan_rules_enabled: false });
    expect((await get()).body).toEqual(b.body);
    const c = await patch({ held_message_ttl_hours: null, scan_rules_enabled: null });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ ...DEFAULTS, default_room_security_level: 'strict' });
    expect((await patch({ default_room_security_level: null })).body).toEqual(DEFAULTS);
  });

  it('refuses unknown keys (naming them), wrong types, out-of-range values and an empty patch with 400', async () => {
    const unknown = await patch({ held_message_ttl_hours: 5, colour: 'blue' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('colour');
    const bad: unknown[] = [
      {},
      { held_message_ttl_hours: 0 },
      { held_message_ttl_hours: 721 },
      { held_message_ttl_hours: 1.5 },
      { held_message_ttl_hours: 'x' },
      { default_room_security_level: 'paranoid' },
      { scan_rules_enabled: 'maybe' },
    ];
    for (const body of bad) expect((await patch(body)).status, JSON.stringify(body)).toBe(400);
    // Nothing was applied by the refused patches.
    expect((await get()).body).toEqual(DEFAULTS);
    expect((await patch({ held_message_ttl_hours: 1 })).status).toBe(200);
    expect((await patch({ held_message_ttl_hours: 720 })).body.held_message_ttl_hours).toBe(720);
    await patch({ held_message_ttl_hours: null });
  });

  it('is owner only: 401 without a token, 403 with a device token', async () => {
    expect((await s.t.request({ method: 'GET', url: '/api/v1/settings' })).status).toBe(401);
    expect((await s.t.request({ method: 'PATCH', url: '/api/v1/settings', payload: { scan_rules_enabled: false } })).status).toBe(401);
    expect((await get(s.agent.auth)).status).toBe(403);
    expect((await patch({ scan_rules_enabled: false }, s.agent.auth)).status).toBe(403);
  });

  it('keeps tenants apart', async () => {
    const other = await newOwner(s.t, 'Other');
    await patch({ held_message_ttl_hours: 3 }, other.auth);
    expect((await get(other.auth)).body.held_message_ttl_hours).toBe(3);
    expect((await get()).body.held_message_ttl_hours).toBe(72);
  });

  it('honours default_room_security_level and held_message_ttl_hours', async () => {
    const od = await registerOwnerDevice(s.t, s.owner);
    expect((await patch({ default_room_security_level: 'strict', held_message_ttl_hours: 5 })).status).toBe(200);
    const room = await s.t.request({ method: 'POST', url: '/api/v1/rooms', headers: s.owner.auth, payload: { name: 'r', member_device_ids: [od.deviceId, s.agent.deviceId] } });
    expect(room.status).toBe(201);
    expect(room.body.security_level).toBe('strict');
    const explicit = await s.t.request({ method: 'POST', url: '/api/v1/rooms', headers: s.owner.auth, payload: { name: 's', member_device_ids: [od.deviceId, s.agent.deviceId], security_level: 'standard' } });
    expect(explicit.body.security_level).toBe('standard');

    // A message a policy holds expires after the tenant's TTL.
    const policy = await s.t.request({ method: 'POST', url: '/api/v1/policies', headers: s.owner.auth, payload: { name: 'hold all', scope: { room_id: room.body.room_id }, conditions: {}, action: 'hold' } });
    expect(policy.status).toBe(201);
    const sent = await s.t.request({
      method: 'POST',
      url: `/api/v1/rooms/${room.body.room_id}/messages`,
      headers: { ...s.owner.auth, 'x-device-id': od.deviceId },
      payload: { envelopes: [{ recipient_device_id: s.agent.deviceId, header_blob: b64('h'), ciphertext: b64('c') }] },
    });
    expect(sent.status).toBe(201);
    const heldId = sent.body.deliveries[0].held_message_id as string;
    expect(heldId).toBeDefined();
    const held = (await s.t.request({ method: 'GET', url: '/api/v1/policies/held-messages', headers: s.owner.auth })).body.held_messages.find((h: any) => h.held_message_id === heldId);
    expect(Date.parse(held.expires_at) - Date.parse(held.created_at)).toBeCloseTo(5 * 3_600_000, -4);

    await patch({ default_room_security_level: null, held_message_ttl_hours: null });
    const plain = await s.t.request({ method: 'POST', url: '/api/v1/rooms', headers: s.owner.auth, payload: { name: 't', member_device_ids: [od.deviceId, s.agent.deviceId] } });
    expect(plain.body.security_level).toBe('standard');
  });
});
