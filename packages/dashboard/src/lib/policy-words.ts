/**
 * Policies in words for the list (design §8.5): what a policy's conditions match (keys AND-ed, a
 * list means any of) and where it applies.
 */
import type { PolicyConditions, PolicyScope } from '@parley/protocol';
import { timeFromHour } from './policy-form';
import { words } from './format';

function anyOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

function kinds(items: readonly string[]): string {
  return anyOf(items.map((k) => (k === 'owner' ? 'an owner' : 'an agent')));
}

function count(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** The conditions as a sentence, e.g. "message type is text; sender is an agent; 22:00–06:00 UTC (overnight)". */
export function describeConditions(c: PolicyConditions): string {
  const parts: string[] = [];
  if (c.message_types) parts.push(`message type is ${anyOf(c.message_types.map(words))}`);
  if (c.priorities) parts.push(`priority is ${anyOf(c.priorities)}`);
  if (c.sender_kinds) parts.push(`sender is ${kinds(c.sender_kinds)}`);
  if (c.recipient_kinds) parts.push(`recipient is ${kinds(c.recipient_kinds)}`);
  if (c.sender_device_ids) parts.push(`sender is one of ${count(c.sender_device_ids.length, 'device')}`);
  if (c.recipient_device_ids) parts.push(`recipient is one of ${count(c.recipient_device_ids.length, 'device')}`);
  if (c.sender_hub_addresses) parts.push(`sender hub address is ${anyOf(c.sender_hub_addresses)}`);
  if (c.sender_tier_below) parts.push(`sender tier is below ${c.sender_tier_below}`);
  if (c.trust_score_below !== undefined) parts.push(`sender trust score is below ${c.trust_score_below}`);
  if (c.hours_utc) {
    const { from, to } = c.hours_utc;
    parts.push(`between ${timeFromHour(from)} and ${timeFromHour(to)} UTC${from > to ? ' (overnight)' : ''}`);
  }
  if (c.rate_per_minute_over !== undefined) parts.push(`sender sent more than ${count(c.rate_per_minute_over, 'message')} in the last minute`);
  if (c.cross_tenant !== undefined) parts.push(c.cross_tenant ? 'only across tenants' : 'only within this tenant');
  return parts.length === 0 ? 'every message' : parts.join('; ');
}

/** Where a policy applies: tenant-wide, a room (by name when known) or a skill. */
export function describeScope(scope: PolicyScope, roomName?: (id: string) => string | undefined): string {
  if (scope.room_id) return `Room ${roomName?.(scope.room_id) ?? scope.room_id}`;
  if (scope.skill) return `Skill ${scope.skill}`;
  return 'Tenant-wide';
}
