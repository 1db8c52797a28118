/**
 * The rental-room socket frame (contract §4.16, §6.1): `rental_message {rental_id, message_type?,
 * priority?, envelopes: [{recipient_device_id, header_blob, ciphertext}], client_ref?}` (schema
 * `OutgoingRentalMessage` of @parley/protocol, the body of `POST
 * /marketplace/rentals/{id}/messages` with its rental), answered `rental_message_ack {rental_id,
 * deliveries, timestamp, client_ref}`. A member's socket sends it — the renter's owner device, or
 * the rented agent (device JWT or API key) — as the device the socket was authenticated as, and
 * {@link RentalRoom.send} applies the same checks as the REST route (membership, recipients of
 * the other side, open room and term, both tenants' policies, the sender's message budget).
 * Errors are the gateway's error frames `{detail, status, client_ref?}`.
 */
import { OutgoingRentalMessage } from '@parley/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Gateway } from '../../realtime/gateway.js';
// Registers the `uuid` string format the compiled check below needs.
import '../../realtime/frames.js';
import type { RentalRoom } from './room.js';

/** Serve `rental_message` frames on the gateway (called once by the composition root). */
export function registerRentalFrames(gateway: Pick<Gateway, 'registerFrame'>, room: Pick<RentalRoom, 'send'>): void {
  gateway.registerFrame('rental_message', {
    check: TypeCompiler.Compile(OutgoingRentalMessage),
    async handle(sender, data) {
      const { client_ref: _ref, rental_id: rentalId, ...input } = data;
      const result = await room.send({ tenantId: sender.tenantId, deviceId: sender.deviceId, ownerSub: null }, rentalId.toLowerCase(), input);
      return { event: 'rental_message_ack', data: { ...result } };
    },
  });
}
