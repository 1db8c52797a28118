/**
 * Mutations of the governance screens (issue 13): every change refetches the data under its
 * query root (`live.ts`), whether it succeeded or failed (a 409 also means the data moved).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { QueryRoot } from './live';

/** A mutation running `fn` that invalidates the queries under `root` when it settles. */
export function useRootMutation<V, R>(root: QueryRoot, fn: (vars: V) => Promise<R>) {
  const qc = useQueryClient();
  return useMutation({ mutationFn: fn, onSettled: () => qc.invalidateQueries({ queryKey: [root] }) });
}
