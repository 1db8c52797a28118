/**
 * Pure helpers of the Rooms and Decisions screens: the policies that apply to a room and their
 * conditions in words (design §8.5), recent decision answers from the audit trail and this
 * browser's answers (design §8.19), and the remembered decisions.
 */
import type { AuditEvent, Decision, Policy } from '@parley/sdk';
import { beforeEach, describe, expect, it } from 'vitest';
import { nameMap } from '../src/lib/names';
import { recentAnswers } from '../src/screens/decisions/answered';
import { autoActionText } from '../src/screens/decisions/describe';
import { knownDecisions, rememberDecisions } from '../src/screens/decisions/known';
import { conditionsText, policiesForRoom } from '../src/screens/rooms/policy-text';

const ROOM = 'room-1';
const policy = (policy_id: string, room_id: string | null, skill: string | null = null): Policy => ({
  policy_id,
  name: policy_id,
  scope: { room_id, skill },
  priority: 0,
  conditions: {},
  action: 'allow',
  enabled: true,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

describe('policiesForRoom', () => {
  it("keeps the room's own policies, then the tenant-wide ones", () => {
    const rows = policiesForRoom([policy('wide', null), policy('other', 'room-2'), policy('own', ROOM), policy('skill', null, 'pay')], ROOM);
    expect(rows.map((r) => [r.policy.policy_id, r.scope])).toEqual([
      ['own', 'room'],
      ['wide', 'tenant'],
    ]);
  });
});

describe('conditionsText', () => {
  it('names devices and hours, and says when a policy matches everything', () => {
    const names = nameMap([{ device_id: 'd-1', name: 'alpha' }]);
    expect(conditionsText({ sender_device_ids: ['d-1', 'unknown-device'], priorities: ['urgent', 'high'], hours_utc: { from: 22, to: 6 }, cross_tenant: true }, names)).toBe(
      'sender device ids: alpha, unknown-…; priorities: urgent, high; hours utc: 22:00–6:00 UTC; cross tenant: true',
    );
    expect(conditionsText({}, names)).toBe('every message');
  });
});

const decision = (id: string, over: Partial<Decision> = {}): Decision => ({
  decision_id: id,
  device_id: 'agent',
  title: `title ${id}`,
  description: null,
  options: [{ option_id: 'a', label: 'Option A', risk_level: 'low' }],
  deadline: null,
  auto_action: null,
  status: 'pending',
  option_id: null,
  note: null,
  created_by: 'device:agent',
  created_at: '2026-01-01T00:00:00.000Z',
  resolved_at: null,
  resolved_by: null,
  ...over,
});
const event = (type: string, subject: string, created_at: string, data: unknown): AuditEvent => ({ event_id: `${subject}-${created_at}`, type, actor: type === 'decision.expired' ? 'system' : 'owner-sub', subject, data, created_at, prev_hash: '0'.repeat(64), hash: '0'.repeat(64) });

describe('recentAnswers', () => {
  it('keeps the latest answer of each decision, newest first, joined with known decisions', () => {
    const known = new Map([['d1', decision('d1')]]);
    const answers = recentAnswers(
      [
        event('decision.resolved', 'd1', '2026-01-01T00:01:00.000Z', { from: 'pending', resolution: 'defer', option_id: null }),
        event('decision.resolved', 'd1', '2026-01-01T00:03:00.000Z', { from: 'deferred', resolution: 'approve', option_id: 'a' }),
        event('decision.expired', 'd2', '2026-01-01T00:02:00.000Z', { auto_action: 'deny', option_id: null }),
        event('decision.created', 'd3', '2026-01-01T00:04:00.000Z', {}),
      ],
      known,
    );
    expect(answers.map((a) => [a.decision_id, a.status, a.option_id, a.decision?.title])).toEqual([
      ['d1', 'approved', 'a', 'title d1'],
      ['d2', 'expired', null, undefined],
    ]);
  });

  it("includes this browser's answers, preferring them (with the note) at the same time", () => {
    const at = '2026-01-01T00:05:00.000Z';
    const mine = decision('d1', { status: 'denied', note: 'no', resolved_at: at, resolved_by: 'owner-sub' });
    const answers = recentAnswers([event('decision.resolved', 'd1', at, { resolution: 'deny', option_id: null })], new Map([['d1', mine], ['d2', decision('d2')]]));
    expect(answers).toHaveLength(1);
    expect(answers[0]!.decision?.note).toBe('no');
    expect(recentAnswers([], new Map([['d1', mine]]), 0)).toEqual([]);
  });
});

describe('autoActionText', () => {
  it('names the option the deadline picks', () => {
    const options = decision('x').options;
    expect(autoActionText({ resolution: 'approve', option_id: 'a' }, options)).toBe('approve “Option A”');
    expect(autoActionText({ resolution: 'deny' }, options)).toBe('deny');
    expect(autoActionText(null, options)).toMatch(/^nothing/);
  });
});

describe('rememberDecisions', () => {
  beforeEach(() => sessionStorage.clear());

  it('does not let an older pending copy replace an answer', () => {
    rememberDecisions([decision('d1', { status: 'approved', resolved_at: '2026-01-01T00:05:00.000Z' })]);
    rememberDecisions([decision('d1'), decision('d2')]);
    expect(knownDecisions().get('d1')!.status).toBe('approved');
    expect(knownDecisions().get('d2')!.status).toBe('pending');
  });
});
