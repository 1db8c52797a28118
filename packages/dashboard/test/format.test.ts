/**
 * Pure helpers of the governance screens: money (design §8.24), lists, local times, paging
 * (design §8.22), form drafts, audit filters and the chain verdict (design §8.10), settings and
 * listing forms (design §8.22, §8.23).
 */
import type { TenantSettings } from '@parley/protocol';
import { describe, expect, it } from 'vitest';
import { auditQuery, describeVerdict, NO_AUDIT_FILTERS } from '../src/lib/audit';
import { formatCents, joinList, localToIso, parseDollars, plural, shortId, splitList, words } from '../src/lib/format';
import { parseJsonDraft } from '../src/lib/json-draft';
import { EMPTY_LISTING_FORM, listingBody } from '../src/lib/listing-form';
import { flattenPages, nextCursor } from '../src/lib/paging';
import { RESET_SETTINGS, settingsPatch, settingsToForm } from '../src/lib/settings-form';
import { evidenceRefs } from '../src/screens/market/EvidenceNote';

describe('money', () => {
  it('formats integer cents as US dollars', () => {
    expect(formatCents(1250)).toBe('$12.50');
    expect(formatCents(0)).toBe('$0.00');
    expect(formatCents(123456789)).toBe('$1,234,567.89');
    expect(formatCents(-500)).toBe('-$5.00');
  });

  it('parses typed dollars into cents, refusing what is not an amount', () => {
    expect(parseDollars('12')).toBe(1200);
    expect(parseDollars('12.5')).toBe(1250);
    expect(parseDollars(' $1,200.05 ')).toBe(120005);
    expect(parseDollars('0.5')).toBe(50);
    for (const bad of ['', 'abc', '1.234', '-3', '1,20', '12.']) expect(parseDollars(bad)).toBeUndefined();
  });
});

describe('lists, times, words', () => {
  it('splits and joins comma-separated inputs', () => {
    expect(splitList(' a, b ,,a , c ')).toEqual(['a', 'b', 'c']);
    expect(splitList('')).toEqual([]);
    expect(joinList(['a', 'b'])).toBe('a, b');
    expect(joinList(undefined)).toBe('');
  });

  it('turns a local date-time into ISO UTC, nothing when empty or invalid', () => {
    expect(localToIso('2026-03-01T10:30')).toBe(new Date(2026, 2, 1, 10, 30).toISOString());
    expect(localToIso('')).toBeUndefined();
    expect(localToIso('not a date')).toBeUndefined();
  });

  it('writes enum values as words and shortens ids', () => {
    expect(words('prev_hash_mismatch')).toBe('prev hash mismatch');
    expect(shortId('0b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a01')).toBe('0b0f3c1e…');
  });
});

describe('paging', () => {
  it('follows next_cursor until it is null and flattens the pages in order', () => {
    expect(nextCursor({ next_cursor: '42' })).toBe('42');
    expect(nextCursor({ next_cursor: null })).toBeUndefined();
    const pages = [{ events: [1, 2], next_cursor: '2' }, { events: [3], next_cursor: null }];
    expect(flattenPages(pages, (p) => p.events)).toEqual([1, 2, 3]);
    expect(flattenPages(undefined, (p: { events: number[] }) => p.events)).toEqual([]);
  });
});

describe('form drafts', () => {
  it('lays a draft over the initial values, ignoring unreadable drafts', () => {
    const initial = { a: '', b: 1 };
    expect(parseJsonDraft('', initial)).toBe(initial);
    expect(parseJsonDraft('{"a":"typed"}', initial)).toEqual({ a: 'typed', b: 1 });
    expect(parseJsonDraft('{oops', initial)).toBe(initial);
    expect(parseJsonDraft('[1]', initial)).toBe(initial);
  });
});

