/**
 * `runAgent`: an agent of your own in a few lines (Node). It enrolls with an invite token (or runs
 * as the agent of an API key), keeps its keys and sessions in a state directory sealed at rest,
 * and hands every decrypted message to your `onMessage(message, reply)` handler; `reply` answers
 * end to end in the same conversation or room. Nothing is answered unless the handler does it.
 *
 * Built on the two agent runtimes: `agent.ts` (an enrolled device: `enrollAgentDevice`, then
 * `startEchoAgent` with the echo replaced by the handler) and `runtime.ts` (an API key:
 * `startApiKeyAgent`), through their `messageHook` (`message-hook.ts`).
 *
 * Rules of the handler:
 * - It gets the messages of the agent's owner conversations and of the rooms it is a member of,
 *   one at a time, in order (the next waits until the handler settled), never its own.
 * - A handler that throws (or rejects) is logged with the message id and the agent goes on with
 *   the next message. The log names messages by id and content type, never their plaintext.
 * - `reply` marks what it sends with `in_reply_to` (the answered message's id, an extra payload
 *   field; content envelopes keep unknown fields, like the decision answers of
 *   `secure/decisions.ts`). In rooms, a message carrying `in_reply_to` is an answer, not a request:
 *   it is not handed to the handler, so two agents in a room never answer each other's answers.
 * - A `decision_request` goes to `onDecisionRequest` when given: it answers the option id to
 *   choose (the answer is sent as a decision answer) or undefined (no answer).
 * - A message decrypted by a run that stopped before its handler settled is handed over again
 *   at the next start (`redelivered: true`): handling is at least once.
 * - A2A channel messages are not handed over: `agent.channels` has them.
 */
import type { Content, DecisionRequest } from '../content/types.js';
import { decisionAnswer } from '../secure/decisions.js';
import type { SecureMessage, SendOptions } from '../secure/types.js';
import { AgentStateError, enrollAgentDevice, loadAgentState, startEchoAgent, type EnrollAgentDeviceOptions, type StartEchoAgentOptions } from './agent.js';
import type { AgentMessageHook, AgentParts } from './message-hook.js';
import { loadApiKeyRecord, startApiKeyAgent, type AgentRuntime } from './runtime.js';
import { chooseStoreProtection, openAgentStore, type StateStoreOptions } from './state-store.js';

/** Default service base URL of {@link runAgent}. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

/** A message handed to an `onMessage` handler: the decrypted message, with its text when it is a `text`. */
export interface AgentMessage extends SecureMessage {
  /** `content.payload.text` of a `text` message; undefined for other content. */
  text: string | undefined;
}

/**
 * Answer a message end to end, in its conversation (or room): a string is sent as `text`, a
 * {@link Content} as is; both get `in_reply_to` (see the file comment). Resolves once the service
 * stored it. @throws SecureMessengerError, RealtimeError from the send.
 */
export type Reply = (answer: string | Content, options?: Pick<SendOptions, 'message_type' | 'priority'>) => Promise<void>;

/** The `onMessage` handler: called for each message (see the file comment); may be async. */
export type MessageHandler = (message: AgentMessage, reply: Reply) => unknown;

/** The `onDecisionRequest` handler: the option id to choose, or undefined to leave it unanswered. */
export type DecisionHandler = (request: DecisionRequest, message: AgentMessage) => string | undefined | Promise<string | undefined>;

