/**
 * The paging helpers (design §8.12 list limits and cursors) and the event -> frame-schema table
 * of the service's WebSocket events (contract §6.1): what the schemas accept and that the table
 * covers exactly the catalogue.
 */
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { CursorPaging, HistoryQuery, isWsServiceEvent, MessagePage, Page, PAGE_LIMIT_MAX, PageCursor, PageLimit, WS_SERVICE_EVENTS, WS_SERVICE_FRAMES } from '../src/index.js';

describe('paging helpers', () => {
  it('PageLimit accepts 1 to the maximum (200 by default), and nothing else', () => {
    const q = Type.Object({ limit: PageLimit() });
    expect(Value.Check(q, {})).toBe(true);
    expect(Value.Check(q, { limit: 1 })).toBe(true);
    expect(Value.Check(q, { limit: PAGE_LIMIT_MAX })).toBe(true);
    expect(Value.Check(q, { limit: PAGE_LIMIT_MAX + 1 })).toBe(false);
    expect(Value.Check(q, { limit: 0 })).toBe(false);
    expect(Value.Check(q, { limit: 1.5 })).toBe(false);
    const small = Type.Object({ limit: PageLimit({ maximum: 100, description: 'default 20' }) });
    expect(Value.Check(small, { limit: 101 })).toBe(false);
    expect(small.properties.limit.description).toBe('default 20');
  });

  it('PageCursor bounds the length (200 by default), or only by its pattern', () => {
    const q = Type.Object(CursorPaging({ maxLength: 64 }));
    expect(Value.Check(q, { cursor: 'x'.repeat(64), limit: 5 })).toBe(true);
    expect(Value.Check(q, { cursor: 'x'.repeat(65) })).toBe(false);
    expect(Value.Check(q, { cursor: '' })).toBe(false);
    expect(Value.Check(Type.Object({ cursor: PageCursor() }), { cursor: 'x'.repeat(201) })).toBe(false);
    const seq = Type.Object({ cursor: PageCursor({ pattern: '^[1-9][0-9]{0,14}$' }) });
    expect(seq.properties.cursor).not.toHaveProperty('maxLength');
    expect(Value.Check(seq, { cursor: '42' })).toBe(true);
    expect(Value.Check(seq, { cursor: '042' })).toBe(false);
  });

  it('Page answers its items under the key and a next_cursor that is null on the last page', () => {
    const P = Page('things', Type.Object({ id: Type.String() }));
    expect(Object.keys(P.properties)).toEqual(['things', 'next_cursor']);
    expect(P.required).toEqual(['things', 'next_cursor']);
    expect(Value.Check(P, { things: [{ id: 'a' }], next_cursor: 'c1' })).toBe(true);
    expect(Value.Check(P, { things: [], next_cursor: null })).toBe(true);
    expect(Value.Check(P, { things: [] })).toBe(false);
    expect(Value.Check(MessagePage, { messages: [], next_cursor: null })).toBe(true);
    expect(Value.Check(HistoryQuery, { limit: 201 })).toBe(false);
  });
});

describe('the event -> frame-schema table', () => {
  it('has one frame schema per service event: its name as a literal and the catalogue\'s data schema', () => {
    expect(Object.keys(WS_SERVICE_FRAMES).sort()).toEqual(Object.keys(WS_SERVICE_EVENTS).sort());
    for (const [event, e] of Object.entries(WS_SERVICE_EVENTS)) {
      const frame = WS_SERVICE_FRAMES[event as keyof typeof WS_SERVICE_FRAMES];
      expect(frame.properties.event.const).toBe(event);
      expect(frame.properties.data).toBe(e.data);
    }
    expect(Value.Check(WS_SERVICE_FRAMES.ping, { event: 'ping', data: {} })).toBe(true);
    expect(Value.Check(WS_SERVICE_FRAMES.ping, { event: 'pong', data: {} })).toBe(false);
  });

  it('isWsServiceEvent knows the catalogue\'s names only', () => {
    expect(isWsServiceEvent('message')).toBe(true);
    expect(isWsServiceEvent('payout_updated')).toBe(true);
    for (const name of ['nope', 'toString', '__proto__', 'client_key_register']) expect(isWsServiceEvent(name)).toBe(false);
  });
});
