/**
 * The current time as React state, ticking every `intervalMs` (live countdowns of held messages
 * and decisions, design §8.3, §8.19).
 */
import { useEffect, useState } from 'react';

/** `Date.now()`, refreshed every `intervalMs` while the component is mounted (design §8.3, §8.19 countdowns). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
