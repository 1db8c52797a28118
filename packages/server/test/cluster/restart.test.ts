/**
 * Restart persistence (design §3, §5): stop the service and start it again on the same storage.
 * Owner tokens (dev identity provider key in DATA_DIR), device JWTs (signing keys in the
 * database) and the message history survive. PGlite runs on a data directory on disk; on
 * PostgreSQL the same database is reused (and the same DATA_DIR, which holds the dev IdP key).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { backend, createPgDatabase, startApp, type StartOptions, type TestApp } from '../../testing/harness.js';
import { WsPool, wsAddress } from '../../testing/ws-client.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

async function restartScenario(opts: StartOptions): Promise<void> {
  const pool = new WsPool();
  let t: TestApp | undefined = await startApp({ ...opts, listen: true });
  try {
    const owner = await newOwner(t);
    const od = await registerOwnerDevice(t, owner);
    const agent = await activeAgent(t, owner);
    const conv = agent.conversationId!;
    const ownerSend = { ...owner.auth, 'x-device-id': od.deviceId };

    // History written over REST (the socket path is covered by websocket.test.ts).
    for (const [n, priority] of [[1, 'low'], [2, 'normal'], [3, 'urgent']] as const) {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/conversations/${conv}/messages`,
        headers: ownerSend,
        payload: { header_blob: b64(`h${n}`), ciphertext: b64(`c${n}`), priority },
      });
      expect(res.status).toBe(201);
    }

    // The agent's fetch delivers the messages (delivered_at): read the history after it.
    const agentBefore = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(agentBefore.status).toBe(200);
    const before = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages`, headers: owner.auth });
    expect(before.status).toBe(200);
    expect(before.body.messages).toHaveLength(3);
    expect(before.body.messages.every((m: { delivered_at: string | null }) => m.delivered_at !== null)).toBe(true);

    await t.close();
    t = undefined;
    if (!opts.databaseUrl) {
      // PGlite really lived on disk.
      expect(fs.readdirSync(path.join(opts.dataDir!, 'pglite')).length).toBeGreaterThan(0);
    }

    t = await startApp({ ...opts, listen: true });

    // The same owner token still works, with its tenant and devices.
    const devices = await t.request({ method: 'GET', url: '/api/v1/devices', headers: owner.auth });
    expect(devices.status).toBe(200);
    const byId = new Map(devices.body.devices.map((d: { device_id: string; status: string }) => [d.device_id, d.status]));
    expect(byId.get(od.deviceId)).toBe('ACTIVE');
    expect(byId.get(agent.deviceId)).toBe('ACTIVE');

    // History intact, byte for byte and in order.
    const after = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages`, headers: owner.auth });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    expect(after.body.messages.map((m: { ciphertext: string }) => Buffer.from(m.ciphertext, 'base64').toString())).toEqual(['c1', 'c2', 'c3']);
    expect(after.body.messages.map((m: { priority: string }) => m.priority)).toEqual(['low', 'normal', 'urgent']);

    // The device JWT issued before the restart still verifies (signing keys persisted), over REST ...
    const agentAfter = await t.request({ method: 'GET', url: `/api/v1/devices/${agent.deviceId}/messages`, headers: agent.auth });
    expect(agentAfter.status).toBe(200);
    expect(agentAfter.body.messages.map((m: { message_id: string }) => m.message_id)).toEqual(
      agentBefore.body.messages.map((m: { message_id: string }) => m.message_id),
    );

    // ... and on the socket; new messages continue after the old cursors.
    const agentWs = await pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));
    const sent = await t.request({ method: 'POST', url: `/api/v1/conversations/${conv}/messages`, headers: ownerSend, payload: { header_blob: b64('h4'), ciphertext: b64('c4') } });
    expect(sent.status).toBe(201);
    const got = await agentWs.next((f) => f.event === 'message' && f.data?.message_id === sent.body.message_id);
    expect(got.data.ciphertext).toBe(b64('c4'));
    const since = await t.request({ method: 'GET', url: `/api/v1/conversations/${conv}/messages?since=${before.body.next_cursor}`, headers: owner.auth });
    expect(since.status).toBe(200);
    expect(since.body.messages.map((m: { message_id: string }) => m.message_id)).toEqual([sent.body.message_id]);
  } finally {
    await pool.closeAll();
    await t?.close();
  }
}

describe('restart persistence', () => {
  it.skipIf(backend === 'postgres')('PGlite data directory: owner token, device JWT and history survive a restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-restart-'));
    try {
      await restartScenario({ dataDir });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000); // two on-disk PGlite starts (every migration, fsync'd) exceed the default 30 s on a busy 2-core machine

  it.skipIf(backend !== 'postgres')('PostgreSQL database: owner token, device JWT and history survive a restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-restart-'));
    const db = await createPgDatabase();
    try {
      await restartScenario({ dataDir, databaseUrl: db.url });
    } finally {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