describe('audit', () => {
  it('builds the events query from the filters, leaving empty ones out', () => {
    expect(auditQuery(NO_AUDIT_FILTERS)).toEqual({});
    expect(auditQuery({ type: 'policy.created', actor: ' owner ', subject: '', since: '2026-03-01T10:30', until: '' })).toEqual({
      type: 'policy.created',
      actor: 'owner',
      since: new Date(2026, 2, 1, 10, 30).toISOString(),
    });
  });

  it('says whether the chain is intact with the count, or names the first broken link', () => {
    expect(describeVerdict({ valid: true, checked: 42, first_broken: null })).toBe('Chain intact: 42 events checked.');
    expect(describeVerdict({ valid: true, checked: 1, first_broken: null })).toBe('Chain intact: 1 event checked.');
    const broken = describeVerdict({ valid: false, checked: 9, first_broken: { seq: 7, event_id: 'e-7', reason: 'prev_hash_mismatch' } });
    expect(broken).toBe('Chain broken at sequence 7, event e-7 (prev hash mismatch); 9 events checked.');
  });
});

describe('settings form', () => {
  const current: TenantSettings = { held_message_ttl_hours: 72, default_room_security_level: 'standard', scan_rules_enabled: true, model_prices: {}, read_receipts_enabled: true, require_post_quantum: false, key_transparency_witnesses: [], key_transparency_min_cosignatures: 0 };

  it('sends only what changed, nothing when nothing did', () => {
    const form = settingsToForm(current);
    expect(settingsPatch(current, form)).toEqual({ ok: true, body: undefined });
    expect(settingsPatch(current, { ...form, heldTtlHours: '24', scanRulesEnabled: false })).toEqual({ ok: true, body: { held_message_ttl_hours: 24, scan_rules_enabled: false } });
    expect(settingsPatch(current, { ...form, readReceipts: false })).toEqual({ ok: true, body: { read_receipts_enabled: false } });
    expect(settingsPatch(current, { ...form, requirePostQuantum: true })).toEqual({ ok: true, body: { require_post_quantum: true } });
    expect(RESET_SETTINGS).toEqual({ held_message_ttl_hours: null, default_room_security_level: null, scan_rules_enabled: null, read_receipts_enabled: null, require_post_quantum: null });
  });

  it('refuses an expiry out of range', () => {
    for (const bad of ['0', '721', '1.5', '']) expect(settingsPatch(current, { ...settingsToForm(current), heldTtlHours: bad })).toMatchObject({ ok: false });
  });
});

describe('listing form', () => {
  it('prices in cents and omits empty optional fields', () => {
    const r = listingBody({ ...EMPTY_LISTING_FORM, hubAddress: 'acme', title: ' Research ', category: 'research', price: '12.50' });
    expect(r).toEqual({ ok: true, body: { hub_address: 'acme', title: 'Research', category: 'research', pricing: { model: 'per_task', price_cents: 1250, currency: 'usd' }, min_tier: 'certified' } });
    const full = listingBody({ ...EMPTY_LISTING_FORM, hubAddress: 'acme', title: 'R', category: 'r', price: '5', capabilities: 'a, b', termHours: '24', description: 'd' });
    expect(full).toMatchObject({ ok: true, body: { capabilities: ['a', 'b'], term_hours: 24, description: 'd' } });
    expect(listingBody({ ...EMPTY_LISTING_FORM, hubAddress: 'acme', price: 'lots' })).toMatchObject({ ok: false });
    expect(listingBody(EMPTY_LISTING_FORM)).toMatchObject({ ok: false });
  });

  it('reads evidence ids: 32 hex is a trace, anything else an audit event', () => {
    expect(evidenceRefs('0123456789abcdef0123456789ABCDEF, 0b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a01')).toEqual([
      { type: 'trace', id: '0123456789abcdef0123456789ABCDEF' },
      { type: 'audit_event', id: '0b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a01' },
    ]);
  });
});

describe('plural', () => {
  it('says one agent, never one agents', () => {
    expect(plural(1, 'agent')).toBe('1 agent');
    expect(plural(0, 'tier change')).toBe('0 tier changes');
    expect(plural(2, 'agent')).toBe('2 agents');
  });
});
