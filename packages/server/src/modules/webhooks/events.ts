/**
 * Webhook event types and payloads (contract §2.3, §6.2; design §8.11).
 *
 * A webhook body is a Standard Webhooks JSON object `{type, timestamp, data}`: `type` is a dotted
 * name derived from the socket event (table below), `timestamp` the ISO 8601 time of the event and
 * `data` a SUBSET of the socket frame's data restricted by a per-type allowlist of ids, types,
 * priorities, statuses and timestamps. Ciphertext, `header` / `header_blob`, public keys,
 * fingerprints, names and free text never appear, whatever the socket frame carries, and only
 * scalar values are copied (an allowlisted field holding an object or array is dropped).
 *
 * | socket event            | webhook `type`          | `data` fields (when present)                                                                     |
 * |-------------------------|-------------------------|--------------------------------------------------------------------------------------------------|
 * | `message`               | `message.received`      | message_id, conversation_id, message_group_id, topic_id, sender_device_id, message_type, priority, timestamp |
 * | `room_message`          | `room.message`          | room_id, room_message_id, sender_device_id, message_type, priority, timestamp                    |
 * | `policy_alert`          | `policy.alert`          | room_id, channel_id, policy_id, held_message_id, sender_device_id, recipient_device_id, message_type, priority |
 * | `device_pending`        | `device.pending`        | device_id, enrolled_at                                                                           |
 * | `device_approved`       | `device.approved`       | device_id                                                                                        |
 * | `device_linked`         | `device.linked`         | device_id, conversation_id                                                                       |
 * | `room_joined`           | `room.joined`           | room_id, conversation_id, security_level (not the member list: it carries public keys)           |
 * | `member_joined`         | `room.member_joined`    | room_id, device_id                                                                               |
 * | `member_left`           | `room.member_left`      | room_id, device_id                                                                               |
 * | `topic_created`         | `topic.created`         | topic_id, group_id, created_at                                                                   |
 * | `a2a_channel_requested` | `a2a.channel.requested` | channel_id, conversation_id, role, peer_hub_address, peer_device_id, initiator/responder hub address and device id, status (no peer keys) |
 * | `a2a_channel_approved`  | `a2a.channel.approved`  | (same as requested)                                                                              |
 * | `a2a_channel_rejected`  | `a2a.channel.rejected`  | (same as requested)                                                                              |
 * | `a2a_channel_activated` | `a2a.channel.activated` | (same as requested)                                                                              |
 * | `a2a_channel_revoked`   | `a2a.channel.revoked`   | (same as requested)                                                                              |
 * | `a2a_message`           | `a2a.message`           | channel_id, message_id, a2a_message_id, sender_device_id, recipient_device_id, message_type, priority, timestamp |
 * | `decision_response`     | `decision.response`     | decision_id, resolution, option_id                                                               |
 * | `rental_message`        | `rental.message`        | rental_id, message_id, sender_device_id, recipient_device_id, message_type, priority, timestamp  |
 * | `rental_updated`        | `rental.updated`        | rental_id, listing_id, status, previous_status, reason, role                                     |
 * | `dispute_updated`       | `dispute.updated`       | dispute_id, rental_id, status, outcome                                                           |
 * | `payout_updated`        | `payout.updated`        | payout_id, status, amount_cents                                                                  |
 * | `spend_alert`           | `spend.alert`           | agent_id, period, period_start, threshold, unit, limit, used, severity, category (not title/message) |
 * | `key_directory_alert`   | `key_directory.alert`   | label, reason, device_id, reported_at (not detail)                                               |
 *
 * Every other event (typing, ping/pong, acks, `a2a_key_exchange`, `client_key_accepted`…) is not a
 * webhook event and is ignored.
 */

/** Fields shared by the A2A channel lifecycle events. */
const A2A_CHANNEL_FIELDS = [
  'channel_id',
  'conversation_id',
  'role',
  'peer_hub_address',
  'peer_device_id',
  'initiator_hub_address',
  'responder_hub_address',
  'initiator_device_id',
  'responder_device_id',
  'status',
] as const;

