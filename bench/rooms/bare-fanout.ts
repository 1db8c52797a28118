/**
 * Baseline, the ceiling: a bare `ws` room fan-out with no persistence, authentication, policy
 * evaluation or validation beyond JSON parsing (the server skeleton: bench/relay/bare-server.ts).
 * It speaks the frames of Parley's rooms (design §8.5): a `room_message` frame `{event, data:
 * {room_id, message_type, priority, envelopes: [{recipient_device_id, header_blob, ciphertext}],
 * client_ref}}` is fanned out as one `room_message` frame per envelope to the recipient's socket,
 * shaped like Parley's, and answered with `room_message_ack {room_message_id, deliveries,
 * client_ref}`. Sockets name their device with `?device_id=`.
 */
import { randomUUID } from 'node:crypto';
import { startBareServer, type BareServer } from '../relay/bare-server.js';

interface Envelope {
  recipient_device_id?: string;
  header_blob?: string;
  ciphertext?: string;
}

interface RoomMessageIn {
  room_id?: string;
  message_type?: string;
  priority?: string;
  envelopes?: Envelope[];
  client_ref?: string;
}

/** Start the fan-out server on 127.0.0.1:0. */
export function startBareFanout(): Promise<BareServer> {
  return startBareServer<RoomMessageIn>((frame, from) => {
    const d = frame.data;
    if (frame.event !== 'room_message' || !d || !Array.isArray(d.envelopes)) return from.refuse(d?.client_ref);
    const roomMessageId = randomUUID();
    const timestamp = new Date().toISOString();
    const deliveries: { recipient_device_id: string; outcome: string }[] = [];
    for (const e of d.envelopes) {
      const recipient = e.recipient_device_id ?? '';
      from.deliver(recipient, 'room_message', {
        room_id: d.room_id,
        room_message_id: roomMessageId,
        sender_device_id: from.deviceId,
        header: e.header_blob,
        ciphertext: e.ciphertext,
        message_type: d.message_type ?? 'text',
        priority: d.priority ?? 'normal',
        timestamp,
      });
      deliveries.push({ recipient_device_id: recipient, outcome: 'delivered' });
    }
    from.reply('room_message_ack', { room_message_id: roomMessageId, deliveries, client_ref: d.client_ref });
  });
}