/** Options of {@link runAgent}. */
export interface RunAgentOptions extends StateStoreOptions, Pick<StartEchoAgentOptions, 'mls' | 'requirePostQuantum' | 'WebSocket' | 'reconnect' | 'fetch'> {
  /** Where the agent's keys, tokens and sessions are kept (created 0700 when missing). */
  stateDir: string;
  /** Service base URL (default {@link DEFAULT_SERVER}); a state directory remembers its own. */
  server?: string;
  /**
   * Invite token (`svc_tok_…`) to enroll with when the state directory holds no agent yet (it
   * then waits for the owner's approval); ignored once enrolled.
   */
  invite?: string;
  /** Run as the agent of this API key (`svc_agent_sk_…`); a state directory remembers the key. */
  apiKey?: string;
  /** Device name shown to the owner at enrollment (default: the invite's label). */
  name?: string;
  /** Called for each message (see the file comment). */
  onMessage?: MessageHandler;
  /** Called for each `decision_request` instead of `onMessage` (see the file comment). */
  onDecisionRequest?: DecisionHandler;
  /** Enrollment settings (approval polling, timeout, abort, the enrolled device's fingerprint). */
  enroll?: Pick<EnrollAgentDeviceOptions, 'pollIntervalMs' | 'unsafeFastPolling' | 'timeoutMs' | 'signal' | 'onEnrolled' | 'platform'>;
  /** Where status and transcript lines go (default `console.log`). */
  log?: (line: string) => void;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Whether content answers another message (it carries `in_reply_to`). */
function isAnswer(content: Content | undefined): boolean {
  return typeof (content?.payload as { in_reply_to?: unknown } | undefined)?.in_reply_to === 'string';
}

/** `answer` as content marked as the answer to `messageId`. */
function answerContent(answer: string | Content, messageId: string): Content {
  const content: Content = typeof answer === 'string' ? { type: 'text', payload: { text: answer } } : answer;
  if (isAnswer(content)) return content;
  const payload: Record<string, unknown> = { ...content.payload, in_reply_to: messageId };
  return { type: content.type, payload } as Content;
}

/** The reply function of message `m`: into its room, else its conversation; logs the content type only. */
function replier(m: SecureMessage, parts: AgentParts, log: (line: string) => void): Reply {
  return async (answer, options = {}) => {
    const content = answerContent(answer, m.message_id);
    if (m.room_id === undefined) {
      const sent = await parts.messenger.send(m.conversation_id, content, options);
      log(`→ [${m.conversation_id.slice(0, 8)}] ${content.type} message via ${sent.protocol}`);
      return;
    }
    const rooms = parts.rooms();
    if (!rooms) throw new AgentStateError(`the room layer is not open yet; cannot answer in room ${m.room_id}`);
    await rooms.send(m.room_id, content, options);
    log(`→ [room ${m.room_id.slice(0, 8)}] ${content.type} message`);
  };
}

/** The messenger hook that runs the handlers (see the file comment). */
function handlerHook(options: RunAgentOptions, log: (line: string) => void): AgentMessageHook {
  return async (m, parts) => {
    if (m.sender_device_id === parts.deviceId || m.rental_id !== undefined) return;
    if (m.room_id !== undefined && isAnswer(m.content)) return;
    const message: AgentMessage = { ...m, text: m.content?.type === 'text' ? m.content.payload.text : undefined };
    const reply = replier(m, parts, log);
    try {
      if (m.content?.type === 'decision_request' && options.onDecisionRequest) {
        const optionId = await options.onDecisionRequest(m.content.payload, message);
        if (optionId !== undefined) await reply(decisionAnswer(m.content.payload, m.message_id, optionId));
      } else {
        await options.onMessage?.(message, reply);
      }
    } catch (err) {
      log(`warning: the handler failed on message ${m.message_id}: ${describe(err)}; going on with the next message`);
    }
  };
}

/**
 * Start an agent whose messages your handlers answer (see the file comment): an API-key agent
 * when `apiKey` is given or the state directory holds one; else the enrolled device of the state
 * directory, enrolling first with `invite` when it holds none (waiting for the owner's approval,
 * or resuming that wait). Resolves once the agent runs; `ready` resolves when it is online.
 * @throws AgentStateError (no agent in the state directory and neither invite nor API key, a
 *   malformed token, an API key for a directory of an enrolled device); SealedStoreError (no key
 *   chosen, wrong key); the enrollment errors of {@link enrollAgentDevice} (ParleyApiError 401 for
 *   an unknown, used or expired invite, EnrollmentRejectedError, EnrollmentTimeoutError).
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentRuntime> {
  const log = options.log ?? console.log;
  // One key source for every open of the state directory (a passphrase is stretched once).
  const stored = { protection: options.protection ?? chooseStoreProtection(), ...(options.fsync !== undefined ? { fsync: options.fsync } : {}) };
  const store = await openAgentStore(options.stateDir, stored);
  const messageHook = handlerHook(options, log);
  const connection = { ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}), ...(options.reconnect ? { reconnect: options.reconnect } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) };
  const pq = options.requirePostQuantum ? { requirePostQuantum: true } : {};
  const { record } = await loadAgentState(store);
  const savedKey = record ? undefined : await loadApiKeyRecord(store);
  if (options.apiKey !== undefined || savedKey) {
    const apiKey = options.apiKey ?? savedKey!.api_key;
    return startApiKeyAgent({ ...stored, ...connection, ...pq, apiKey, server: options.server ?? savedKey?.server ?? DEFAULT_SERVER, stateDir: options.stateDir, log, messageHook });
  }
  if (record?.status !== 'ACTIVE') {
    if (!record && options.invite === undefined) {
      throw new AgentStateError(`${options.stateDir} holds no agent yet: give an invite token from your owner (invite, svc_tok_…) or an API key (apiKey, svc_agent_sk_…)`);
    }
    await enrollAgentDevice({
      ...stored,
      ...options.enroll,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      server: record?.server ?? options.server ?? DEFAULT_SERVER,
      invite: options.invite ?? '',
      stateDir: options.stateDir,
      log,
      ...(options.name !== undefined ? { name: options.name } : {}),
    });
  }
  return startEchoAgent({ ...stored, ...connection, ...pq, stateDir: options.stateDir, log, messageHook, ...(options.mls !== undefined ? { mls: options.mls } : {}) });
}
