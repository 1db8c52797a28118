/**
 * Frame dispatch of the realtime client: one route per event of the service's event table
 * (@parley/protocol `WS_SERVICE_EVENTS` / `WS_SERVICE_FRAMES`, contract §6.1), each typed with
 * that event's `data` (`WsServiceEventData`). A route names the shape check the client relies on
 * before handing the data on (a frame failing it is reported as `invalid_frame` when the route
 * says so, else ignored) and what the client does with it. Events the client has no method for
 * (`device_pending`, `topic_created`, …) and names outside the table reach the `event` listeners
 * as `{event, data}`. The table is total over the contract's events: an event added to the
 * contract does not type-check here until it is given a route.
 */
import { isWsServiceEvent, type WsServiceEventData, type WsServiceEventName } from '@parley/protocol';
import type { AckData } from './outbox.js';
import type { RealtimeEvents } from './types.js';
import { isObject, isRoomMessage, isWireMessage } from './wire.js';

/** Events the client re-emits to listeners of the same name, with the frame's data. */
type Reemitted = 'room_joined' | 'member_joined' | 'policy_alert' | 'message_delivered' | 'room_message_delivered' | 'message_read' | 'room_message_read' | 'typing';

/** What the client does with received frames; the dispatch table calls these. */
export interface FrameReceiver {
  /** Answer a service `ping` with `pong`. */
  pong(): void;
  /** A live conversation message. */
  message(message: WsServiceEventData['message']): void;
  /** A `message_ack` / `room_message_ack` (its fields are read defensively). */
  ack(data: AckData): void;
  /** A live room message envelope. */
  roomMessage(message: WsServiceEventData['room_message']): void;
  /** Delivered receipts (also emitted as their event). */
  delivered(event: WsServiceEventData['message_delivered'] | WsServiceEventData['room_message_delivered']): void;
  /** A read receipt (also emitted as its event). */
  read(event: WsServiceEventData['message_read'] | WsServiceEventData['room_message_read']): void;
  /** A `message_read_ack` / `room_message_read_ack`. */
  readAck(ack: WsServiceEventData['message_read_ack'] | WsServiceEventData['room_message_read_ack']): void;
  /** An `error` frame (its fields are read defensively). */
  refused(data: Partial<Record<keyof WsServiceEventData['error'], unknown>>): void;
  /** Hand `data` to the listeners of the local event of the same name. */
  emit<K extends Reemitted>(event: K, data: Parameters<RealtimeEvents[K]>[0]): void;
  /** A frame the client has no method for: to the `event` listeners. */
  other(event: string, data: unknown): void;
  /** A frame without the fields the client needs (`invalid_frame`). */
  invalid(detail: string): void;
}

/** How the client handles one event `K`. */
interface Route<K extends WsServiceEventName> {
  /** The shape check the client relies on before the data is handled as the event's type (default: none). */
  accepts?(data: unknown): boolean;
  /** When set, a frame failing `accepts` is reported as `invalid_frame` with this detail; else it is ignored. */
  invalid?: string;
  handle(to: FrameReceiver, data: WsServiceEventData[K], event: K): void;
}

/** A check of the fields the client reads of an object frame. */
const shaped = (check: (d: Record<string, unknown>) => boolean) => (d: unknown) => isObject(d) && check(d);
const anyObject = isObject;
const delivered = shaped((d) => typeof d.device_id === 'string' && Array.isArray(d.message_ids ?? d.room_message_ids));
const read = shaped((d) => typeof d.device_id === 'string' && typeof d.read_at === 'string');
const typing = shaped((d) => typeof d.conversation_id === 'string' && typeof d.device_id === 'string');

/** Handed to the `event` listeners as `{event, data}`. */
const passOn = { handle: (to: FrameReceiver, data: unknown, event: string) => to.other(event, data) };
/** Re-emitted to the listeners of the same name when it is an object. */
const reemit = <K extends 'room_joined' | 'member_joined' | 'policy_alert'>(): Route<K> => ({ accepts: anyObject, handle: (to, data, event) => to.emit(event, data as never) });

/** The route of every event of the contract's service-event table. */
const ROUTES: { readonly [K in WsServiceEventName]: Route<K> } = {
  ping: { handle: (to) => to.pong() },
  pong: { handle: () => undefined },
  error: { handle: (to, data) => to.refused(isObject(data) ? data : {}) },
  message: { accepts: isWireMessage, invalid: 'a message frame lacks message_id, conversation_id or cursor', handle: (to, m) => to.message(m) },
  message_ack: { accepts: anyObject, handle: (to, data) => to.ack(data) },
  room_message_ack: { accepts: anyObject, handle: (to, data) => to.ack(data) },
  room_message: { accepts: isRoomMessage, invalid: 'a room_message frame lacks room_id, room_message_id, sender_device_id, header or ciphertext', handle: (to, m) => to.roomMessage(m) },
  room_joined: reemit(),
  member_joined: reemit(),
  policy_alert: reemit(),
  message_delivered: { accepts: delivered, handle: (to, e) => (to.delivered(e), to.emit('message_delivered', e)) },
  room_message_delivered: { accepts: delivered, handle: (to, e) => (to.delivered(e), to.emit('room_message_delivered', e)) },
  message_read: { accepts: read, handle: (to, e) => (to.read(e), to.emit('message_read', e)) },
  room_message_read: { accepts: read, handle: (to, e) => (to.read(e), to.emit('room_message_read', e)) },
  message_read_ack: { accepts: anyObject, handle: (to, ack) => to.readAck(ack) },
  room_message_read_ack: { accepts: anyObject, handle: (to, ack) => to.readAck(ack) },
  typing: { accepts: typing, handle: (to, e) => to.emit('typing', { conversation_id: e.conversation_id, device_id: e.device_id }) },
  member_left: passOn,
  topic_created: passOn,
  client_key_accepted: passOn,
  device_pending: passOn,
  device_approved: passOn,
  device_linked: passOn,
  owner_device_linked: passOn,
  decision_created: passOn,
  decision_response: passOn,
  key_directory_alert: passOn,
  spend_alert: passOn,
  a2a_channel_requested: passOn,
  a2a_channel_approved: passOn,
  a2a_channel_rejected: passOn,
  a2a_channel_activated: passOn,
  a2a_channel_revoked: passOn,
  a2a_key_exchange: passOn,
  a2a_key_exchange_ack: passOn,
  a2a_message: passOn,
  a2a_message_ack: passOn,
  rental_message: passOn,
  rental_message_ack: passOn,
  rental_updated: passOn,
  dispute_updated: passOn,
  payout_updated: passOn,
};

/** Hand a received frame to `to` through its event's route (see the file comment). */
export function dispatchFrame(to: FrameReceiver, event: string, data: unknown): void {
  if (!isWsServiceEvent(event)) return to.other(event, data);
  const route = ROUTES[event] as Route<WsServiceEventName>;
  if (route.accepts && !route.accepts(data)) {
    if (route.invalid !== undefined) to.invalid(route.invalid);
    return;
  }
  route.handle(to, data as WsServiceEventData[WsServiceEventName], event);
}
