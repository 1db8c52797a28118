/**
 * Ticks in the owner web app: the Ticks component, the chat log's statuses
 * (they only move forward; a read receipt covers earlier cursors; history fills in what was
 * missed), the chat showing ticks on sent messages and marking the newest received message read
 * while visible, and the room timeline's ticks per recipient.
 */
import { MemorySessionStore, type StoredMessage } from '@parley/sdk';
import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ticks } from '../src/components/Ticks';
import { ChatLog, type ChatEntry } from '../src/lib/chat-log';
import { renderInApp as show } from './render';

const CONV = '00000000-0000-4000-8000-0000000000c1';
const ME = '00000000-0000-4000-8000-000000000001';
const AGENT = '00000000-0000-4000-8000-000000000002';
const OTHER = '00000000-0000-4000-8000-000000000003';
const ROOM = '00000000-0000-4000-8000-0000000000f1';
const AT = '2026-03-01T12:00:00.000Z';

const entry = (id: string, direction: 'in' | 'out', over: Partial<ChatEntry> = {}): ChatEntry => ({
  message_id: id,
  conversation_id: CONV,
  direction,
  sender_device_id: direction === 'out' ? ME : AGENT,
  timestamp: `2026-03-01T12:00:0${id.slice(-1)}.000Z`,
  message_type: 'text',
  content: { type: 'text', payload: { text: `text ${id}` } },
  ...over,
});

afterEach(cleanup);

describe('Ticks', () => {
  it('names every status for screen readers and marks it for styling', () => {
    render(
      <>
        {(['pending', 'sent', 'delivered', 'read', 'failed'] as const).map((s) => (
          <Ticks key={s} status={s} at={AT} />
        ))}
        <Ticks status={undefined} />
      </>,
    );
    const ticks = screen.getAllByTestId('ticks');
    expect(ticks.map((t) => [t.getAttribute('aria-label'), t.dataset.status, t.textContent])).toEqual([
      ['Sending', 'pending', '🕓'],
      ['Sent', 'sent', '✓'],
      ['Delivered', 'delivered', '✓✓'],
      ['Read', 'read', '✓✓'],
      ['Not sent', 'failed', '⚠'],
    ]);
    expect(ticks[3]!.className).toContain('ticks-read');
    expect(ticks[3]!.title).toMatch(/^Read /);
  });
});

describe('ChatLog statuses', () => {
  it('moves sent messages forward only; a read mark covers earlier cursors; history fills in; received messages have none', async () => {
    const log = new ChatLog(new MemorySessionStore());
    await log.append(entry('m1', 'out', { status: 'sent', cursor: '9' }));
    await log.append(entry('m2', 'out', { status: 'sent', cursor: '10' }));
    await log.append(entry('m3', 'out', { status: 'sent', cursor: '12' }));
    await log.append(entry('m4', 'in'));
    const changes: string[] = [];
    log.subscribe((id) => void changes.push(id));
    const statuses = async () => (await log.list(CONV)).map((e) => e.status);

    await log.setStatus(CONV, 'm1', 'delivered');
    await log.setStatus(CONV, 'm1', 'sent'); // late: ignored
    expect(await statuses()).toEqual(['delivered', 'sent', 'sent', undefined]);
    await log.markReadUpTo(CONV, '10');
    expect(await statuses()).toEqual(['read', 'read', 'sent', undefined]);
    await log.applyHistory(CONV, [{ message_id: 'm3', delivered_at: AT, read_at: null } as StoredMessage, { message_id: 'm4', delivered_at: AT, read_at: AT } as StoredMessage]);
    expect(await statuses()).toEqual(['read', 'read', 'delivered', undefined]);
    await log.setStatus(CONV, 'm2', 'failed'); // a stored message never fails
    expect(await statuses()).toEqual(['read', 'read', 'delivered', undefined]);
    expect(changes).toEqual([CONV, CONV, CONV]);
  });
});

const chat = new ChatLog(new MemorySessionStore());
const owner = {
  deviceId: ME,
  chat,
  client: {
    listDevices: vi.fn(async () => ({ devices: [{ device_id: AGENT, name: 'builder', kind: 'agent', status: 'ACTIVE' }, { device_id: OTHER, name: 'helper', kind: 'agent', status: 'ACTIVE' }] })),
    conversationKeys: vi.fn(async () => ({ fingerprint: 'abcd' })),
    roomTimeline: vi.fn(async () => ({
      messages: [
        {
          room_message_id: '00000000-0000-4000-8000-0000000000e1',
          sender_device_id: ME,
          message_type: 'text',
          priority: 'normal',
          timestamp: AT,
          cursor: '1',
          deliveries: [
            { recipient_device_id: AGENT, outcome: 'delivered', delivered_at: AT, read_at: AT },
            { recipient_device_id: OTHER, outcome: 'delivered', delivered_at: AT, read_at: null },
          ],
        },
      ],
      next_cursor: null,
    })),
  },
  messenger: { sessionInfo: () => undefined, protection: () => ({ scheme: 'pqxdh', post_quantum: true }) },
  conversations: vi.fn(async () => [{ conversation_id: CONV, message_group_id: 'g', agent_device_id: AGENT, owner_device_id: ME, created_at: AT, topics: [] }]),
  refreshStatuses: vi.fn(async () => undefined),
  markRead: vi.fn(async () => undefined),
  send: vi.fn(async () => undefined),
};
vi.mock('../src/app/owner-context', () => ({ useOwner: () => owner }));

const { Conversations } = await import('../src/screens/Conversations');
const { Timeline } = await import('../src/screens/rooms/Timeline');

describe('the chat shows ticks and sends read receipts', () => {
  it('ticks on sent messages (live), none on received ones; the newest received message is marked read', async () => {
    await chat.append(entry('m1', 'out', { status: 'delivered', cursor: '1' }));
    await chat.append(entry('m2', 'in'));
    show(
      <Routes>
        <Route path="/conversations/:conversationId" element={<Conversations />} />
      </Routes>,
      `/conversations/${CONV}`,
    );
    const list = await screen.findByRole('list', { name: 'Messages with builder' });
    await waitFor(() => expect(within(list).getAllByTestId('chat-message')).toHaveLength(2));
    const [out, incoming] = within(list).getAllByTestId('chat-message');
    expect(within(out!).getByTestId('ticks').getAttribute('aria-label')).toBe('Delivered');
    expect(within(incoming!).queryByTestId('ticks')).toBeNull();
    // the session's protection is shown with the chat
    expect(screen.getByTestId('protection').textContent).toBe('Post-quantum (PQXDH)');
    expect(owner.refreshStatuses).toHaveBeenCalledWith(CONV);
    await waitFor(() => expect(owner.markRead).toHaveBeenCalledWith(CONV, 'm2'));

    // A read receipt arrives: the ticks turn to "Read" without a reload.
    await chat.markReadUpTo(CONV, '1');
    await waitFor(() => expect(within(out!).getByTestId('ticks').getAttribute('aria-label')).toBe('Read'));
  });

  it('the room timeline shows each recipient its ticks', async () => {
    show(<Timeline roomId={ROOM} />);
    const row = await screen.findByTestId('timeline-00000000-0000-4000-8000-0000000000e1');
    const items = within(row).getAllByRole('listitem');
    expect(items.map((li) => [li.textContent?.split(':')[0], within(li).getByTestId('ticks').getAttribute('aria-label')])).toEqual([
      ['builder', 'Read'],
      ['helper', 'Delivered'],
    ]);
  });
});
