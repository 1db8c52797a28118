/**
 * Governance tools over stdio (contract §4.19, §4.14; design §8.6, §8.7): svc_check_policy and
 * svc_delegate_skill through the service's one skill policy pipeline (a delegation below the trust
 * floor is refused AND audited), svc_submit_audit into the tenant's hash chain, svc_register_agent,
 * the messaging tools' answer when the local plugin is not running, and the W3C trace context of
 * the arguments carried into the `svc.tool` spans the calls produce.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startApp, type TestApp } from '@parley/server/testing';
import { call, failed, keyAgent, mcpEnv, ok, stdioClient, waitFor, type KeyAgent } from './fixtures.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('governance tools over stdio', () => {
  let t: TestApp;
  let agent: KeyAgent;
  let client: Client;
  const skill = `translate-${Date.now().toString(36)}`;

  const events = async (query: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/audit/events?${query}`, headers: agent.owner.auth });
    expect(res.status).toBe(200);
    return res.body.events as any[];
  };

  beforeAll(async () => {
    t = await startApp({ listen: true });
    agent = await keyAgent(t);
    const policy = await t.request({ method: 'POST', url: '/api/v1/policies', headers: agent.owner.auth, payload: { name: 'floor', scope: { skill }, conditions: { trust_score_below: 0.6 }, action: 'block' } });
    expect(policy.status).toBe(201);
    const grant = await t.request({ method: 'POST', url: '/api/v1/grants', headers: agent.owner.auth, payload: { skill, device_id: agent.deviceId } });
    expect(grant.status).toBe(201);
    client = await stdioClient(mcpEnv(t, agent, { PARLEY_PLUGIN_URL: 'http://127.0.0.1:9', PARLEY_PLUGIN_TOKEN: 'x' }));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('svc_check_policy answers the stage that decided', async () => {
    const allowed = ok(await call(client, 'svc_check_policy', { skillName: skill, toolName: 'translate_text', model: 'gpt', args: { text: 'x' } }));
    expect(allowed).toMatchObject({ allowed: true, decided_by: 'rules' });
    expect(allowed.stages.map((s: any) => s.stage)).toEqual(['identity', 'trust_floor', 'grant', 'rate', 'budget', 'rules']);
    const denied = ok(await call(client, 'svc_check_policy', { skillName: 'never-granted' }));
    expect(denied).toMatchObject({ allowed: false, decided_by: 'grant' });
    expect(failed(await call(client, 'svc_check_policy', {}))).toMatch(/skillName/);
  });

  it('svc_delegate_skill below the trust floor is a tool error and is in the audit chain', async () => {
    const low = await keyAgent(t, agent.owner, 'certified', 0.3);
    const text = failed(await call(client, 'svc_delegate_skill', { targetAgent: low.did, skillName: skill, args: { text: 'secret words' }, traceId: TRACE }));
    expect(text).toMatch(new RegExp(`refused by trust_floor: .*below the trust floor.*audit event [0-9a-f-]{36}`));
    const [event] = await events(`type=skill.delegation_refused&subject=${agent.deviceId}`);
    expect(event.data).toMatchObject({ skill, target_hub_address: low.address, decided_by: 'trust_floor', trace_id: TRACE });
    expect(JSON.stringify(event)).not.toContain('secret words');
    expect(text).toContain(event.event_id);
    expect((await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: agent.owner.auth })).body.valid).toBe(true);
  });

  it('svc_delegate_skill allowed: audited, and the invocation says the plugin is needed to send it', async () => {
    const peer = await keyAgent(t, agent.owner, 'certified', 0.9);
    const r = ok(await call(client, 'svc_delegate_skill', { targetAgent: peer.address, skillName: skill }));
    expect(r).toMatchObject({ allowed: true, target: { hub_address: peer.address, trust_score: 0.9 }, invocation: { status: 'not_sent', channel_id: null } });
    expect(r.invocation.detail).toMatch(/local plugin is not running at http:\/\/127\.0\.0\.1:9.*parley-agent run --api-key/);
    const [event] = await events(`type=skill.delegated&subject=${agent.deviceId}`);
    expect(event.event_id).toBe(r.audit_event_id);
    expect(failed(await call(client, 'svc_delegate_skill', { targetAgent: 'no-such-agent-q', skillName: skill }))).toMatch(/^404 /);
  });

  it('svc_submit_audit appends agent.action with the trace to the chain', async () => {
    const r = ok(await call(client, 'svc_submit_audit', { action: 'report.published', details: { pages: 3 }, traceId: TRACE, parentSpanId: PARENT }));
    expect(r).toMatchObject({ type: 'agent.action', event_id: expect.stringMatching(/^[0-9a-f-]{36}$/), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const [event] = await events('type=agent.action');
    expect(event).toMatchObject({ event_id: r.event_id, hash: r.hash, data: { action: 'report.published', details: { pages: 3 }, trace_id: TRACE, parent_span_id: PARENT, hub_address: agent.address } });
    expect((await t.request({ method: 'GET', url: '/api/v1/audit/verify', headers: agent.owner.auth })).body).toMatchObject({ valid: true });
    expect(failed(await call(client, 'svc_submit_audit', { action: 'x', traceId: 'not-hex' }))).toMatch(/invalid arguments.*traceId/);
  });

  it('svc_register_agent answers a new agent with its API key once, trust score 0', async () => {
    const name = `new-${Date.now().toString(36)}`;
    const r = ok(await call(client, 'svc_register_agent', { name, skills: ['summarize'], description: 'Summaries' }));
    expect(r).toMatchObject({ did: `did:hub:${name}`, hub_name: name, trust_score: 0, trust_tier: 'unverified', api_key: expect.stringMatching(/^svc_agent_sk_[a-z]+_[0-9a-f]{64}$/) });
    const profile = await t.request({ method: 'GET', url: `/api/v1/hub/${name}/profile` });
    expect(profile.body).toMatchObject({ hub_address: name, capabilities: ['summarize'], description: 'Summaries' });
    // The new key works (read-only discovery answers while it has no key material yet).
    expect((await t.request({ method: 'GET', url: '/api/v1/a2a/channels', headers: { 'x-api-key': r.api_key } })).status).toBe(200);
    expect(failed(await call(client, 'svc_register_agent', { name }))).toMatch(/^409 /);
  });

  it('the messaging tools say how to start the plugin when it is not running', async () => {
    for (const [tool, args] of [
      ['svc_send_message', { text: 'hi', hubAddress: agent.address }],
      ['svc_send_message', { text: 'hi' }],
      ['svc_poll_messages', {}],
      ['svc_open_channel', { peerAgent: agent.address }],
    ] as const) {
      expect(failed(await call(client, tool, args))).toMatch(/local plugin is not running at http:\/\/127\.0\.0\.1:9; start it with `parley-agent run --api-key/);
    }
    expect(failed(await call(client, 'svc_send_message', { text: 'hi', hubAddress: agent.address, roomId: randomUUID() }))).toMatch(/at most one of/);
  });

  it('traceId and parentSpanId reach the svc.tool spans the calls produce', async () => {
    const trace = randomBytes(16).toString('hex');
    ok(await call(client, 'svc_check_policy', { skillName: skill, traceId: trace, parentSpanId: PARENT }));
    failed(await call(client, 'svc_get_agent_info', { hubName: 'nobody-here-t', traceId: trace }));
    const spanOf = (spans: any[], tool: string) => spans.find((s) => s.attributes['svc.tool'] === tool);
    const spans = await waitFor(async () => {
      const res = await t.request({ method: 'GET', url: `/api/v1/telemetry/${agent.address}?trace_id=${trace}&name=svc.tool`, headers: agent.owner.auth });
      const found = (res.body.spans ?? []) as any[];
      return spanOf(found, 'svc_check_policy') && spanOf(found, 'svc_get_agent_info') ? found : undefined;
    }, 'both spans exported');
    expect(spanOf(spans, 'svc_check_policy')).toMatchObject({ trace_id: trace, parent_span_id: PARENT, name: 'svc.tool', status: 'ok' });
    expect(spanOf(spans, 'svc_get_agent_info')).toMatchObject({ trace_id: trace, parent_span_id: null, status: 'error' });
  });
});
