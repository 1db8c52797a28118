/**
 * Mutations of the governance screens (design §8.3, §8.5, §8.19): run a call, then invalidate
 * the query roots of `live.ts` whose data it changed, whether it succeeded or not (a 409 means
 * the screen is stale).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { QueryRoot } from './live';

/** `useMutation` of `fn` that refreshes `roots` (`live.ts`) when it settles (design §8.3, §8.5, §8.19). */
export function useAction<V, R>(fn: (vars: V) => Promise<R>, roots: readonly QueryRoot[]) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSettled: () => Promise.all(roots.map((root) => qc.invalidateQueries({ queryKey: [root] }))),
  });
}
