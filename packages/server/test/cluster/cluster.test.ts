/**
 * The local cluster (design §8.32; `src/cluster/`): two instances on one
 * PostgreSQL database and one Redis behind HAProxy, exactly as `npm run cluster` starts them.
 * Requests are spread over both instances without sticky sessions; a message sent on one
 * instance's socket reaches a socket on the other; revoking a device on one instance closes its
 * socket on the other with 4001 within a second. Runs when TEST_DATABASE_URL and TEST_REDIS_URL
 * are set and HAProxy is installed (CI: `apt-get install -y haproxy`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevIdentityProvider } from '../../src/auth/dev-idp.js';
import { startCluster, type RunningCluster } from '../../src/cluster/run.js';
import { activeAgent, newOwner, registerOwnerDevice } from '../../testing/flows.js';
import { createPgDatabase } from '../../testing/harness.js';
import { httpApp } from '../../testing/http-app.js';
import { hasHaproxy, INSTANCE_FROM_SOURCE } from '../../testing/own-services.js';
import { connectWs, wsAddress } from '../../testing/ws-client.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL && hasHaproxy && process.env.TEST_BACKEND === 'postgres');

describe.skipIf(!enabled)('cluster behind HAProxy', () => {
  let cluster: RunningCluster;
  let drop: () => Promise<void>;
  let dataDir: string;
  let idp: DevIdentityProvider;

  beforeAll(async () => {
    const db = await createPgDatabase();
    drop = db.drop;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cluster-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    cluster = await startCluster({
      instances: 2,
      host: '127.0.0.1',
      port,
      databaseUrl: db.url,
      redisUrl: process.env.TEST_REDIS_URL!,
      dataDir,
      command: INSTANCE_FROM_SOURCE,
      env: { LOG_LEVEL: 'warn', RATE_LIMITS: 'off' },
      output: process.env.CLUSTER_DEBUG ? 'inherit' : 'ignore',
    });
    idp = await DevIdentityProvider.load(dataDir);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await drop?.();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('spreads requests over both instances without sticky sessions', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${cluster.url}/livez`);
      expect(res.status).toBe(200);
      seen.add(res.headers.get('x-parley-instance') ?? '');
    }
    expect([...seen].sort()).toEqual(['i1', 'i2']);
  });

  it('delivers across instances and revokes everywhere within a second', async () => {
    const lb = httpApp(cluster.url, idp);
    const owner = await newOwner(lb); // each request may land on either instance
    const ownerDevice = await registerOwnerDevice(lb, owner);
    const agent = await activeAgent(lb, owner);
    const [i1, i2] = cluster.instances.map((i) => i.url.replace(/^http/, 'ws') + '/api/v1/ws');
    const agentWs = await connectWs(wsAddress(i1!, { token: agent.jwt }));
    const ownerWs = await connectWs(wsAddress(i2!, { token: owner.token, device_id: ownerDevice.deviceId }));
    agentWs.send('message', { conversation_id: agent.conversationId, header_blob: 'aGVhZGVy', ciphertext: 'Y2lwaGVydGV4dA==', client_ref: 'x1' });
    const ack = await agentWs.next('message_ack');
    const got = await ownerWs.next('message', 5_000);
    expect(got.data.message_id).toBe(ack.data.message_id);
    expect(got.data.ciphertext).toBe('Y2lwaGVydGV4dA==');

    const revokedAt = Date.now();
    const revoke = await httpApp(cluster.instances[1]!.url, idp).request({ method: 'PATCH', url: `/api/v1/devices/${agent.deviceId}/revoke`, headers: owner.auth });
    expect(revoke.status).toBe(200);
    const closed = await agentWs.waitClose(2_000);
    expect(closed.code).toBe(4001);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    await ownerWs.close();
  });
});
