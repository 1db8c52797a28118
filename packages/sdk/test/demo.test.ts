/**
 * `npm run demo` in CI: the whole main job (contract §3.1, §4.3–4.5, §6.1) on an embedded server,
 * with MLS (the primary protocol) and with X3DH + Double Ratchet, ending with the database search
 * for plaintexts (contract §1.2).
 */
import { describe, expect, it } from 'vitest';
import { scanForPlaintext } from '../../../demo/db-scan.js';
import { runMainJob } from '../../../demo/main-job.js';
import { startApp, activeAgent, newOwner, registerOwnerDevice } from '@parley/server/testing';

describe('demo: the main job end to end', () => {
  it.each([
    { mls: true, protocol: 'mls' },
    { mls: false, protocol: 'x3dh-dr' },
  ])('runs with mls=$mls and leaves no plaintext in the database', async ({ mls, protocol }) => {
    const result = await runMainJob({ quiet: true, mls });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.protocol).toBe(protocol);
    expect(result.fingerprints!.agent).toBe(result.fingerprints!.owner);
    expect(result.fingerprints!.agent).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/);
    // The agent read the owner's text, its decision answer and its decision request.
    expect(result.agentReceived).toHaveLength(3);
    expect(result.agentReceived[0]).toMatch(/^text "Hello agent/);
    expect(result.agentReceived[1]).toMatch(/^decision answer: deploy/);
    expect(result.agentReceived[2]).toMatch(/^decision_request "Rotate/);
    // The owner read the echo, the agent's decision request and the agent's automatic answer.
    expect(result.ownerReceived).toHaveLength(3);
    expect(result.ownerReceived[0]).toMatch(/^text "echo: Hello agent/);
    expect(result.ownerReceived[1]).toMatch(/^decision_request "Deploy/);
    expect(result.ownerReceived[2]).toMatch(/^decision answer: rotate/);
    expect(result.agentExit).toEqual({ reason: 'revoked', code: 4001, detail: expect.any(String) });
    expect(result.revokedApiStatus).toBe(403);
    expect(result.scan!.leaks).toEqual([]);
    expect(result.scan!.sanityFound).toBe(true);
    expect(result.scan!.messageRows).toBe(mls ? 7 : 6); // + the MLS Welcome
    expect(result.scan!.columns).toBeGreaterThan(10);
    expect(result.transcript.at(-1)).toMatch(/OK/);
  }, 60_000);
});

describe('demo: the database search', () => {
  it('finds a plaintext stored as message bytes (what a leaking client would cause)', async () => {
    const t = await startApp({ env: { RATE_LIMIT_ENROLL_PER_10MIN: '100' } });
    try {
      const owner = await newOwner(t);
      const device = await registerOwnerDevice(t, owner);
      const agent = await activeAgent(t, owner);
      const secret = 'a plaintext that must never reach the server';
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/conversations/${agent.conversationId}/messages`,
        headers: { ...owner.auth, 'x-device-id': device.deviceId },
        payload: { header_blob: Buffer.from('{}').toString('base64'), ciphertext: Buffer.from(`xx${secret}yy`).toString('base64') },
      });
      expect(res.status).toBe(201);
      const report = await scanForPlaintext(t.app.parley.database, [secret, 'never stored anywhere 1f3e']);
      expect(report.columns).toEqual(expect.arrayContaining(['public.messages.ciphertext', 'public.messages.header_blob']));
      expect(report.messageRows).toBe(1);
      expect(report.leaks).toEqual([{ table: 'public.messages', column: 'ciphertext', needle: secret, rows: 1 }]);
    } finally {
      await t.close();
    }
  });
});
