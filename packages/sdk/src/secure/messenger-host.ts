/**
 * What the parts of a {@link SecureMessenger} (`messenger.ts`) outside the class read and change of
 * it: {@link MessengerHost}, handed by the messenger to the session set-up (`messenger-sessions.ts`)
 * and receiving (`messenger-receive.ts`) functions, which run under its lock; and small helpers
 * they share.
 */
import type { DeviceIdentity } from '../crypto/keys.js';
import type { KeyTransparency } from '../key-transparency/index.js';
import type { PrekeyStore } from '../crypto/prekeys.js';
import { hexToBytes, KEY_BYTES } from '../crypto/primitives.js';
import type { PeerDevice } from '../crypto/session.js';
import type { MlsClient } from '../mls/client.js';
import type { LiveConversation } from './conversation.js';
import type { SecureMessengerError, SecureMessengerOptions, SessionEvent } from './types.js';

/** The state and services of one messenger its session and receiving functions use. */
export interface MessengerHost {
  /** The local device id. */
  readonly deviceId: string;
  readonly identity: DeviceIdentity;
  readonly options: SecureMessengerOptions;
  /** The MLS client (undefined with MLS off); replaced when a failed write reloads the state. */
  mls(): MlsClient | undefined;
  /** Whether new sessions may use MLS from this side. */
  mlsAvailable(): boolean;
  /** This device's X25519 prekeys (with `options.prekeys`); replaced when the state is reloaded. */
  prekeys(): PrekeyStore | undefined;
  /** The conversations by id; replaced when the state is reloaded. */
  conversations(): Map<string, LiveConversation>;
  /** Session events to emit once the next state write succeeded. */
  readonly sessionEvents: SessionEvent[];
  /** One-time prekeys of `options.prekeysFrom` used by sessions not yet saved (deleted after the save). */
  readonly sharedPrekeyUses: string[];
  /** Whether this device refuses classical sessions ({@link SecureMessenger.requiresPostQuantum}). */
  requiresPostQuantum(): Promise<boolean>;
  /** Emit an `error` event. */
  report(error: SecureMessengerError): void;
  /** Publish more KeyPackages and prekeys soon, when the stock ran low (not awaited). */
  topUpSoon(): void;
  /** The key-transparency client (undefined when off: `key-transparency.ts`). */
  keyTransparency(): KeyTransparency | undefined;
}

/** The MLS group id prefix of a conversation's 1:1 groups. */
export function groupPrefix(conversationId: string): string {
  return `parley:${conversationId}:`;
}

/** The conversation id in a 1:1 group id `parley:<conversation id>:<random UUID>`, or undefined. */
export function groupConversationId(groupId: string): string | undefined {
  const end = groupId.lastIndexOf(':');
  return groupId.startsWith('parley:') && end > 'parley:'.length ? groupId.slice('parley:'.length, end) : undefined;
}

/** A random UUID (v4). */
export function randomId(): string {
  return globalThis.crypto.randomUUID();
}

/** The current time, ISO 8601. */
export function now(): string {
  return new Date().toISOString();
}

/** An error's message, or the thrown value as a string. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A peer device with its keys checked (32-byte hex) and lower-cased.
 * @throws TypeError without a device id; CryptoError for malformed keys.
 */
export function checkPeer(peer: PeerDevice): PeerDevice {
  if (!peer || typeof peer.device_id !== 'string' || peer.device_id.length === 0) throw new TypeError('peer.device_id is required');
  hexToBytes(peer.identity_public_key, KEY_BYTES, 'peer identity_public_key');
  hexToBytes(peer.ephemeral_public_key, KEY_BYTES, 'peer ephemeral_public_key');
  return { device_id: peer.device_id, identity_public_key: peer.identity_public_key.toLowerCase(), ephemeral_public_key: peer.ephemeral_public_key.toLowerCase() };
}
