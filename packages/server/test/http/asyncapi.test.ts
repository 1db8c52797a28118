/**
 * The WebSocket protocol's AsyncAPI document (`/api/v1/asyncapi.json`) and its page
 * (`/docs/asyncapi`): the document has the AsyncAPI 3.0 shape (every operation names an existing
 * channel and messages of it, replies too), covers every frame the gateway serves and every
 * event of the protocol, its payload schemas are valid JSON Schema that the frames of a real
 * socket session satisfy, and the page renders it under the docs' Content-Security-Policy.
 */
import { WS_CLIENT_FRAMES, WS_CLOSE_CODES, WS_PATH, WS_SERVICE_EVENTS } from '@parley/protocol';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsCsp } from '../../src/http/security-headers.js';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { connectWs, wsAddress, type Frame } from '../../testing/ws-client.js';

type Json = Record<string, any>;

/** The object a local `$ref` (`#/a/b`) points at in `doc`, or undefined. */
function resolve(doc: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce<Json | undefined>((at, key) => (at && typeof at === 'object' ? at[key] : undefined), doc);
}

describe('AsyncAPI document of the WebSocket protocol', () => {
  let t: TestApp;
  let doc: Json;
  let validators: Map<string, ValidateFunction>;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    const res = await t.request({ method: 'GET', url: '/api/v1/asyncapi.json' });
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('application/json');
    doc = res.body;
    // AsyncAPI's default schema format is a superset of JSON Schema draft-07: Ajv's default draft.
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)));
    ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
    validators = new Map(Object.entries(doc.components.messages as Record<string, Json>).map(([k, m]) => [k, ajv.compile(m.payload)]));
  });
  afterAll(() => t?.close());

  it('is an AsyncAPI 3.0.0 document of the socket at /api/v1/ws on this deployment', async () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBe((await t.request({ method: 'GET', url: '/health' })).body.version);
    const server = doc.servers.parley;
    expect(server.host).toBe(new URL(t.app.parley.config.publicUrl).host);
    expect(['ws', 'wss']).toContain(server.protocol);
    expect(resolve(doc, server.security[0].$ref)).toMatchObject({ type: 'httpApiKey', in: 'query', name: 'token' });
    const channels = Object.values(doc.channels as Record<string, Json>);
    expect(channels).toHaveLength(1);
    expect(channels[0]!.address).toBe(WS_PATH);
    expect(channels[0]!.bindings.ws.query.properties).toHaveProperty('token');
  });

  it('every operation names an existing channel and messages of that channel (replies too), and every message is used', () => {
    const problems: string[] = [];
    const used = new Set<string>();
    for (const [id, op] of Object.entries(doc.operations as Record<string, Json>)) {
      if (op.action !== 'send' && op.action !== 'receive') problems.push(`${id}: action ${op.action}`);
      const channel = resolve(doc, op.channel?.$ref ?? '');
      if (!channel) {
        problems.push(`${id}: channel ${op.channel?.$ref} does not exist`);
        continue;
      }
      const refs: { $ref: string }[] = [...(op.messages ?? []), ...(op.reply?.messages ?? [])];
      if ((op.messages ?? []).length === 0) problems.push(`${id}: no messages`);
      if (op.reply && !resolve(doc, op.reply.channel?.$ref ?? '')) problems.push(`${id}: reply channel does not exist`);
      for (const r of refs) {
        const inChannel = resolve(doc, r.$ref);
        if (!inChannel || !r.$ref.startsWith(`${op.channel.$ref}/messages/`)) problems.push(`${id}: ${r.$ref} is not a message of its channel`);
        else if (!resolve(doc, inChannel.$ref ?? '')?.payload) problems.push(`${id}: ${r.$ref} names no message with a payload`);
      }
      for (const r of op.messages ?? []) used.add(r.$ref.split('/').pop());
    }
    for (const key of Object.keys(doc.components.messages)) if (!used.has(key)) problems.push(`message ${key} is in no operation`);
    expect(problems).toEqual([]);
  });

  it('covers every frame the gateway serves and every event of the protocol, and the close codes', () => {
    const messages = doc.components.messages as Record<string, Json>;
    const served = t.app.parley.gateway.servedFrames();
    expect([...served, 'ping', 'pong'].sort()).toEqual(Object.keys(WS_CLIENT_FRAMES).sort());
    for (const event of Object.keys(WS_CLIENT_FRAMES)) {
      expect(messages[`client.${event}`]?.name, event).toBe(event);
      expect(doc.operations[`receive.${event}`]?.action, event).toBe('receive');
    }
    for (const event of Object.keys(WS_SERVICE_EVENTS)) {
      expect(messages[`service.${event}`]?.payload.properties.event.const, event).toBe(event);
      expect(doc.operations[`send.${event}`]?.action, event).toBe('send');
    }
    // A client frame with an ack is answered by it and by `error`.
    expect(doc.operations['receive.message'].reply.messages.map((m: Json) => m.$ref.split('/').pop()).sort()).toEqual(['service.error', 'service.message_ack']);
    const channel = Object.values(doc.channels as Record<string, Json>)[0]!;
    expect(channel['x-close-codes']).toEqual(WS_CLOSE_CODES);
    for (const code of [4001, 4003, 4401, 1001, 1012]) expect(channel.description).toContain(`| ${code} |`);
  });

  it('the frames of a real socket session satisfy the payload schemas of their messages', async () => {
    const owner = await newOwner(t);
    const ownerDevice = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const agentWs = await connectWs(wsAddress(t.wsUrl, { token: agent.jwt }));
    const ownerWs = await connectWs(wsAddress(t.wsUrl, { token: owner.token, device_id: ownerDevice.deviceId }));
    const check = (from: 'client' | 'service', f: Frame) => {
      const validate = validators.get(`${from}.${f.event}`);
      expect(validate, `${from}.${f.event} is documented`).toBeDefined();
      expect(validate!(f) ? [] : validate!.errors, `${from}.${f.event}`).toEqual([]);
    };
    try {
      const sent = { event: 'message', data: { conversation_id: agent.conversationId, header_blob: 'aGVhZGVy', ciphertext: 'c2VjcmV0', client_ref: 'r1' } };
      check('client', sent);
      agentWs.send(sent.event, sent.data);
      check('service', await agentWs.next('message_ack'));
      const received = await ownerWs.next('message');
      check('service', received);
      const read = { event: 'message_read', data: { conversation_id: agent.conversationId, up_to_message_id: received.data.message_id, client_ref: 'r2' } };
      check('client', read);
      ownerWs.send(read.event, read.data);
      check('service', await ownerWs.next('message_read_ack'));
      check('service', await agentWs.next('message_delivered', 5000));
      check('service', await agentWs.next('message_read', 5000));
      agentWs.send('typing', { conversation_id: agent.conversationId });
      check('service', await ownerWs.next('typing'));
      agentWs.send('message', { conversation_id: agent.conversationId, client_ref: 'r3' });
      const refused = await agentWs.next('error');
      check('service', refused);
      expect(refused.data).toMatchObject({ status: 400, client_ref: 'r3' });
      agentWs.send('ping', {});
      check('service', await agentWs.next('pong'));
    } finally {
      await agentWs.close();
      await ownerWs.close();
    }
  });

  it('the page at /docs/asyncapi renders every frame and event, without scripts, under the docs policy', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/asyncapi' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe(docsCsp([new URL(t.app.parley.config.publicUrl).origin]));
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const html = res.body;
    expect(html).not.toMatch(/<script/i);
    for (const event of [...Object.keys(WS_CLIENT_FRAMES).map((e) => `client.${e}`), ...Object.keys(WS_SERVICE_EVENTS).map((e) => `service.${e}`)]) {
      expect(html, event).toContain(`<section id="${event}">`);
    }
    // Field tables come from the payload schemas; close codes from the channel.
    expect(html).toContain('<code>conversation_id</code>');
    expect(html).toContain('<td>4001</td>');
    expect(html).toContain('href="/api/v1/asyncapi.json"');
  });

  it('the OpenAPI document links the AsyncAPI document and its page, and hides both routes', async () => {
    const openapi = (await t.request({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    expect(openapi.info.description).toContain('(/api/v1/asyncapi.json)');
    expect(openapi.info.description).toContain('(/docs/asyncapi)');
    expect(Object.keys(openapi.paths)).not.toContain('/api/v1/asyncapi.json');
    expect(Object.keys(openapi.paths)).not.toContain('/docs/asyncapi');
  });
});
