/**
 * Structured-content helpers for secure messaging (contract §2.4): the service-visible
 * `message_type` a content type maps to, and the answer to a `decision_request` carried end to
 * end (the contract §4.15 decision routes are a separate, server-visible mechanism).
 *
 * A decision answer is an `action_confirmation` (one of contract §2.4's content types) with
 * `action: "decision"`, `status: "success"`, a human-readable `detail`, and two extra payload
 * fields (content envelopes keep unknown fields): `option_id`, the chosen option, and
 * `in_reply_to`, the `message_id` of the request.
 */
import type { MessageType } from '@parley/protocol';
import type { ActionConfirmation, Content, ContentType, DecisionOption, DecisionRequest } from '../content/types.js';

/** contract §2.4 message types that are also content types (the others map to the service default). */
const MESSAGE_TYPES: ReadonlySet<string> = new Set<MessageType>(['text', 'decision_request', 'status_alert', 'action_confirmation', 'artifact']);

/**
 * The `message_type` to declare for a content type: itself when contract §2.4 lists it
 * (text, decision_request, status_alert, action_confirmation, artifact), else undefined (the
 * service default `text`; e.g. `heartbeat`).
 */
export function messageTypeFor(type: ContentType): MessageType | undefined {
  return MESSAGE_TYPES.has(type) ? (type as MessageType) : undefined;
}

/** `action_confirmation` payload of a decision answer (see the file comment). */
export interface DecisionAnswer extends ActionConfirmation {
  action: 'decision';
  option_id: string;
  /** `message_id` of the decision_request answered. */
  in_reply_to: string;
}

/** The option an automatic answerer picks: the one marked `is_default`, else the first. */
export function defaultDecisionOption(request: DecisionRequest): DecisionOption {
  return request.options.find((o) => o.is_default === true) ?? request.options[0]!;
}

/**
 * Build the content answering a decision request with one of its options.
 * @param request the decision_request payload.
 * @param optionId the chosen option (default: {@link defaultDecisionOption}).
 * @param inReplyTo the `message_id` of the request message.
 * @throws Error when `optionId` is not one of the request's options.
 */
export function decisionAnswer(request: DecisionRequest, inReplyTo: string, optionId?: string): Content {
  const option = optionId === undefined ? defaultDecisionOption(request) : request.options.find((o) => o.option_id === optionId);
  if (!option) throw new Error(`"${optionId}" is not an option of "${request.title}"`);
  const payload: DecisionAnswer = {
    action: 'decision',
    status: 'success',
    detail: `chose "${option.label}" for "${request.title}"`,
    option_id: option.option_id,
    in_reply_to: inReplyTo,
  };
  return { type: 'action_confirmation', payload };
}

/** The decision answer carried by `content`, or undefined when it is not one. */
export function readDecisionAnswer(content: Content | undefined): DecisionAnswer | undefined {
  if (content?.type !== 'action_confirmation') return undefined;
  const p = content.payload as Partial<DecisionAnswer>;
  if (p.action !== 'decision' || typeof p.option_id !== 'string' || typeof p.in_reply_to !== 'string') return undefined;
  return p as DecisionAnswer;
}
