/**
 * API-key agents for tests (contract §5 rule 4; design §7, §8.18): a new API key of the owner's
 * tenant whose socket registers key material (`client_key_register`, trust on first use), and a
 * hub identity bound to the new device, optionally with a tier and score set directly (the trust
 * engine and certification are tested elsewhere).
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { hubIdentities } from '../src/db/schema/index.js';
import type { Owner } from './flows.js';
import type { TestApp } from './harness.js';
import { hubOwnerKey, newDeviceKeys, type DeviceKeys } from './keys.js';
import { wsAddress, type WsClient, type WsPool } from './ws-client.js';

/** An API-key agent: its key (as `X-API-Key` headers), registered socket, device and hub identity. */
export interface KeyAgent {
  owner: Owner;
  apiKey: string;
  headers: { 'x-api-key': string };
  ws: WsClient;
  keys: DeviceKeys;
  deviceId: string;
  identityId: string;
  address: string;
  did: string;
}

/** Options of {@link keyAgent}. */
export interface KeyAgentOptions {
  /** Tier set directly on the identity (default `certified`); null leaves the registered default. */
  tier?: string | null;
  /** Trust score set with the tier (default 0.9). */
  score?: number | null;
  /** Hub address prefix (default `agent`). */
  prefix?: string;
  /** Capabilities named at registration (default none). */
  capabilities?: string[];
}

/**
 * A new API key of `owner` whose socket (kept open in `pool`) registered key material, with a hub
 * identity bound to its device.
 */
export async function keyAgent(t: TestApp, pool: WsPool, owner: Owner, options: KeyAgentOptions = {}): Promise<KeyAgent> {
  const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', headers: owner.auth, payload: { name: 'agent' } });
  expect(created.status).toBe(201);
  const apiKey = created.body.key as string;
  const ws = await pool.open(wsAddress(t.wsUrl, { token: apiKey }));
  const keys = newDeviceKeys();
  ws.send('client_key_register', { identity_public_key: keys.identityPublicKey, ephemeral_public_key: keys.ephemeralPublicKey, signature: keys.proof() });
  const deviceId = (await ws.next('client_key_accepted')).data.device_id as string;
  const address = `${options.prefix ?? 'agent'}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`.slice(0, 32);
  const reg = await t.request({
    method: 'POST',
    url: '/api/v1/hub/register',
    headers: owner.auth,
    payload: { hub_address: address, display_name: `Agent ${address}`, device_id: deviceId, public_key: hubOwnerKey(), ...(options.capabilities ? { capabilities: options.capabilities } : {}) },
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const tier = options.tier === undefined ? 'certified' : options.tier;
  if (tier !== null) await t.app.parley.database.db.update(hubIdentities).set({ trustTier: tier, trustScore: options.score === undefined ? 0.9 : options.score }).where(eq(hubIdentities.hubAddress, address));
  return { owner, apiKey, headers: { 'x-api-key': apiKey }, ws, keys, deviceId, identityId: reg.body.id as string, address, did: `did:hub:${address}` };
}

/**
 * An active A2A channel from `x` to `y` (contract §4.13): `x` requests it (through `t`), `y`'s owner
 * approves it (through `approver`, default `t`), both sides send their key exchange over their
 * sockets and see `a2a_channel_activated`. Answers the channel id.
 */
export async function activeChannel(t: TestApp, x: KeyAgent, y: KeyAgent, capability?: string, approver: TestApp = t): Promise<string> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const req = await t.request({ method: 'POST', url: '/api/v1/a2a/channels/request', headers: x.headers, payload: { responder_hub_address: y.address, ...(capability ? { capability } : {}) } });
  expect(req.status, JSON.stringify(req.body)).toBe(201);
  const id = req.body.channel_id as string;
  expect((await approver.request({ method: 'POST', url: `/api/v1/a2a/channels/${id}/approve`, headers: y.owner.auth })).status).toBe(200);
  await x.ws.next('a2a_channel_approved');
  await y.ws.next('a2a_channel_approved');
  x.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('x-hs'), ciphertext: b64('x-welcome') });
  y.ws.send('a2a_key_exchange', { channel_id: id, header_blob: b64('y-hs'), ciphertext: b64('y-welcome') });
  await x.ws.next('a2a_channel_activated');
  await y.ws.next('a2a_channel_activated');
  return id;
}
