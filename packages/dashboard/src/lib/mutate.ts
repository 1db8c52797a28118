/**
 * Mutations of the governance screens: every change refetches the data under its
 * query root (`live.ts`), whether it succeeded or failed (a 409 also means the data moved).
 */
import type { QueryRoot } from './live';
import { useAction } from './use-action';

/** {@link useAction} for one root (the common case). */
export function useRootMutation<V, R>(root: QueryRoot, fn: (vars: V) => Promise<R>) {
  return useAction(fn, [root]);
}
