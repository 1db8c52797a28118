/**
 * Signed A2A Agent Cards (`PUT`/`GET /api/v1/hub/{hub_address}/agent-card`): the service stores a
 * card only when its JWS verifies against the identity's `did:hub` document, serves it as stored,
 * lists it in the DID document, audits the publication, and checks who may publish.
 */
import { buildAgentCard, ownerKeyId, signAgentCard, verifyAgentCard, type AgentCardJson, type CardDidResolution } from '@parley/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, appWithAgent, newOwner, type Agent } from '../../testing/flows.js';
import { newDeviceKeys, type DeviceKeys } from '../../testing/keys.js';

let seq = 0;
const addr = () => `card-${Date.now().toString(36)}-${++seq}`;
const signer = (keys: DeviceKeys, kid: string) => ({ kid, sign: (m: Uint8Array) => Buffer.from(keys.sign(m), 'hex') });
const cardOf = (address: string, name = 'Translator') =>
  buildAgentCard({ hubAddress: address, displayName: name, description: 'Translates text', capabilities: [{ name: 'translate', description: 'Translate text', input_schema: { type: 'object' } }] });

describe('Agent Card publication', () => {
  const s = appWithAgent();
  let address: string;
  let signed: AgentCardJson;
  const url = () => `/api/v1/hub/${address}/agent-card`;

  /** A hub identity bound to `agent`, its owner key the agent's identity key. */
  async function register(agent: Agent, hubAddress: string) {
    const res = await s.t.request({
      method: 'POST',
      url: '/api/v1/hub/register',
      headers: s.owner.auth,
      payload: { hub_address: hubAddress, display_name: 'Translator', device_id: agent.deviceId, public_key: Buffer.from(agent.keys.identityPublicKey, 'hex').toString('base64') },
    });
    expect(res.status).toBe(201);
  }

  beforeAll(async () => {
    address = addr();
    await register(s.agent, address);
    signed = signAgentCard(cardOf(address), signer(s.agent.keys, ownerKeyId(address)));
  });

  it('GET answers 404 before a card is published', async () => {
    expect((await s.t.request({ method: 'GET', url: url() })).status).toBe(404);
    expect((await s.t.request({ method: 'GET', url: '/api/v1/hub/no-such-agent-x/agent-card' })).status).toBe(404);
  });

  it('the agent publishes its signed card; GET serves it as stored; the DID document lists it; it is audited', async () => {
    const put = await s.t.request({ method: 'PUT', url: url(), headers: s.agent.auth, payload: signed });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ hub_address: address, did: `did:hub:${address}`, kid: `did:hub:${address}#owner-key` });

    const got = await s.t.request({ method: 'GET', url: url() });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(signed);

    const doc = (await s.t.request({ method: 'GET', url: `/api/v1/hub/${address}/did` })).body;
    expect(doc.service).toContainEqual({ id: `did:hub:${address}#a2a-agent-card`, type: 'A2AAgentCard', serviceEndpoint: `${s.t.config.publicUrl.replace(/\/+$/, '')}/api/v1/hub/${address}/agent-card` });

    // Any client verifies the served card against the resolved DID document.
    const resolveDid = async (did: string) => (await s.t.request({ method: 'GET', url: `/1.0/identifiers/${did}` })).body as CardDidResolution;
    expect(await verifyAgentCard(got.body, { expectedAddress: address, resolveDid })).toMatchObject({ ok: true, kid: `did:hub:${address}#owner-key` });

    const events = (await s.t.request({ method: 'GET', url: `/api/v1/audit/events?type=hub.agent_card_published`, headers: s.owner.auth })).body.events as { actor: string; data: Record<string, unknown> }[];
    expect(events.at(-1)).toMatchObject({ actor: `device:${s.agent.deviceId}`, data: { hub_address: address, kid: `did:hub:${address}#owner-key`, name: 'Translator', skills: 1 } });
  });

  it('refuses tampered, unsigned, other-key and other-DID cards with 400 naming the reason, and keeps the stored card', async () => {
    const other = newDeviceKeys();
    const cases: [unknown, string][] = [
      [{ ...signed, name: 'Evil twin' }, 'bad_signature'],
      [cardOf(address), 'unsigned'],
      [signAgentCard(cardOf(address), signer(other, ownerKeyId(address))), 'bad_signature'],
      [signAgentCard(cardOf(address), signer(s.agent.keys, 'did:hub:someone-else#owner-key')), 'wrong_did'],
      [signAgentCard(cardOf(address), signer(s.agent.keys, `did:hub:${address}#key-7`)), 'unknown_key'],
    ];
    for (const [card, reason] of cases) {
      const res = await s.t.request({ method: 'PUT', url: url(), headers: s.agent.auth, payload: card as object });
      expect(res.status, reason).toBe(400);
      expect(res.body.detail).toContain(`(${reason})`);
    }
    expect((await s.t.request({ method: 'GET', url: url() })).body).toEqual(signed);
  });

  it('an owner of the tenant may publish; 401 without credentials; 403 for another agent; 404 for another tenant', async () => {
    const renamed = signAgentCard(cardOf(address, 'Translator v2'), signer(s.agent.keys, ownerKeyId(address)));
    expect((await s.t.request({ method: 'PUT', url: url(), headers: s.owner.auth, payload: renamed })).status).toBe(200);
    expect((await s.t.request({ method: 'GET', url: url() })).body.name).toBe('Translator v2');

    expect((await s.t.request({ method: 'PUT', url: url(), payload: renamed })).status).toBe(401);
    const sibling = await activeAgent(s.t, s.owner);
    const forbidden = await s.t.request({ method: 'PUT', url: url(), headers: sibling.auth, payload: renamed });
    expect(forbidden.status).toBe(403);
    const stranger = await newOwner(s.t, 'Other');
    expect((await s.t.request({ method: 'PUT', url: url(), headers: stranger.auth, payload: renamed })).status).toBe(404);
  });

  it('400 for a malformed address or a body without a name', async () => {
    expect((await s.t.request({ method: 'GET', url: '/api/v1/hub/-bad-/agent-card' })).status).toBe(400);
    expect((await s.t.request({ method: 'PUT', url: url(), headers: s.agent.auth, payload: { signatures: [] } })).status).toBe(400);
  });
});
