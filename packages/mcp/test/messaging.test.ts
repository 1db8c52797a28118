/**
 * Messaging through the local plugin (contract §4.19, §4.13, §1.2): two agents, each an API-key agent
 * runtime with its plugin, each driven by its own tool server — x's `parley-mcp` over stdio, y's
 * over Streamable HTTP. svc_open_channel waits
 * for the owner's approval and the key exchange; a message from svc_send_message arrives decrypted
 * at the second agent's svc_poll_messages while the server database holds only its ciphertext; an
 * allowed svc_delegate_skill sends its invocation end to end, and the answer comes back the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { sql } from 'drizzle-orm';
import { newOwner, type Owner, startApp, type TestApp } from '@parley/server/testing';
import { parseConfig } from '../src/config.js';
import { startHttpServer, type RunningHttpServer } from '../src/http.js';
import { ToolRuntime } from '../src/server.js';
import { call, httpClient, HTTP_TOKEN, ok, pluginAgent, stdioClient, waitFor, type PluginAgent } from './fixtures.js';

const PARENT = '1111222233334444';

describe('messaging tools through the local plugin', () => {
  let t: TestApp;
  let owner: Owner;
  let x: PluginAgent;
  let y: PluginAgent;
  let mx: Client;
  let my: Client;
  let channelId: string;
  let runtime: ToolRuntime;
  let server: RunningHttpServer;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = await newOwner(t, 'Messaging Co');
    [x, y] = await Promise.all([pluginAgent(t, owner), pluginAgent(t, owner)]);
    runtime = new ToolRuntime(parseConfig(y.env));
    server = await startHttpServer(runtime, { port: 0, token: HTTP_TOKEN });
    [mx, my] = await Promise.all([stdioClient(x.env), httpClient(server.url)]);
  });
  afterAll(async () => {
    await Promise.all([mx?.close(), my?.close()]);
    await server?.close();
    await runtime?.close();
    await Promise.all([x?.stop(), y?.stop()]);
    await t?.close();
  });

  it('svc_open_channel is pending until the owner approves, then open', async () => {
    const pending = ok(await call(mx, 'svc_open_channel', { peerAgent: y.did, waitSeconds: 0 }));
    expect(pending).toMatchObject({ status: 'pending', peer: y.address });
    channelId = pending.channelId;
    const approve = await t.request({ method: 'POST', url: `/api/v1/a2a/channels/${channelId}/approve`, headers: owner.auth });
    expect(approve.status).toBe(200);
    const open = ok(await call(mx, 'svc_open_channel', { peerAgent: y.address, waitSeconds: 20 }));
    expect(open).toEqual({ channelId, protocol: 'mls', status: 'open', peer: y.address }); // channelType defaults to mls
    // The responder sees the same channel open once its side processed the handshake.
    await waitFor(async () => y.runtime.channels.get(channelId)?.open, 'the responder side open');
  });

  it('a message from svc_send_message arrives decrypted at the other agent; the database holds only ciphertext', async () => {
    const secret = `the launch code is ${Date.now()} (zebra-umbrella)`;
    const sent = ok(await call(mx, 'svc_send_message', { text: secret, hubAddress: y.did, parentSpanId: PARENT }));
    expect(sent).toMatchObject({ channel_id: channelId, outcome: 'delivered', protocol: 'mls' });

    const got = await waitFor(async () => {
      const page = ok(await call(my, 'svc_poll_messages', { channelId }));
      return page.messages.find((m: any) => m.text === secret) as any;
    }, 'the message at the second agent');
    expect(got).toMatchObject({ message_id: sent.message_id, channel_id: channelId, from: x.address, message_type: 'text', protocol: 'mls' });
    expect(got.traceparent).toMatch(new RegExp(`^00-${sent.trace_id}-[0-9a-f]{16}-01$`));

    const rows = await t.app.parley.database.db.execute(sql`select header_blob, ciphertext from a2a_messages where channel_id = ${channelId}`);
    const stored = (rows as unknown as { rows?: Record<string, unknown>[] }).rows ?? (rows as unknown as Record<string, unknown>[]);
    expect(stored.length).toBeGreaterThanOrEqual(3); // two handshakes and the message
    const dump = JSON.stringify(stored, (_k, v) => (v instanceof Uint8Array || Buffer.isBuffer(v) ? Buffer.from(v).toString('latin1') : v));
    expect(dump).not.toContain('zebra-umbrella');
    expect(dump).not.toContain('launch code');

    // Nothing new after next_since; the sender's own plugin does not list its own sends.
    const page = ok(await call(my, 'svc_poll_messages', { channelId }));
    expect(ok(await call(my, 'svc_poll_messages', { channelId, since: page.next_since })).count).toBe(0);
    expect(ok(await call(mx, 'svc_poll_messages', { channelId })).messages.find((m: any) => m.text === secret)).toBeUndefined();
  });

  it('an allowed delegation sends its invocation end to end; the result comes back through the channel', async () => {
    const skill = `research-${Date.now().toString(36)}`;
    const grant = await t.request({ method: 'POST', url: '/api/v1/grants', headers: owner.auth, payload: { skill, device_id: x.deviceId } });
    expect(grant.status).toBe(201);
    const r = ok(await call(mx, 'svc_delegate_skill', { targetAgent: y.address, skillName: skill, args: { topic: 'tides' } }));
    expect(r.invocation).toMatchObject({ status: 'sent', channel_id: channelId });
    const inv = await waitFor(async () => {
      const page = ok(await call(my, 'svc_poll_messages', { channelId, limit: 100 }));
      return page.messages.map((m: any) => (m.text?.includes('skill_invocation') ? JSON.parse(m.text) : undefined)).find((v: any) => v?.id === r.invocation.invocation_id);
    }, 'the invocation at the target');
    expect(inv).toMatchObject({ parley: 'skill_invocation', skill, args: { topic: 'tides' }, trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const answer = JSON.stringify({ parley: 'skill_result', in_reply_to: inv.id, ok: true, result: 'tides follow the moon' });
    ok(await call(my, 'svc_send_message', { text: answer, channelId, messageType: 'artifact' }));
    const back = await waitFor(async () => ok(await call(mx, 'svc_poll_messages', { channelId })).messages.find((m: any) => m.text === answer) as any, 'the result at the delegator');
    expect(back.from).toBe(y.address);
  });
});
