/**
 * Policies as the Rooms screen lists them (design §8.5): the ones scoped to a room plus the
 * tenant-wide ones (no room, no skill), and their conditions in words, device ids as names.
 */
import type { Policy, PolicyConditions } from '@parley/sdk';
import { nameOf, type NameMap } from '../../lib/names';

/** A policy that applies to a room: `scope` says whether it is the room's own or tenant-wide. */
export interface RoomPolicy {
  policy: Policy;
  scope: 'room' | 'tenant';
}

/** The policies of room `roomId` first, then the tenant-wide ones (design §8.5 scopes); skill-scoped and other rooms' left out. */
export function policiesForRoom(policies: readonly Policy[], roomId: string): RoomPolicy[] {
  const own = policies.filter((p) => p.scope.room_id === roomId).map((policy) => ({ policy, scope: 'room' as const }));
  const wide = policies.filter((p) => p.scope.room_id === null && p.scope.skill === null).map((policy) => ({ policy, scope: 'tenant' as const }));
  return [...own, ...wide];
}

const DEVICE_KEYS = new Set(['sender_device_ids', 'recipient_device_ids']);

function valueText(key: string, value: unknown, names: NameMap): string {
  if (Array.isArray(value)) return value.map((v) => (DEVICE_KEYS.has(key) ? nameOf(names, String(v)) : String(v))).join(', ');
  if (value && typeof value === 'object' && 'from' in value && 'to' in value) return `${String(value.from)}:00–${String(value.to)}:00 UTC`;
  return String(value);
}

/** Conditions (design §8.5) as "key: value" parts ("message types: text, file"); "every message" when none. */
export function conditionsText(conditions: PolicyConditions, names: NameMap): string {
  const parts = Object.entries(conditions)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k.replaceAll('_', ' ')}: ${valueText(k, v, names)}`);
  return parts.length ? parts.join('; ') : 'every message';
}
