/**
 * The rental room of a marketplace rental (contract §4.16; design §8.35): its members, the
 * envelopes of a rental-room message (one per member of the other side), the send result per
 * recipient, history and the socket frames. Routes: `marketplace.ts`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Base64, Ciphertext, lit, MessageType, Priority, Timestamp, Uuid } from '../common.js';
import { DELIVERY_OUTCOMES } from './rooms.js';
import { Page, PageCursor, PageLimit } from '../paging.js';

/**
 * A member of a rental room: the rented agent (`side: developer`) or one of the renter's ACTIVE
 * owner devices (`side: renter`), with the public keys a client needs to open its pairwise session
 * (X3DH + Double Ratchet, or MLS KeyPackages through the MLS routes). Each side keeps its own
 * sessions; the service relays ciphertext only.
 */
export const RentalMember = Type.Object({
  device_id: Uuid,
  tenant_id: Uuid,
  side: Type.Union([Type.Literal('renter'), Type.Literal('developer')]),
  kind: Type.Union([Type.Literal('owner'), Type.Literal('agent')]),
  identity_public_key: Type.String(),
  ephemeral_public_key: Type.String(),
  fingerprint: Type.String(),
});
export type RentalMember = Static<typeof RentalMember>;

/** `GET /api/v1/marketplace/rentals/{id}/members`. */
export const RentalMembers = Type.Object({ rental_id: Uuid, room_id: Uuid, members: Type.Array(RentalMember) });
export type RentalMembers = Static<typeof RentalMembers>;

/** One envelope of a rental-room message: the ciphertext for one member of the OTHER side (its pairwise session). */
export const RentalEnvelope = Type.Object({ recipient_device_id: Uuid, header_blob: Base64, ciphertext: Ciphertext });
export type RentalEnvelope = Static<typeof RentalEnvelope>;

/** `POST /api/v1/marketplace/rentals/{id}/messages` body: one envelope per recipient device. */
export const RentalMessageInput = Type.Object({
  message_type: Type.Optional(MessageType),
  priority: Type.Optional(Priority),
  envelopes: Type.Array(RentalEnvelope, { minItems: 1, maxItems: 50 }),
});
export type RentalMessageInput = Static<typeof RentalMessageInput>;

/** The outcome per recipient: both tenants' policies decide and the stricter wins; a suspended rental holds. */
export const RentalDelivery = Type.Object({
  recipient_device_id: Uuid,
  message_id: Uuid,
  outcome: lit(DELIVERY_OUTCOMES),
  held_message_id: Type.Optional(Uuid),
});
export const RentalSendResult = Type.Object({ rental_id: Uuid, deliveries: Type.Array(RentalDelivery), timestamp: Timestamp });
export type RentalSendResult = Static<typeof RentalSendResult>;

/** A relayed rental-room message (history and the `rental_message` frame). */
export const RentalMessage = Type.Object({
  message_id: Uuid,
  rental_id: Uuid,
  sender_device_id: Uuid,
  recipient_device_id: Uuid,
  header_blob: Type.String(),
  ciphertext: Type.String(),
  message_type: Type.String(),
  priority: Type.String(),
  timestamp: Timestamp,
  cursor: Type.String(),
});
export type RentalMessage = Static<typeof RentalMessage>;

/** `GET /api/v1/marketplace/rentals/{id}/messages` query: `since` a next_cursor (exclusive), `limit` 1-200. */
export const RentalMessageQuery = Type.Object({
  since: PageCursor({ maxLength: 32, pattern: '^[0-9]+$', description: 'the previous answer’s next_cursor' }),
  limit: PageLimit(),
});
export type RentalMessageQuery = Static<typeof RentalMessageQuery>;

/** The caller device's messages of the room (sent and received, relayed ones only), oldest first. */
export const RentalMessagePage = Page('messages', RentalMessage);
export type RentalMessagePage = Static<typeof RentalMessagePage>;

/**
 * `rental_message` send frame (client -> service, contract §6.1): the body of `POST
 * /marketplace/rentals/{id}/messages` with its `rental_id`, sent by a member's socket (the
 * renter's owner device, or the rented agent), with the same checks. `client_ref` correlates the
 * `rental_message_ack` / error frame (the SDK generates one when absent). Received rental-room
 * messages arrive as `rental_message` frames too, with the {@link RentalMessage} shape.
 */
export const OutgoingRentalMessage = Type.Object({ rental_id: Uuid, ...RentalMessageInput.properties, client_ref: Type.Optional(Type.String({ maxLength: 200 })) });
export type OutgoingRentalMessage = Static<typeof OutgoingRentalMessage>;

/** `rental_message_ack`: the answer of a `rental_message` send frame (each recipient's outcome). */
export const RentalMessageAck = Type.Object({ ...RentalSendResult.properties, client_ref: Type.String() });
export type RentalMessageAck = Static<typeof RentalMessageAck>;
