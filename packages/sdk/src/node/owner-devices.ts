/**
 * Owner devices that join after the agent (contract §4.4, §6.1; design §7): when an owner registers a
 * new device (or relinks one), the service creates its conversation with every ACTIVE agent and
 * announces each on the agent's sockets as `owner_device_linked`, with the device's public keys.
 * A running agent (enrolled device or API key) registers the conversation in its messenger at
 * once, so the new device can talk to it without the agent restarting, and saves it in its record.
 */
import type { OwnerDeviceLinkedEvent } from '@parley/protocol';
import type { RealtimeClient } from '../realtime/client.js';
import type { SecureMessenger } from '../secure/messenger.js';

/** The socket event announcing a new owner device to an agent. */
export const OWNER_DEVICE_LINKED = 'owner_device_linked';

const FIELDS = ['conversation_id', 'message_group_id', 'owner_device_id', 'identity_public_key', 'ephemeral_public_key', 'fingerprint'] as const;

/** Whether `data` is an `owner_device_linked` payload. */
export function isOwnerDeviceLinked(data: unknown): data is OwnerDeviceLinkedEvent {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return FIELDS.every((f) => typeof d[f] === 'string' && d[f] !== '');
}

/** Options of {@link followOwnerDevices}. */
export interface FollowOwnerDevicesOptions {
  /** The agent's owner-conversation messenger (undefined until the agent is set up: the event is then ignored). */
  messenger: () => SecureMessenger | undefined;
  /** Save the new conversation in the agent's record, once the messenger holds it. */
  save: (linked: OwnerDeviceLinkedEvent) => Promise<void>;
  log: (line: string) => void;
}

/**
 * Register every owner device the service announces (`owner_device_linked`) as a conversation
 * of the agent's messenger, then {@link FollowOwnerDevicesOptions.save} it. The conversation is
 * queued on the messenger as the event arrives, so a message of the new device that the service
 * publishes after the event is decrypted in it. Returns a function that stops following.
 */
export function followOwnerDevices(realtime: RealtimeClient, options: FollowOwnerDevicesOptions): () => void {
  return realtime.on('event', (e) => {
    if (e.event !== OWNER_DEVICE_LINKED) return;
    const messenger = options.messenger();
    if (!messenger || !isOwnerDeviceLinked(e.data)) return;
    const d = e.data;
    messenger
      .addConversation(d.conversation_id, { device_id: d.owner_device_id, identity_public_key: d.identity_public_key, ephemeral_public_key: d.ephemeral_public_key })
      .then(() => options.save(d))
      .then(
        () => options.log(`owner device ${d.owner_device_id} linked (fingerprint ${d.fingerprint}): conversation ${d.conversation_id}`),
        (err: unknown) => options.log(`warning: owner device ${d.owner_device_id} could not be linked: ${err instanceof Error ? err.message : String(err)}`),
      );
  });
}
