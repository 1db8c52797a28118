/**
 * Live updates: which screens' data an owner socket event refreshes (lib/live.ts), and the
 * decrypted chat log (lib/chat-log.ts): de-duplicated by message_id, ordered, capped, persisted.
 */
import { MemorySessionStore } from '@parley/sdk';
import { describe, expect, it } from 'vitest';
import { ChatLog, LOG_LIMIT, type ChatEntry } from '../src/lib/chat-log';
import { rootsForEvent } from '../src/lib/live';

describe('rootsForEvent', () => {
  it('maps owner events to the data they change, and always the audit log', () => {
    expect(rootsForEvent('device_pending')).toEqual(expect.arrayContaining(['devices', 'audit']));
    expect(rootsForEvent('decision_created')).toEqual(['audit', 'decisions']);
    expect(rootsForEvent('policy_alert')).toEqual(expect.arrayContaining(['held', 'rooms']));
    expect(rootsForEvent('rental_updated')).toContain('market');
    expect(rootsForEvent('something_new')).toEqual(['audit']);
  });
});

function entry(i: number, conversation = 'c1'): ChatEntry {
  return {
    message_id: `m${i}`,
    conversation_id: conversation,
    direction: i % 2 ? 'in' : 'out',
    sender_device_id: 'd',
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    message_type: 'text',
    content: { type: 'text', payload: { text: `hello ${i}` } },
  };
}

describe('ChatLog', () => {
  it('keeps one entry per message_id in timestamp order and reloads it from the store', async () => {
    const store = new MemorySessionStore();
    const log = new ChatLog(store);
    const seen: string[] = [];
    log.subscribe((c) => seen.push(c));
    await Promise.all([log.append(entry(3)), log.append(entry(1)), log.append(entry(2)), log.append(entry(1))]);
    expect((await log.list('c1')).map((e) => e.message_id)).toEqual(['m1', 'm2', 'm3']);
    expect(seen).toEqual(['c1', 'c1', 'c1']);
    const again = new ChatLog(store);
    expect((await again.list('c1')).map((e) => e.message_id)).toEqual(['m1', 'm2', 'm3']);
    expect(await again.list('other')).toEqual([]);
  });

  it(`keeps the newest ${LOG_LIMIT} entries`, async () => {
    const log = new ChatLog(new MemorySessionStore());
    for (let i = 0; i < LOG_LIMIT + 5; i++) await log.append(entry(i));
    const list = await log.list('c1');
    expect(list).toHaveLength(LOG_LIMIT);
    expect(list[0]!.message_id).toBe('m5');
  });
});
