/**
 * Live updates ("each updating live from the owner's socket"): the owner's
 * WebSocket events (contract §6.1; design §7 event payloads) mapped to the TanStack Query keys whose
 * data they change, which are then invalidated (refetched when on screen).
 */

/** Query key roots used by the screens (the first element of every query key). */
export type QueryRoot =
  | 'devices'
  | 'invites'
  | 'conversations'
  | 'rooms'
  | 'held'
  | 'decisions'
  | 'trust'
  | 'shadow'
  | 'telemetry'
  | 'api-keys'
  | 'policies'
  | 'settings'
  | 'audit'
  | 'market'
  | 'spend';

const RULES: [RegExp, QueryRoot[]][] = [
  [/^device_/, ['devices', 'conversations', 'trust', 'invites']],
  [/^decision_/, ['decisions']],
  [/^policy_alert$/, ['held', 'rooms', 'policies']],
  [/^(room_|member_)/, ['rooms', 'held']],
  [/^(rental_|dispute_|payout_|listing_)/, ['market']],
  [/^(trust_|tier_)/, ['trust']],
  [/^shadow_/, ['shadow', 'trust']],
  [/^topic_/, ['conversations']],
  [/^spend_/, ['spend']],
];

/** The query roots an owner event invalidates; every event also touches the audit log. */
export function rootsForEvent(event: string): QueryRoot[] {
  const out = new Set<QueryRoot>(['audit']);
  for (const [re, roots] of RULES) if (re.test(event)) for (const r of roots) out.add(r);
  return [...out];
}
