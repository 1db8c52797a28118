/**
 * The platform operator's forms read into API bodies (lib/operator.ts): a tier grant needs a
 * reason of 1–500 characters and a future expiry when one is given; a resolution needs a note,
 * and a partial refund an amount in dollars that becomes integer cents.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_GRANT_FORM, EMPTY_RESOLVE_FORM, evidenceLabel, grantBody, resolveBody } from '../src/lib/operator';

const NOW = Date.parse('2026-03-01T12:00:00Z');
/** A `datetime-local` value (local time) of an epoch time. */
const local = (ms: number) => {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};

describe('grantBody', () => {
  it('trims the reason and leaves out an empty expiry', () => {
    expect(grantBody({ ...EMPTY_GRANT_FORM, reason: '  checked the owner and the agent  ' }, NOW)).toEqual({ ok: true, body: { tier: 'certified', reason: 'checked the owner and the agent' } });
    expect(grantBody({ tier: 'unverified', reason: 'abuse report', expires: '' }, NOW)).toEqual({ ok: true, body: { tier: 'unverified', reason: 'abuse report' } });
  });

  it('sends a future expiry as ISO 8601 UTC', () => {
    const later = NOW + 7 * 24 * 3_600_000;
    const r = grantBody({ tier: 'enterprise', reason: 'audit passed', expires: local(later) }, NOW);
    expect(r.ok).toBe(true);
    if (r.ok) expect(Date.parse(r.body.expires_at!)).toBe(later - (later % 60_000));
  });

  it('refuses a blank or too long reason and a past or unreadable expiry', () => {
    expect(grantBody({ ...EMPTY_GRANT_FORM, reason: '   ' }, NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/reason/) });
    expect(grantBody({ ...EMPTY_GRANT_FORM, reason: 'x'.repeat(501) }, NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/501 characters; at most 500/) });
    expect(grantBody({ ...EMPTY_GRANT_FORM, reason: 'ok', expires: local(NOW - 3_600_000) }, NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/future/) });
    expect(grantBody({ ...EMPTY_GRANT_FORM, reason: 'ok', expires: 'soon' }, NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/not a date/) });
  });
});

describe('resolveBody', () => {
  it('refund and none carry no amount, even when one was typed', () => {
    expect(resolveBody({ outcome: 'refund', amount: '12', note: ' agent was down ' })).toEqual({ ok: true, body: { outcome: 'refund', note: 'agent was down' } });
    expect(resolveBody({ ...EMPTY_RESOLVE_FORM, note: 'no evidence' })).toEqual({ ok: true, body: { outcome: 'none', note: 'no evidence' } });
  });

  it('a partial refund turns dollars into integer cents', () => {
    expect(resolveBody({ outcome: 'partial', amount: '$12.50', note: 'half the term' })).toEqual({ ok: true, body: { outcome: 'partial', amount_cents: 1250, note: 'half the term' } });
    expect(resolveBody({ outcome: 'partial', amount: '0.01', note: 'n' })).toMatchObject({ ok: true, body: { amount_cents: 1 } });
  });

  it('refuses a missing note, a missing, zero or unreadable partial amount', () => {
    expect(resolveBody({ outcome: 'none', amount: '', note: ' ' })).toMatchObject({ ok: false, error: expect.stringMatching(/note/) });
    for (const amount of ['', '0', '0.00', 'ten', '-5', '1.234']) expect(resolveBody({ outcome: 'partial', amount, note: 'n' }), amount).toMatchObject({ ok: false, error: expect.stringMatching(/amount/) });
    expect(resolveBody({ outcome: 'none', amount: '', note: 'x'.repeat(2001) })).toMatchObject({ ok: false, error: expect.stringMatching(/at most 2000/) });
  });
});

it('evidenceLabel names the kind and keeps the whole id', () => {
  expect(evidenceLabel({ type: 'trace', id: '4bf92f3577b34da6a3ce929d0e0e4736' })).toBe('trace 4bf92f3577b34da6a3ce929d0e0e4736');
  expect(evidenceLabel({ type: 'audit_event', id: '3f2a9c1b-0000-4000-8000-000000000001' })).toBe('audit event 3f2a9c1b-0000-4000-8000-000000000001');
});
