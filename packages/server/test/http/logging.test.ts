/** Logs never hold secrets (design §7): token query parameter, Authorization and invite tokens are redacted. */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/app.js';
import { createInvite, newOwner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

describe('log redaction', () => {
  let t: TestApp;
  let logs = '';
  beforeAll(async () => {
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    t = await startApp({ env: { LOG_LEVEL: 'info' }, overrides: { logStream: stream } });
  });
  afterAll(() => t.close());

  it('redacts the token query parameter', () => {
    expect(redactUrl('/api/v1/ws?token=abc.def&device_id=1')).toBe('/api/v1/ws?token=[REDACTED]&device_id=1');
    expect(redactUrl('/x?a=1&TOKEN=zzz')).toBe('/x?a=1&TOKEN=[REDACTED]');
  });

  it('keeps owner tokens, invite tokens and query tokens out of request logs', async () => {
    const owner = await newOwner(t);
    const invite = await createInvite(t, owner);
    await t.request({ method: 'POST', url: '/api/v1/enroll', payload: { invite_token: invite.token } });
    await t.request({ method: 'GET', url: `/api/v1/devices?token=${owner.token}`, headers: owner.auth });
    expect(logs).toContain('incoming request');
    expect(logs).not.toContain(owner.token);
    expect(logs).not.toContain(invite.token);
    expect(logs).toContain('token=[REDACTED]');
  });
});
