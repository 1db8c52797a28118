/**
 * The policy form (design §8.5) and its conversion to and from the API body, pure: every
 * condition key (`message_types`, `priorities`, `sender_kinds` / `recipient_kinds`,
 * `sender_device_ids`, `recipient_device_ids`, `sender_hub_addresses`, `sender_tier_below`,
 * `trust_score_below`, `hours_utc {from, to}` (may wrap midnight), `rate_per_minute_over`,
 * `cross_tenant`), the scope (tenant-wide, a room or a skill), action, priority and enabled.
 * Empty fields are left out of the conditions: an absent key matches everything.
 */
import { MESSAGE_TYPES, PRIORITIES, type CreatePolicyRequest, type Policy, type PolicyAction, type PolicyConditions } from '@parley/protocol';
import { joinList, splitList, type FormResult } from './format';

/** Sender / recipient kinds of `sender_kinds` and `recipient_kinds` (design §8.5). */
export type Kind = 'owner' | 'agent';
/** A message priority (contract §2.4). */
export type PriorityName = (typeof PRIORITIES)[number];
/** The kinds, in the order the form shows them. */
export const KINDS: readonly Kind[] = ['owner', 'agent'];
/** Values of `sender_tier_below` (design §8.5: matches a sender whose tier is lower). */
export const TIERS = ['certified', 'enterprise'] as const;
/** Where a policy applies (design §8.5 `scope`): tenant-wide, one room, one skill. */
export type ScopeKind = 'tenant' | 'room' | 'skill';
/** `cross_tenant`: absent (either), true (only cross-tenant), false (only same tenant). */
export type TriState = 'any' | 'yes' | 'no';

/** What the policy form holds: strings for what is typed, lists for checkbox groups. */
export interface PolicyFormValues {
  name: string;
  action: PolicyAction;
  priority: string;
  enabled: boolean;
  scopeKind: ScopeKind;
  roomId: string;
  skill: string;
  /** Checked message types of contract §2.4. */
  messageTypes: string[];
  /** Other message types, comma-separated (the service accepts any name). */
  otherMessageTypes: string;
  priorities: PriorityName[];
  senderKinds: Kind[];
  recipientKinds: Kind[];
  senderDeviceIds: string;
  recipientDeviceIds: string;
  senderHubAddresses: string;
  senderTierBelow: '' | (typeof TIERS)[number];
  trustScoreBelow: string;
  /** `HH:MM` of a time input, UTC; whole hours. */
  hoursFrom: string;
  hoursTo: string;
  ratePerMinuteOver: string;
  crossTenant: TriState;
}

/** A new policy: tenant-wide, hold, enabled, no conditions. */
export const EMPTY_POLICY_FORM: PolicyFormValues = Object.freeze({
  name: '',
  action: 'hold',
  priority: '',
  enabled: true,
  scopeKind: 'tenant',
  roomId: '',
  skill: '',
  messageTypes: [],
  otherMessageTypes: '',
  priorities: [],
  senderKinds: [],
  recipientKinds: [],
  senderDeviceIds: '',
  recipientDeviceIds: '',
  senderHubAddresses: '',
  senderTierBelow: '',
  trustScoreBelow: '',
  hoursFrom: '',
  hoursTo: '',
  ratePerMinuteOver: '',
  crossTenant: 'any',
}) as PolicyFormValues;

const KNOWN_TYPES = new Set<string>(MESSAGE_TYPES);

/** An hour 0-23 as the value of a time input (`HH:00`). */
export function timeFromHour(hour: number): string {
  return `${String(hour).padStart(2, '0')}:00`;
}

/** A time input's `HH:MM` as a whole UTC hour, or undefined when it is not on the hour. */
export function hourFromTime(value: string): number | undefined {
  const m = /^(\d{2}):(\d{2})(?::00(?:\.0+)?)?$/.exec(value.trim());
  if (!m || m[2] !== '00') return undefined;
  const h = Number(m[1]);
  return h >= 0 && h <= 23 ? h : undefined;
}

