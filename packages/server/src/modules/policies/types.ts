/**
 * The contract between the policy module and the message paths that consult it (rooms and A2A
 * channels). Rooms and A2A call {@link PolicyDecider.decide} inside their own tenant-scoped
 * transaction, before anything is delivered; held items are released through the
 * {@link HeldReleaser} each path registers.
 */
import type { PolicyAlertEvent } from '@parley/protocol';
import type { Tx } from '../../db/client.js';
import type { Evaluation, EvaluationContext, PolicyAction } from './engine.js';

/** What an evaluation is about, for the `svc.policy.evaluate` record. */
export type PolicySubjectKind = 'room_envelope' | 'a2a_message' | 'rental_message';

export interface DecideItem {
  ctx: EvaluationContext;
  subjectKind: PolicySubjectKind;
  /** The room envelope id or A2A message id. */
  subjectId: string;
  /** The outcome when no policy matches: `allow`, or `hold` for agent senders in a strict room. */
  defaultOutcome: PolicyAction;
}

/** Fields of a held message (design §8.3, §8.5); exactly one of the room, A2A or rental pair is set. */
export interface HoldInput {
  roomId?: string;
  envelopeId?: string;
  channelId?: string;
  a2aMessageId?: string;
  rentalId?: string;
  rentalMessageId?: string;
  senderDeviceId: string;
  recipientDeviceId: string | null;
  policyId: string | null;
  messageType: string;
  priority: string;
}

/** A held message as given to its releaser on approval. */
export interface HeldRecord extends HoldInput {
  id: string;
  tenantId: string;
}

export interface PolicyDecider {
  /**
   * Evaluate the enabled policies of `tenantId` (the cached compiled set, revalidated within `tx`,
   * which must be scoped to that tenant) for each item, write the `svc.policy.evaluate` records
   * (a row per non-allow item, allow counts per sender; one statement), and answer one Evaluation
   * per item in order.
   *
   * `senderRate` is the items' sender's message count over the last minute, computed lazily: it is
   * called at most once, and only when an enabled policy has `rate_per_minute_over`; its answer
   * fills `ctx.senderRatePerMinute` of every item that does not carry one already (all items of
   * one call share one sender). Without it, a rate condition sees 0 unless the context carries it.
   */
  decide(tx: Tx, tenantId: string, items: DecideItem[], senderRate?: () => Promise<number>): Promise<Evaluation[]>;
  /** Create a `held` held message (expires after the configured hold time, 72 h by default); answers its id. */
  hold(tx: Tx, tenantId: string, input: HoldInput): Promise<string>;
  /** {@link hold} for several messages in one statement; answers their ids in input order (none for an empty list). */
  holdAll(tx: Tx, tenantId: string, inputs: HoldInput[]): Promise<string[]>;
  /**
   * Tell owners: `policy_alert {room_id, policy_id, sender_device_id, recipient_device_id,
   * message_type}` to every owner socket of the tenant (and their webhooks); A2A adds `channel_id`.
   * Call after commit.
   */
  alert(tenantId: string, data: PolicyAlertEvent): Promise<void>;
}

/**
 * Delivers an approved held message (room: the held envelope to its recipient; A2A: the held
 * message). Called after the approval committed, with the row as it was held.
 */
export type HeldReleaser = (held: HeldRecord) => Promise<void>;
