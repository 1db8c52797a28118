/**
 * The group commit of room messages (design §6, §8.5; rooms/flush.ts): concurrent sends
 * are written together (one transaction, the envelopes of all messages in one statement), each is
 * answered only once committed, with all its envelopes stored byte for byte at consecutive release
 * positions in send order; a send refused by its checks in the same flush answers its own error
 * and the others commit; a sender rate counts concurrent sends exactly. Policy records at their cost
 * on the room path: every non-allow outcome is
 * a `policy_evaluations` row, the allows are counted per sender, and the report's outcome counts
 * (trust/query-repo.ts `policyOutcomesSince`) count every delivery once.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.js';
import { policyOutcomesSince } from '../../src/modules/trust/query-repo.js';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from '../../testing/flows.js';
import { startApp, type TestApp } from '../../testing/harness.js';
import { wsAddress, WsPool } from '../../testing/ws-client.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('room messages, group-committed', () => {
  let t: TestApp;
  let owner: Owner;
  let od: OwnerDevice;
  let agents: Agent[];
  const pool = new WsPool();

  beforeAll(async () => {
    t = await startApp({ listen: true, env: { RATE_LIMITS: 'off' } });
    owner = await newOwner(t);
    od = await registerOwnerDevice(t, owner);
    agents = [];
    for (let i = 0; i < 4; i++) agents.push(await activeAgent(t, owner));
  });
  afterAll(async () => {
    await pool.closeAll();
    await t.close();
  });

  const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
    t.request({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const ownerAs = () => ({ ...owner.auth, 'x-device-id': od.deviceId });
  const newRoom = async (members: string[]) => {
    const res = await api('POST', '/rooms', owner.auth, { name: 'ops', member_device_ids: members });
    expect(res.status).toBe(201);
    return res.body.room_id as string;
  };
  const rows = async <T>(q: ReturnType<typeof sql>) => ((await withTenant(t.app.parley.database.db, owner.tenantId, (tx) => tx.execute(q))) as unknown as { rows: T[] }).rows;
  /** The bytes of an envelope's text as sent (header `h:<recipient>:<n>`, ciphertext `c:<recipient>:<n>`). */
  const envelopeFor = (recipient: string, n: number) => ({ recipient_device_id: recipient, header_blob: b64(`h:${recipient}:${n}`), ciphertext: b64(`c:${recipient}:${n}`) });

  it('stores every message with all its envelopes before answering, at consecutive positions in send order; a refused send does not stop the others', async () => {
    const roomId = await newRoom([od.deviceId, ...agents.map((a) => a.deviceId)]);
    const recipients = agents.map((a) => a.deviceId);
    const n = 24;
    // Owner REST sends, all started at once: they queue behind the first flush and commit together.
    const sends = Array.from({ length: n }, (_, i) =>
      api('POST', `/rooms/${roomId}/messages`, ownerAs(), { envelopes: i === 7 ? [envelopeFor(randomUUID(), i)] : recipients.map((r) => envelopeFor(r, i)) }).then(async (res) => {
        // At the answer, the message and every envelope are committed: another transaction sees them.
        if (res.status !== 201) return { res, stored: [] as { recipient_device_id: string; header_blob: Buffer; ciphertext: Buffer }[] };
        const stored = await rows<{ recipient_device_id: string; header_blob: Buffer; ciphertext: Buffer }>(
          sql`select recipient_device_id, header_blob, ciphertext from room_envelopes where room_message_id = ${res.body.room_message_id}`,
        );
        return { res, stored };
      }),
    );
    const answers = await Promise.all(sends);
    expect(answers[7]!.res.status).toBe(400);
    const ok = answers.filter((_, i) => i !== 7);
    for (const [k, { res, stored }] of ok.entries()) {
      const i = k < 7 ? k : k + 1;
      expect(res.status).toBe(201);
      expect(res.body.deliveries.map((d: { outcome: string }) => d.outcome)).toEqual(recipients.map(() => 'delivered'));
      expect(stored).toHaveLength(recipients.length);
      for (const e of stored) {
        expect(Buffer.from(e.header_blob).toString()).toBe(`h:${e.recipient_device_id}:${i}`);
        expect(Buffer.from(e.ciphertext).toString()).toBe(`c:${e.recipient_device_id}:${i}`);
      }
    }
    // Each answer's cursor is its message's release position; in the room, positions follow `seq`
    // (both drawn in queue order), one per message.
    const messages = await rows<{ id: string; release_seq: string | number; created_at: Date }>(sql`select id, release_seq, created_at from room_messages where room_id = ${roomId} order by seq`);
    const position = new Map(messages.map((m) => [m.id, Number(m.release_seq)]));
    expect([...position.keys()].sort()).toEqual(ok.map(({ res }) => res.body.room_message_id as string).sort());
    for (const { res } of ok) expect(Number(res.body.cursor)).toBe(position.get(res.body.room_message_id));
    const positions = messages.map((m) => Number(m.release_seq));
    expect(new Set(positions).size).toBe(positions.length);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // Group commit: a flush stamps its messages with one time, so concurrent sends share times.
    expect(new Set(messages.map((m) => new Date(m.created_at).getTime())).size).toBeLessThan(messages.length);
    const envelopeCount = await rows<{ n: number }>(sql`select count(*)::int as n from room_envelopes e join room_messages m on m.id = e.room_message_id where m.room_id = ${roomId}`);
    expect(envelopeCount[0]!.n).toBe(ok.length * recipients.length);
  });

  it('acknowledges a socket frame after commit and publishes every envelope', async () => {
    const roomId = await newRoom(agents.map((a) => a.deviceId));
    const [sender, ...others] = agents;
    const sockets = await Promise.all(others.map((a) => pool.connect(wsAddress(t.wsUrl, { token: a.jwt }))));
    const ws = await pool.connect(wsAddress(t.wsUrl, { token: sender!.jwt }));
    for (let i = 0; i < 5; i++) ws.send('room_message', { room_id: roomId, envelopes: others.map((a) => envelopeFor(a.deviceId, i)), client_ref: `r${i}` });
    let last = 0;
    for (let i = 0; i < 5; i++) {
      const ack = await ws.next((f) => f.event === 'room_message_ack' && f.data.client_ref === `r${i}`);
      const stored = await rows<{ n: number }>(sql`select count(*)::int as n from room_envelopes where room_message_id = ${ack.data.room_message_id}`);
      expect(stored[0]!.n).toBe(others.length);
      // One socket's frames take their positions in frame order.
      expect(Number(ack.data.cursor)).toBeGreaterThan(last);
      last = Number(ack.data.cursor);
    }
    for (const [k, s] of sockets.entries()) {
      for (let i = 0; i < 5; i++) expect((await s.next('room_message')).data.ciphertext).toBe(b64(`c:${others[k]!.deviceId}:${i}`));
    }
  });

  it('counts a sender rate across concurrent sends exactly: stored messages, earlier ones of the same flush, then this one', async () => {
    const sender = await registerOwnerDevice(t, owner);
    const roomId = await newRoom([sender.deviceId, agents[0]!.deviceId]);
    expect((await api('POST', '/policies', owner.auth, { name: 'burst', scope: { room_id: roomId }, conditions: { rate_per_minute_over: 2 }, action: 'block' })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api('POST', `/rooms/${roomId}/messages`, { ...owner.auth, 'x-device-id': sender.deviceId }, { envelopes: [envelopeFor(agents[0]!.deviceId, i)] })),
    );
    // In release order, the third message of the minute and every later one is over the rate.
    const byPosition = answers.map((r) => ({ cursor: Number(r.body.cursor), outcome: r.body.deliveries[0].outcome as string })).sort((a, b) => a.cursor - b.cursor);
    expect(byPosition.map((x) => x.outcome)).toEqual(['delivered', 'delivered', 'blocked', 'blocked', 'blocked', 'blocked']);
  });

  it('records every non-allow outcome as a row and counts the allows per sender; the report counts each delivery once', async () => {
    const [a1, a2, a3] = agents;
    // A sender of its own: the counts below are this test's.
    const sender = await registerOwnerDevice(t, owner);
    const roomId = await newRoom([sender.deviceId, a1!.deviceId, a2!.deviceId, a3!.deviceId]);
    const policy = async (body: object) => (await api('POST', '/policies', owner.auth, body)).body.policy_id as string;
    const block = await policy({ name: 'no a2', scope: { room_id: roomId }, conditions: { recipient_device_ids: [a2!.deviceId] }, action: 'block' });
    const notify = await policy({ name: 'watch a3', scope: { room_id: roomId }, conditions: { recipient_device_ids: [a3!.deviceId] }, action: 'notify' });
    const since = new Date(Date.now() - 60_000);
    const k = 6;
    const answers = await Promise.all(
      Array.from({ length: k }, (_, i) => api('POST', `/rooms/${roomId}/messages`, { ...owner.auth, 'x-device-id': sender.deviceId }, { envelopes: [a1!, a2!, a3!].map((a) => envelopeFor(a.deviceId, i)) })),
    );
    for (const res of answers) {
      expect(res.status).toBe(201);
      expect(res.body.deliveries.map((d: { outcome: string }) => d.outcome)).toEqual(['delivered', 'blocked', 'notified']);
    }
    const records = await rows<{ outcome: string; policy_id: string; recipient_device_id: string; n: number }>(
      sql`select outcome, policy_id, recipient_device_id, count(*)::int as n from policy_evaluations where sender_device_id = ${sender.deviceId} group by 1, 2, 3 order by 1`,
    );
    expect(records).toEqual([
      { outcome: 'block', policy_id: block, recipient_device_id: a2!.deviceId, n: k },
      { outcome: 'notify', policy_id: notify, recipient_device_id: a3!.deviceId, n: k },
    ]);
    const allows = await rows<{ rows: number; allows: number }>(
      sql`select count(*)::int as rows, sum(allows)::int as allows from policy_allow_counts where sender_device_id = ${sender.deviceId} and subject_kind = 'room_envelope'`,
    );
    expect(allows[0]!.allows).toBe(k);
    // One count per flush (concurrent sends share flushes), never more than one per message.
    expect(allows[0]!.rows).toBeGreaterThan(0);
    expect(allows[0]!.rows).toBeLessThanOrEqual(k);
    const outcomes = await withTenant(t.app.parley.database.db, owner.tenantId, (tx) => policyOutcomesSince(tx, sender.deviceId, since));
    expect(outcomes).toEqual({ allow: k, block: k, notify: k });
  });
  it('deleting room messages deletes their envelopes and delivered receipts (the statement trigger that replaced the foreign key, migrations 0037 and 0038)', async () => {
    // No live sockets: a delivered-receipt batch landing after the delete below would insert
    // receipts of the deleted message (a receipt insert looks nothing up).
    await pool.closeAll();
    const roomId = await newRoom([od.deviceId, ...agents.map((a) => a.deviceId)]);
    const keep = await newRoom([od.deviceId, agents[0]!.deviceId]);
    for (let i = 0; i < 3; i++) {
      expect((await api('POST', `/rooms/${roomId}/messages`, ownerAs(), { envelopes: agents.map((a) => envelopeFor(a.deviceId, i)) })).status).toBe(201);
    }
    expect((await api('POST', `/rooms/${keep}/messages`, ownerAs(), { envelopes: [envelopeFor(agents[0]!.deviceId, 9)] })).status).toBe(201);
    const count = async (room: string) =>
      (await rows<{ n: number }>(sql`select count(*)::int as n from room_envelopes e join room_messages m on m.id = e.room_message_id where m.room_id = ${room}`))[0]!.n;
    const orphans = async () => (await rows<{ n: number }>(sql`select count(*)::int as n from room_envelopes e where not exists (select 1 from room_messages m where m.id = e.room_message_id)`))[0]!.n;
    expect(await count(roomId)).toBe(3 * agents.length);
    // Delivered receipts of every envelope (migrations 0038, 0041): they go with their message as well.
    await rows(sql`insert into room_receipt_batches (tenant_id, room_message_id, recipient_device_ids, received_at)
      select e.tenant_id, e.room_message_id, array_agg(e.recipient_device_id), now() from room_envelopes e where e.recipient_device_id is not null group by 1, 2`);
    const receiptOrphans = async () =>
      (await rows<{ n: number }>(sql`select count(*)::int as n from room_receipt_batches r where not exists (select 1 from room_messages m where m.id = r.room_message_id)`))[0]!.n;
    const [first] = await rows<{ id: string }>(sql`select id from room_messages where room_id = ${roomId} order by seq limit 1`);
    // One message, then the rest of the room's through the rooms row's cascade.
    await rows(sql`delete from room_messages where id = ${first!.id}`);
    expect(await count(roomId)).toBe(2 * agents.length);
    expect(await orphans()).toBe(0);
    expect(await receiptOrphans()).toBe(0);
    await rows(sql`delete from rooms where id = ${roomId}`);
    expect(await orphans()).toBe(0);
    expect(await receiptOrphans()).toBe(0);
    expect((await rows<{ n: number }>(sql`select count(*)::int as n from room_receipt_batches`))[0]!.n).toBeGreaterThan(0);
    expect(await count(keep)).toBe(1);
  });
});
