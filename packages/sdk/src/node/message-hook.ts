/**
 * The hook through which an application answers an agent's messages instead of the echo agent
 * (`agent.ts`) or alongside the plugin (`runtime.ts`): `run-agent.ts` builds it from an
 * `onMessage` handler. Both runtimes attach it to the device's messenger before the messenger
 * hands over its first message, so messages a previous run decrypted but had not handled yet
 * (handed over again at start, `redelivered: true`) reach it too.
 */
import type { SecureMessenger } from '../secure/messenger.js';
import type { RoomMessenger } from '../secure/rooms.js';
import type { SecureMessage } from '../secure/types.js';

/** What a {@link AgentMessageHook} answers with: the agent's device, its messenger and its rooms. */
export interface AgentParts {
  /** The agent's device id. */
  deviceId: string;
  /** The messenger of the agent's owner conversations and of the pairwise conversations of its rooms. */
  messenger: SecureMessenger;
  /** The agent's rooms (undefined while the room layer is not open yet). */
  rooms(): RoomMessenger | undefined;
}

/**
 * A `message` listener of the agent's messenger (every decrypted message of its owner
 * conversations and rooms, in order; the next message waits until the returned promise settled).
 */
export type AgentMessageHook = (message: SecureMessage, parts: AgentParts) => void | Promise<void>;