/** The form of an existing policy (design §8.5), for editing. */
export function policyToForm(p: Policy): PolicyFormValues {
  const c = p.conditions;
  const types = c.message_types ?? [];
  return {
    name: p.name,
    action: p.action,
    priority: String(p.priority),
    enabled: p.enabled,
    scopeKind: p.scope.room_id ? 'room' : p.scope.skill ? 'skill' : 'tenant',
    roomId: p.scope.room_id ?? '',
    skill: p.scope.skill ?? '',
    messageTypes: types.filter((t) => KNOWN_TYPES.has(t)),
    otherMessageTypes: joinList(types.filter((t) => !KNOWN_TYPES.has(t))),
    priorities: [...(c.priorities ?? [])],
    senderKinds: [...(c.sender_kinds ?? [])],
    recipientKinds: [...(c.recipient_kinds ?? [])],
    senderDeviceIds: joinList(c.sender_device_ids),
    recipientDeviceIds: joinList(c.recipient_device_ids),
    senderHubAddresses: joinList(c.sender_hub_addresses),
    senderTierBelow: c.sender_tier_below ?? '',
    trustScoreBelow: c.trust_score_below === undefined ? '' : String(c.trust_score_below),
    hoursFrom: c.hours_utc ? timeFromHour(c.hours_utc.from) : '',
    hoursTo: c.hours_utc ? timeFromHour(c.hours_utc.to) : '',
    ratePerMinuteOver: c.rate_per_minute_over === undefined ? '' : String(c.rate_per_minute_over),
    crossTenant: c.cross_tenant === undefined ? 'any' : c.cross_tenant ? 'yes' : 'no',
  };
}

class FormError extends Error {}

function num(text: string, what: string, integer: boolean): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new FormError(`${what} must be ${integer ? 'a whole number' : 'a number'}.`);
  return n;
}

function list<T>(items: readonly T[]): T[] | undefined {
  return items.length > 0 ? [...items] : undefined;
}

/** The `conditions` object of the form (design §8.5): empty fields omitted. @throws FormError */
function conditionsOf(v: PolicyFormValues): PolicyConditions {
  const types = [...MESSAGE_TYPES.filter((t) => v.messageTypes.includes(t)), ...splitList(v.otherMessageTypes).filter((t) => !KNOWN_TYPES.has(t))];
  let hours: PolicyConditions['hours_utc'];
  if (v.hoursFrom !== '' || v.hoursTo !== '') {
    const from = hourFromTime(v.hoursFrom);
    const to = hourFromTime(v.hoursTo);
    if (from === undefined || to === undefined) throw new FormError('Hours (UTC) need both a start and an end, on the hour (for example 22:00 to 06:00).');
    hours = { from, to };
  }
  const c: PolicyConditions = {
    message_types: list(types),
    priorities: list(PRIORITIES.filter((p) => v.priorities.includes(p))),
    sender_kinds: list(KINDS.filter((k) => v.senderKinds.includes(k))),
    recipient_kinds: list(KINDS.filter((k) => v.recipientKinds.includes(k))),
    sender_device_ids: list(splitList(v.senderDeviceIds)),
    recipient_device_ids: list(splitList(v.recipientDeviceIds)),
    sender_hub_addresses: list(splitList(v.senderHubAddresses)),
    sender_tier_below: v.senderTierBelow === '' ? undefined : v.senderTierBelow,
    trust_score_below: num(v.trustScoreBelow, 'Trust score below', false),
    hours_utc: hours,
    rate_per_minute_over: num(v.ratePerMinuteOver, 'Messages per minute', true),
    cross_tenant: v.crossTenant === 'any' ? undefined : v.crossTenant === 'yes',
  };
  return Object.fromEntries(Object.entries(c).filter(([, val]) => val !== undefined)) as PolicyConditions;
}

/**
 * The `POST /policies` (and full `PATCH /policies/{id}`) body of the form (design §8.5).
 * `scope` is null for tenant-wide, so an edit can make a scoped policy tenant-wide again.
 */
export function formToPolicyBody(v: PolicyFormValues): FormResult<CreatePolicyRequest> {
  try {
    const name = v.name.trim();
    if (name === '') throw new FormError('Give the policy a name.');
    let scope: CreatePolicyRequest['scope'] = null;
    if (v.scopeKind === 'room') {
      if (v.roomId === '') throw new FormError('Choose the room the policy applies to.');
      scope = { room_id: v.roomId };
    } else if (v.scopeKind === 'skill') {
      if (v.skill.trim() === '') throw new FormError('Name the skill the policy applies to.');
      scope = { skill: v.skill.trim() };
    }
    const priority = num(v.priority, 'Priority', true);
    const body: CreatePolicyRequest = { name, scope, conditions: conditionsOf(v), action: v.action, enabled: v.enabled };
    if (priority !== undefined) body.priority = priority;
    return { ok: true, body };
  } catch (err) {
    if (err instanceof FormError) return { ok: false, error: err.message };
    throw err;
  }
}
