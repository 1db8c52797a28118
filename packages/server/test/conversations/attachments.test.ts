/** Attachments (contract §4.7, design §8.5/§8.12): raw octet-stream upload and byte-exact download. */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeAgent, newOwner, type Agent, type Owner } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';

const LIMIT = 64 * 1024;
const octet = { 'content-type': 'application/octet-stream' };

describe('attachments', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: Agent;
  let other: Owner;

  beforeAll(async () => {
    t = await startApp({ env: { LIMIT_ATTACHMENT_BYTES: String(LIMIT) } });
    owner = await newOwner(t);
    agent = await activeAgent(t, owner);
    other = await newOwner(t, 'Other');
  });
  afterAll(() => t?.close());

  const upload = (headers: Record<string, string>, payload: Buffer | string | object) =>
    t.request({ method: 'POST', url: '/api/v1/attachments/upload', headers, payload });

  it('round-trips bytes exactly (device upload, owner and device download)', async () => {
    const bytes = randomBytes(LIMIT);
    const res = await upload({ ...agent.auth, ...octet }, bytes);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ size_bytes: LIMIT, content_type: 'application/octet-stream' });
    expect(res.body.blob_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);

    for (const auth of [owner.auth, agent.auth]) {
      const dl = await t.app.inject({ method: 'GET', url: `/api/v1/attachments/${res.body.blob_id}`, headers: auth });
      expect(dl.statusCode).toBe(200);
      expect(dl.headers['content-type']).toBe('application/octet-stream');
      expect(Buffer.compare(dl.rawPayload, bytes)).toBe(0);
    }
    // stored under DATA_DIR/blobs/<tenant_id>/<blob_id>, as the same opaque bytes
    const file = path.join(t.config.dataDir, 'blobs', owner.tenantId, res.body.blob_id);
    expect(Buffer.compare(fs.readFileSync(file), bytes)).toBe(0);
  });

  /** A multipart/form-data body with the given parts (built by hand: what any HTTP client sends). */
  const multipart = (parts: { name: string; filename?: string; data: Buffer }[]) => {
    const boundary = `----parley${randomBytes(8).toString('hex')}`;
    const chunks: Buffer[] = [];
    for (const p of parts) {
      const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
      chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: ${disposition}\r\ncontent-type: application/octet-stream\r\n\r\n`), p.data, Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(chunks) };
  };

  it('accepts a multipart "file" part and stores exactly its bytes', async () => {
    const bytes = randomBytes(LIMIT); // exactly the limit: the multipart framing does not count against it
    const m = multipart([{ name: 'file', filename: 'blob.bin', data: bytes }]);
    const res = await upload({ ...agent.auth, ...m.headers }, m.body);
    expect(res.status).toBe(201);
    expect(res.body.size_bytes).toBe(LIMIT);
    const dl = await t.app.inject({ method: 'GET', url: `/api/v1/attachments/${res.body.blob_id}`, headers: owner.auth });
    expect(Buffer.compare(dl.rawPayload, bytes)).toBe(0);
  });

  it('refuses a multipart body without a "file" part (400) and one over the limit (413)', async () => {
    const wrong = multipart([{ name: 'document', filename: 'x.bin', data: randomBytes(10) }]);
    const r1 = await upload({ ...agent.auth, ...wrong.headers }, wrong.body);
    expect(r1.status).toBe(400);
    expect(r1.body.detail).toMatch(/file/);
    const big = multipart([{ name: 'file', filename: 'big.bin', data: randomBytes(LIMIT + 1) }]);
    const r2 = await upload({ ...agent.auth, ...big.headers }, big.body);
    expect(r2.status).toBe(413);
    expect(r2.body.detail).toBeTruthy();
  });

  it('accepts an owner upload', async () => {
    const res = await upload({ ...owner.auth, ...octet }, Buffer.from([1, 2, 3]));
    expect(res.status).toBe(201);
    expect(res.body.size_bytes).toBe(3);
  });

  it('answers 413 {detail} over the configured limit', async () => {
    const res = await upload({ ...agent.auth, ...octet }, randomBytes(LIMIT + 1));
    expect(res.status).toBe(413);
    expect(typeof res.body.detail).toBe('string');
  });

  it('answers 401 without credentials', async () => {
    const up = await upload(octet, Buffer.from('x'));
    expect(up.status).toBe(401);
    expect(typeof up.body.detail).toBe('string');
    const created = await upload({ ...agent.auth, ...octet }, Buffer.from('secret'));
    const dl = await t.request({ method: 'GET', url: `/api/v1/attachments/${created.body.blob_id}` });
    expect(dl.status).toBe(401);
  });

  it("answers 404 for another tenant's attachment and for an unknown one", async () => {
    const created = await upload({ ...agent.auth, ...octet }, Buffer.from('tenant-a'));
    const cross = await t.request({ method: 'GET', url: `/api/v1/attachments/${created.body.blob_id}`, headers: other.auth });
    expect(cross.status).toBe(404);
    expect(typeof cross.body.detail).toBe('string');
    const unknown = await t.request({ method: 'GET', url: '/api/v1/attachments/00000000-0000-4000-8000-000000000000', headers: owner.auth });
    expect(unknown.status).toBe(404);
    const bad = await t.request({ method: 'GET', url: '/api/v1/attachments/not-a-uuid', headers: owner.auth });
    expect(bad.status).toBe(400);
  });

  it('answers 415 for a JSON or text body and 400 for an empty one', async () => {
    const json = await upload({ ...agent.auth, 'content-type': 'application/json' }, { data: 'abc' });
    expect(json.status).toBe(415);
    expect(typeof json.body.detail).toBe('string');
    const text = await upload({ ...agent.auth, 'content-type': 'text/plain' }, 'abc');
    expect(text.status).toBe(415);
    const empty = await upload({ ...agent.auth, ...octet }, Buffer.alloc(0));
    expect(empty.status).toBe(400);
  });
});
