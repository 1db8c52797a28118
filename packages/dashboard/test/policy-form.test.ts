/**
 * The policy form's conversion to and from the API body (lib/policy-form.ts, design §8.5): a
 * round trip keeps every condition key, empty fields are left out, hours that wrap midnight are
 * kept as given; and the conditions in words (lib/policy-words.ts).
 */
import type { Policy } from '@parley/protocol';
import { describe, expect, it } from 'vitest';
import { EMPTY_POLICY_FORM, formToPolicyBody, hourFromTime, policyToForm, timeFromHour, type PolicyFormValues } from '../src/lib/policy-form';
import { describeConditions, describeScope } from '../src/lib/policy-words';

const ROOM = '0b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a01';
const DEV_A = '1b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a02';
const DEV_B = '2b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a03';

function policy(over: Partial<Policy> = {}): Policy {
  return {
    policy_id: '3b0f3c1e-6a4e-4a57-9a35-0c8d7d2b1a04',
    name: 'night watch',
    scope: { room_id: ROOM, skill: null },
    priority: 5,
    conditions: {
      message_types: ['text', 'artifact', 'custom_kind'],
      priorities: ['high', 'urgent'],
      sender_kinds: ['agent'],
      recipient_kinds: ['owner'],
      sender_device_ids: [DEV_A, DEV_B],
      recipient_device_ids: [DEV_A],
      sender_hub_addresses: ['acme-research'],
      sender_tier_below: 'certified',
      trust_score_below: 0.4,
      hours_utc: { from: 22, to: 6 },
      rate_per_minute_over: 30,
      cross_tenant: false,
    },
    action: 'hold',
    enabled: false,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

function body(v: PolicyFormValues) {
  const r = formToPolicyBody(v);
  if (!r.ok) throw new Error(r.error);
  return r.body;
}

describe('policy form', () => {
  it('round-trips every condition key, the scope, action, priority and enabled', () => {
    const p = policy();
    const form = policyToForm(p);
    expect(form.messageTypes).toEqual(['text', 'artifact']);
    expect(form.otherMessageTypes).toBe('custom_kind');
    expect(form.hoursFrom).toBe('22:00');
    expect(form.crossTenant).toBe('no');
    expect(body(form)).toEqual({ name: p.name, scope: { room_id: ROOM }, priority: 5, conditions: p.conditions, action: 'hold', enabled: false });
  });

  it('round-trips a skill scope and a tenant-wide one (scope null, so an edit can clear a scope)', () => {
    expect(body(policyToForm(policy({ scope: { room_id: null, skill: 'translate' } }))).scope).toEqual({ skill: 'translate' });
    expect(body(policyToForm(policy({ scope: { room_id: null, skill: null } }))).scope).toBeNull();
  });

  it('leaves empty fields out of the conditions', () => {
    const b = body({ ...EMPTY_POLICY_FORM, name: ' only name ', senderDeviceIds: ' , ', otherMessageTypes: '' });
    expect(b).toEqual({ name: 'only name', scope: null, conditions: {}, action: 'hold', enabled: true });
    expect('priority' in b).toBe(false);
    expect(body({ ...EMPTY_POLICY_FORM, name: 'x', crossTenant: 'yes', priorities: ['urgent'] }).conditions).toEqual({ priorities: ['urgent'], cross_tenant: true });
  });

  it('keeps hours that wrap midnight as given, and refuses half-given or off-the-hour times', () => {
    expect(body({ ...EMPTY_POLICY_FORM, name: 'x', hoursFrom: '22:00', hoursTo: '06:00' }).conditions.hours_utc).toEqual({ from: 22, to: 6 });
    expect(body({ ...EMPTY_POLICY_FORM, name: 'x', hoursFrom: '00:00', hoursTo: '23:00' }).conditions.hours_utc).toEqual({ from: 0, to: 23 });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', hoursFrom: '22:00' })).toMatchObject({ ok: false });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', hoursFrom: '22:30', hoursTo: '06:00' })).toMatchObject({ ok: false });
    expect(hourFromTime('07:00')).toBe(7);
    expect(timeFromHour(7)).toBe('07:00');
  });

  it('asks for what is missing or malformed', () => {
    expect(formToPolicyBody(EMPTY_POLICY_FORM)).toEqual({ ok: false, error: 'Give the policy a name.' });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', scopeKind: 'room' })).toMatchObject({ ok: false, error: /room/ });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', scopeKind: 'skill', skill: ' ' })).toMatchObject({ ok: false, error: /skill/ });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', ratePerMinuteOver: '2.5' })).toMatchObject({ ok: false, error: /whole number/ });
    expect(formToPolicyBody({ ...EMPTY_POLICY_FORM, name: 'x', priority: 'high' })).toMatchObject({ ok: false, error: /Priority/ });
  });
});

describe('policy in words', () => {
  it('summarises the conditions and the scope', () => {
    const text = describeConditions(policy().conditions);
    expect(text).toContain('message type is text, artifact or custom kind');
    expect(text).toContain('sender is an agent');
    expect(text).toContain('sender is one of 2 devices');
    expect(text).toContain('between 22:00 and 06:00 UTC (overnight)');
    expect(text).toContain('more than 30 messages in the last minute');
    expect(text).toContain('only within this tenant');
    expect(describeConditions({})).toBe('every message');
    expect(describeScope({ room_id: ROOM, skill: null }, () => 'ops room')).toBe('Room ops room');
    expect(describeScope({ room_id: null, skill: 'translate' })).toBe('Skill translate');
    expect(describeScope({ room_id: null, skill: null })).toBe('Tenant-wide');
  });
});
