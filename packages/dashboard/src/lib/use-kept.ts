/**
 * Rows the owner acted on stay on screen (design §8.3 held messages, §8.19 decisions): after
 * Approve / Deny the list refetches without the item, yet the owner should see its new status,
 * or the service's `{detail}` (e.g. 409 already decided) next to it. `keep` records the item's
 * latest known state; `merge` adds kept items to a fetched list, the kept state winning.
 */
import { useCallback, useState } from 'react';

/** `[merge, keep]` for items identified by `idOf` (design §8.3 held rows, §8.19 decision cards). */
export function useKept<T>(idOf: (item: T) => string): [(list: readonly T[]) => T[], (item: T) => void] {
  const [kept, setKept] = useState<ReadonlyMap<string, T>>(new Map());
  const keep = useCallback((item: T) => setKept((m) => new Map(m).set(idOf(item), item)), [idOf]);
  const merge = useCallback(
    (list: readonly T[]) => {
      const out = list.map((item) => kept.get(idOf(item)) ?? item);
      const seen = new Set(list.map(idOf));
      for (const [id, item] of kept) if (!seen.has(id)) out.push(item);
      return out;
    },
    [kept, idOf],
  );
  return [merge, keep];
}

/**
 * Run `call` and keep its answer; when it fails, keep `current` (so the item and its error stay
 * on screen) and rethrow (design §8.3, §8.19: a 409 shown in place).
 */
export async function keeping<T>(call: () => Promise<T>, keep: (item: T) => void, current: T): Promise<T> {
  try {
    const out = await call();
    keep(out);
    return out;
  } catch (err) {
    keep(current);
    throw err;
  }
}
