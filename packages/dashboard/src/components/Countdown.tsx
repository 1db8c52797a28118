/**
 * A live countdown to a deadline (design §8.3 held-message expiry, §8.19 decision deadlines):
 * `role="timer"` text such as "4 min 12 s left", "expired" once past, updated every second.
 * The deadline itself is in the tooltip.
 */
import { remaining } from '../lib/countdown';
import { useNow } from '../lib/use-now';

/** Time left until `deadline` (ISO 8601; design §8.3, §8.19); "No deadline" when there is none. */
export function Countdown({ deadline, intervalMs = 1000 }: { deadline: string | null | undefined; intervalMs?: number }) {
  const now = useNow(intervalMs);
  if (!deadline) return <span className="muted">No deadline</span>;
  const left = remaining(deadline, now);
  return (
    <span role="timer" title={new Date(deadline).toLocaleString()} className={left.expired ? 'muted' : undefined} data-expired={left.expired}>
      {left.text}
    </span>
  );
}
