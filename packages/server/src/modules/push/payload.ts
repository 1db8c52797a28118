/**
 * Which service events wake a device by push, and what the push says (design §8.36 "Push
 * delivery"): metadata only, never content or ciphertext —
 * `{event, tenant_id, device_id, conversation_id? | room_id? | decision_id? | held_message_id? |
 * rental_id?, count, sender_name?}`.
 *
 * | socket event (contract §6.1)       | push `event`         | id field          | urgency            |
 * |------------------------------------|----------------------|-------------------|--------------------|
 * | `message`                          | `message`            | conversation_id   | by priority        |
 * | `room_message`                     | `room_message`       | room_id           | by priority        |
 * | `rental_message`                   | `rental_message`     | rental_id         | by priority        |
 * | `a2a_message`                      | `a2a_message`        | —                 | by priority        |
 * | `decision_created`                 | `decision_request`   | decision_id       | high               |
 * | `a2a_channel_requested`            | `approval_request`   | —                 | high               |
 * | `policy_alert` with a held message | `held_message`       | held_message_id   | by priority        |
 * | `device_pending`                   | `enrollment_pending` | —                 | normal             |
 * | `spend_alert`                      | `spend_alert`        | —                 | normal             |
 * | `key_directory_alert`              | `key_alert`          | —                 | high               |
 *
 * "By priority": `high` for message priority `urgent` or `high`, `normal` otherwise. A device is
 * never pushed about its own message (the sender's other sockets also get the socket event).
 */

/** The push `event` values. */
export const PUSH_KINDS = ['message', 'room_message', 'rental_message', 'a2a_message', 'decision_request', 'approval_request', 'held_message', 'enrollment_pending', 'spend_alert', 'key_alert'] as const;
export type PushKind = (typeof PUSH_KINDS)[number];

/** The id fields a push may carry. */
export type PushIdField = 'conversation_id' | 'room_id' | 'decision_id' | 'held_message_id' | 'rental_id';

/** The body every platform carries (the Web Push plaintext, the APNs custom keys, the FCM `data`). */
export interface PushPayload extends Partial<Record<PushIdField, string>> {
  event: PushKind;
  tenant_id: string;
  device_id: string;
  /** Events of this kind collapsed into this push (at least 1). */
  count: number;
  /** The sending device's display name, when it is of the recipient's tenant. */
  sender_name?: string;
}

/** A service event read as a push: its kind, ids, urgency and the sending device (never pushed). */
export interface PushEvent {
  kind: PushKind;
  ids: Partial<Record<PushIdField, string>>;
  urgent: boolean;
  senderDeviceId: string | undefined;
}

/** How long a push service keeps an undelivered push (seconds): 24 h. */
export const PUSH_TTL_SECONDS = 86_400;

/** Pushes of one registration and kind closer together than this collapse into one (ms). */
export const COLLAPSE_WINDOW_MS = 10_000;

const SOURCES: Record<string, { kind: PushKind; id?: [PushIdField, string]; urgent?: true }> = {
  message: { kind: 'message', id: ['conversation_id', 'conversation_id'] },
  room_message: { kind: 'room_message', id: ['room_id', 'room_id'] },
  rental_message: { kind: 'rental_message', id: ['rental_id', 'rental_id'] },
  a2a_message: { kind: 'a2a_message' },
  decision_created: { kind: 'decision_request', id: ['decision_id', 'decision_id'], urgent: true },
  a2a_channel_requested: { kind: 'approval_request', urgent: true },
  policy_alert: { kind: 'held_message', id: ['held_message_id', 'held_message_id'] },
  device_pending: { kind: 'enrollment_pending' },
  spend_alert: { kind: 'spend_alert' },
  key_directory_alert: { kind: 'key_alert', urgent: true },
};

/** Whether socket event `event` may wake a device (the Notifier sink's `handles`). */
export const isPushSource = (event: string): boolean => Object.hasOwn(SOURCES, event);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * The push of socket event `event` with `data`, or undefined when it wakes no one (not a push
 * source, or a `policy_alert` that held nothing).
 */
export function pushEventOf(event: string, data: unknown): PushEvent | undefined {
  const src = SOURCES[event];
  if (!src) return undefined;
  const d = (data ?? {}) as Record<string, unknown>;
  const ids: Partial<Record<PushIdField, string>> = {};
  if (src.id) {
    const v = str(d[src.id[1]]);
    if (v) ids[src.id[0]] = v;
  }
  if (src.kind === 'held_message') {
    if (!ids.held_message_id) return undefined;
    const room = str(d.room_id);
    if (room) ids.room_id = room;
  }
  const priority = str(d.priority);
  return { kind: src.kind, ids, urgent: src.urgent === true || priority === 'urgent' || priority === 'high', senderDeviceId: str(d.sender_device_id) };
}