/** Socket event -> webhook type and the allowlist of `data` fields copied into the body. */
export const WEBHOOK_EVENTS: Readonly<Record<string, { type: string; fields: readonly string[] }>> = {
  message: {
    type: 'message.received',
    fields: ['message_id', 'conversation_id', 'message_group_id', 'topic_id', 'sender_device_id', 'message_type', 'priority', 'timestamp'],
  },
  room_message: { type: 'room.message', fields: ['room_id', 'room_message_id', 'sender_device_id', 'message_type', 'priority', 'timestamp'] },
  policy_alert: {
    type: 'policy.alert',
    fields: ['room_id', 'channel_id', 'policy_id', 'held_message_id', 'sender_device_id', 'recipient_device_id', 'message_type', 'priority'],
  },
  device_pending: { type: 'device.pending', fields: ['device_id', 'enrolled_at'] },
  device_approved: { type: 'device.approved', fields: ['device_id'] },
  device_linked: { type: 'device.linked', fields: ['device_id', 'conversation_id'] },
  room_joined: { type: 'room.joined', fields: ['room_id', 'conversation_id', 'security_level'] },
  member_joined: { type: 'room.member_joined', fields: ['room_id', 'device_id'] },
  member_left: { type: 'room.member_left', fields: ['room_id', 'device_id'] },
  topic_created: { type: 'topic.created', fields: ['topic_id', 'group_id', 'created_at'] },
  a2a_channel_requested: { type: 'a2a.channel.requested', fields: A2A_CHANNEL_FIELDS },
  a2a_channel_approved: { type: 'a2a.channel.approved', fields: A2A_CHANNEL_FIELDS },
  a2a_channel_rejected: { type: 'a2a.channel.rejected', fields: A2A_CHANNEL_FIELDS },
  a2a_channel_activated: { type: 'a2a.channel.activated', fields: A2A_CHANNEL_FIELDS },
  a2a_channel_revoked: { type: 'a2a.channel.revoked', fields: A2A_CHANNEL_FIELDS },
  a2a_message: {
    type: 'a2a.message',
    fields: ['channel_id', 'message_id', 'a2a_message_id', 'sender_device_id', 'recipient_device_id', 'message_type', 'priority', 'timestamp'],
  },
  decision_response: { type: 'decision.response', fields: ['decision_id', 'resolution', 'option_id'] },
  rental_message: { type: 'rental.message', fields: ['rental_id', 'message_id', 'sender_device_id', 'recipient_device_id', 'message_type', 'priority', 'timestamp'] },
  rental_updated: { type: 'rental.updated', fields: ['rental_id', 'listing_id', 'status', 'previous_status', 'reason', 'role'] },
  dispute_updated: { type: 'dispute.updated', fields: ['dispute_id', 'rental_id', 'status', 'outcome'] },
  payout_updated: { type: 'payout.updated', fields: ['payout_id', 'status', 'amount_cents'] },
  spend_alert: { type: 'spend.alert', fields: ['agent_id', 'period', 'period_start', 'threshold', 'unit', 'limit', 'used', 'severity', 'category'] },
  key_directory_alert: { type: 'key_directory.alert', fields: ['label', 'reason', 'device_id', 'reported_at'] },
};

/** A Standard Webhooks body: `type` (dotted event name), `timestamp` (ISO 8601), `data` (ids, types, times only). */
export interface WebhookPayload {
  type: string;
  timestamp: string;
  data: Record<string, string | number | boolean | null>;
}

/** Whether a socket event is also delivered by webhook. */
export const isWebhookEvent = (event: string): boolean => Object.hasOwn(WEBHOOK_EVENTS, event);

/**
 * The webhook body for a socket event, or `undefined` when the event is not a webhook event.
 * `data` must be the socket frame's data object; anything not allowlisted for the event is left out.
 * @param now event time used for `timestamp` (default: the current time).
 */
export function toWebhookPayload(event: string, data: unknown, now: Date = new Date()): WebhookPayload | undefined {
  const spec = isWebhookEvent(event) ? WEBHOOK_EVENTS[event] : undefined;
  if (!spec) return undefined;
  const src = data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {};
  const out: WebhookPayload['data'] = {};
  for (const f of spec.fields) {
    const v = src[f];
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[f] = v;
  }
  return { type: spec.type, timestamp: now.toISOString(), data: out };
}
