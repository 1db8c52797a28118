/**
 * Decisions (contract §2.4, §3.8, §4.15; design §8.4, §8.19): the inbox of decisions awaiting the
 * owner — pending, and deferred ones that stay open — each answered with Approve (an option),
 * Deny or Defer; and the recently answered ones. Live from `decision_*` socket events.
 */
import type { Decision } from '@parley/sdk';
import { Empty, ErrorNote, Loading, Section } from '../components/ui';
import { useDeviceNames } from '../lib/use-devices';
import { useKept } from '../lib/use-kept';
import { Answered } from './decisions/Answered';
import { useInbox } from './decisions/data';
import { DecisionCard } from './decisions/DecisionCard';

const decisionId = (d: Decision) => d.decision_id;
const AWAITING = new Set<string>(['pending', 'deferred']);

/** The Decisions screen (`/decisions`; contract §4.15; design §8.4, §8.19). */
export function Decisions() {
  const names = useDeviceNames();
  const inbox = useInbox();
  const [merge, keep] = useKept(decisionId);
  const awaiting = merge(inbox.data ?? [])
    .filter((d) => AWAITING.has(d.status))
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  return (
    <>
      <h1>Decisions</h1>
      <Section title="Waiting for you">
        <ErrorNote error={inbox.error} />
        {inbox.isPending && <Loading what="Loading decisions" />}
        {inbox.isSuccess && awaiting.length === 0 && <Empty>No decision is waiting for you.</Empty>}
        {awaiting.map((d) => (
          <DecisionCard key={d.decision_id} decision={d} names={names} onKeep={keep} />
        ))}
      </Section>
      <Answered names={names} />
    </>
  );
}
