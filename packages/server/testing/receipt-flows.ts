/**
 * Flows shared by the delivery and read receipt tests: a tenant with an owner
 * device and an agent, sending over sockets, and collecting `message_delivered` frames.
 */
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice } from './flows.js';
import type { TestApp } from './harness.js';
import { wsAddress, type Frame, type WsClient, type WsPool } from './ws-client.js';

export const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** An owner with one owner device and one ACTIVE agent linked to it (their pairwise conversation). */
export interface ReceiptPair {
  owner: Owner;
  od: OwnerDevice;
  agent: Agent;
  conversationId: string;
}

export async function receiptPair(t: TestApp): Promise<ReceiptPair> {
  const owner = await newOwner(t);
  const od = await registerOwnerDevice(t, owner);
  const agent = await activeAgent(t, owner);
  return { owner, od, agent, conversationId: agent.conversationId! };
}

export const ownerSocket = (pool: WsPool, t: TestApp, p: ReceiptPair) => pool.connect(wsAddress(t.wsUrl, { token: p.owner.token, device_id: p.od.deviceId }));
export const agentSocket = (pool: WsPool, t: TestApp, agent: Agent) => pool.connect(wsAddress(t.wsUrl, { token: agent.jwt }));

let n = 0;
/** Send one `message` frame and wait for its ack; answers the stored message's id and cursor. */
export async function sendOver(ws: WsClient, conversationId: string): Promise<{ id: string; cursor: string }> {
  const ref = `r${++n}`;
  ws.send('message', { conversation_id: conversationId, header_blob: b64(`h${n}`), ciphertext: b64(`c${n}`), client_ref: ref });
  const ack = await ws.next((f) => (f.event === 'message_ack' || f.event === 'error') && f.data?.client_ref === ref, 5000);
  expect(ack.event, JSON.stringify(ack.data)).toBe('message_ack');
  return { id: ack.data.message_id, cursor: ack.data.cursor };
}

/** Take `message_delivered` frames from `ws` until `ids` were all reported; answers the frames. */
export async function deliveredFrames(ws: WsClient, ids: readonly string[], timeoutMs = 5000): Promise<Frame[]> {
  const want = new Set(ids);
  const frames: Frame[] = [];
  while (want.size > 0) {
    const f = await ws.next((x) => x.event === 'message_delivered' && x.data.message_ids.some((id: string) => want.has(id)), timeoutMs);
    for (const id of f.data.message_ids) want.delete(id);
    frames.push(f);
  }
  return frames;
}

/** The read marks stored for a thread (conversation or room), as the superuser sees them (no tenant scope). */
export async function marksOf(t: TestApp, threadId: string): Promise<{ reader_device_id: string; up_to: string | number }[]> {
  const res = (await t.app.parley.database.db.execute(sql`select reader_device_id, up_to from read_marks where thread_id = ${threadId}`)) as unknown as {
    rows: { reader_device_id: string; up_to: string | number }[];
  };
  return res.rows;
}
