/**
 * The messenger's deferred write (secure/messenger.ts "Ordering and durability"): a received
 * message is saved with its session state BEFORE the application's listeners run; only its removal
 * from the saved pending list, which guards nothing, waits for the next state write (a message
 * sent or received), `flush()`, `close()`, or at most `DEFERRED_WRITE_MS`. A crash before that
 * removal is written hands the message over again once, marked `redelivered`. In-process
 * messengers (X3DH + Double Ratchet), the test carries the wire fields.
 */
import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../src/realtime/types.js';
import { SecureMessenger } from '../src/secure/messenger.js';
import type { SecureMessage } from '../src/secure/types.js';
import { MemorySessionStore, type SessionStore } from '../src/storage.js';
import { device, peerOf } from './ratchet-fixtures.js';
import { waitFor } from './wait.js';

const uuid = () => globalThis.crypto.randomUUID();
const CONVERSATION = uuid();

/** A memory store that counts writes and can hand out a copy of what it holds (a crash's leftovers). */
class CountingStore extends MemorySessionStore {
  writes = 0;
  override async save(id: string, state: string): Promise<void> {
    this.writes++;
    await super.save(id, state);
  }
  async copy(): Promise<MemorySessionStore> {
    const out = new MemorySessionStore();
    for (const id of this.ids()) await out.save(id, (await this.load(id))!);
    return out;
  }
}

interface Side {
  messenger: SecureMessenger;
  store: SessionStore;
  sent: OutgoingMessage[];
  received: SecureMessage[];
  /** The saved pending list (message ids) when each message reached the listener. */
  savedAtDelivery: string[][];
}

async function savedInbox(store: SessionStore, deviceId: string): Promise<string[]> {
  const state = JSON.parse((await store.load(`secure-${deviceId}`))!) as { inbox: { message_id: string }[] };
  return state.inbox.map((e) => e.message_id);
}

async function open(identity: ReturnType<typeof device>, store: SessionStore, peer: ReturnType<typeof device>): Promise<Side> {
  const messenger = await SecureMessenger.open({ identity, store });
  const side: Side = { messenger, store, sent: [], received: [], savedAtDelivery: [] };
  messenger.setTransport({ send: async (m) => (side.sent.push(m), { message_id: uuid() }) });
  messenger.on('message', async (m) => {
    side.received.push(m);
    side.savedAtDelivery.push(await savedInbox(store, identity.deviceId!));
  });
  await messenger.addConversation(CONVERSATION, peerOf(peer));
  return side;
}

let cursor = 0;
/** Hand the last wire `from` sent to `to`, as the service would; answers its message id. */
async function carry(from: Side, to: Side, fromId: string): Promise<string> {
  const wire = from.sent.at(-1)!;
  const id = uuid();
  await to.messenger.receive({
    message_id: id,
    conversation_id: CONVERSATION,
    sender_device_id: fromId,
    header_blob: wire.header_blob,
    ciphertext: wire.ciphertext,
    timestamp: new Date().toISOString(),
    cursor: String(++cursor),
    message_type: 'text',
    priority: 'normal',
  });
  return id;
}

async function world() {
  const [aliceId, bobId] = [device(), device()];
  const bobStore = new CountingStore();
  const alice = await open(aliceId, new MemorySessionStore(), bobId);
  const bob = await open(bobId, bobStore, aliceId);
  await bob.messenger.start();
  return { aliceId, bobId, alice, bob, bobStore };
}

describe('SecureMessenger: the delivered message leaves the saved pending list with the next write', () => {
  it('is saved before the listener runs, and its removal rides on the next write (no write of its own)', async () => {
    const { aliceId, bobId, alice, bob, bobStore } = await world();
    await alice.messenger.sendText(CONVERSATION, 'one');
    const before = bobStore.writes;
    const one = await carry(alice, bob, aliceId.deviceId!);
    // One write (session state, cursor, the decrypted message) before the listener had it.
    expect(bobStore.writes).toBe(before + 1);
    expect(bob.savedAtDelivery).toEqual([[one]]);
    expect(bob.messenger.pendingCount).toBe(0);
    expect(await savedInbox(bobStore, bobId.deviceId!)).toEqual([one]);

    // The answer's write (its ratchet state, saved before it leaves) carries the removal.
    await bob.messenger.sendText(CONVERSATION, 'answer');
    expect(bobStore.writes).toBe(before + 2);
    expect(await savedInbox(bobStore, bobId.deviceId!)).toEqual([]);
    await bob.messenger.close();
    expect(bobStore.writes).toBe(before + 2); // nothing was left to write
  });

  it('is written on its own shortly when no other write comes, and at flush() or close()', async () => {
    const { aliceId, bobId, alice, bob, bobStore } = await world();
    await alice.messenger.sendText(CONVERSATION, 'one');
    await carry(alice, bob, aliceId.deviceId!);
    const written = bobStore.writes;
    await waitFor(async () => (await savedInbox(bobStore, bobId.deviceId!)).length === 0, 'the removal written on its own');
    expect(bobStore.writes).toBe(written + 1);

    await alice.messenger.sendText(CONVERSATION, 'two');
    await carry(alice, bob, aliceId.deviceId!);
    await bob.messenger.flush();
    expect(await savedInbox(bobStore, bobId.deviceId!)).toEqual([]);

    await alice.messenger.sendText(CONVERSATION, 'three');
    await carry(alice, bob, aliceId.deviceId!);
    await bob.messenger.close();
    expect(await savedInbox(bobStore, bobId.deviceId!)).toEqual([]);
    expect(bob.received.map((m) => m.content?.type === 'text' && m.content.payload.text)).toEqual(['one', 'two', 'three']);
  });

  it('a crash before the removal is written hands the message over again once, redelivered, and the session goes on', async () => {
    const { aliceId, bobId, alice, bob, bobStore } = await world();
    await alice.messenger.sendText(CONVERSATION, 'one');
    const wire = alice.sent.at(-1)!;
    const one = await carry(alice, bob, aliceId.deviceId!);
    const leftovers = await bobStore.copy(); // the process dies here: the removal was not written

    const restarted = await open(bobId, leftovers, aliceId);
    await restarted.messenger.start();
    expect(restarted.received.map((m) => [m.message_id, m.redelivered])).toEqual([[one, true]]);
    // The same message handed in again by the service is not decrypted twice.
    await restarted.messenger.receive({
      message_id: one,
      conversation_id: CONVERSATION,
      sender_device_id: aliceId.deviceId!,
      header_blob: wire.header_blob,
      ciphertext: wire.ciphertext,
      timestamp: new Date().toISOString(),
      cursor: String(cursor),
      message_type: 'text',
      priority: 'normal',
    });
    expect(restarted.received).toHaveLength(1);
    await restarted.messenger.close();
    expect(await savedInbox(leftovers, bobId.deviceId!)).toEqual([]);

    // The restarted device reads the next message in the same session.
    await alice.messenger.sendText(CONVERSATION, 'two');
    const again = await open(bobId, leftovers, aliceId);
    await again.messenger.start();
    expect(again.received).toHaveLength(0);
    await carry(alice, again, aliceId.deviceId!);
    expect(again.received.map((m) => [m.content?.type === 'text' && m.content.payload.text, m.redelivered])).toEqual([['two', false]]);
    await again.messenger.close();
  });
});
