/**
 * Queries of the Decisions screen (contract §4.15; design §8.19). Keys start with the `decisions`
 * root (`lib/live.ts`), so `decision_created` / `decision_response` socket events refresh them;
 * the inbox also polls, since an expiry at the deadline sends the owner no event.
 */
import type { Decision } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';
import { recentAnswers, type Answer } from './answered';
import { knownDecisions, rememberDecisions } from './known';

const PAGE = 200;
const MAX_PAGES = 5;
/** How often the inbox refetches to notice expiries (ms). */
export const INBOX_POLL_MS = 30_000;

/** Decisions awaiting the owner (`listDecisions`: pending and deferred, oldest first), every page. */
export function useInbox() {
  const { client } = useOwner();
  return useQuery({
    queryKey: ['decisions', 'awaiting'],
    refetchInterval: INBOX_POLL_MS,
    queryFn: async (): Promise<Decision[]> => {
      const out: Decision[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await client.listDecisions({ limit: PAGE, ...(cursor ? { cursor } : {}) });
        out.push(...page.decisions);
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      rememberDecisions(out);
      return out;
    },
  });
}

/** The latest answered decisions (audit `decision.resolved` / `decision.expired` plus this browser's answers). */
export function useAnswered() {
  const { client } = useOwner();
  return useQuery({
    queryKey: ['decisions', 'answered'],
    queryFn: async (): Promise<{ answers: Answer[]; auditError?: unknown }> => {
      try {
        const [resolved, expired] = await Promise.all([
          client.listAuditEvents({ type: 'decision.resolved', limit: 50 }),
          client.listAuditEvents({ type: 'decision.expired', limit: 50 }),
        ]);
        return { answers: recentAnswers([...resolved.events, ...expired.events], knownDecisions()) };
      } catch (auditError) {
        // Without the audit trail, this browser's own answers still show.
        return { answers: recentAnswers([], knownDecisions()), auditError };
      }
    },
  });
}
