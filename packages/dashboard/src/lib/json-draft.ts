/**
 * A whole form as one draft (`drafts.ts`): its values are kept as JSON under a
 * key in `sessionStorage`, so a session that expires mid-form returns to it with what was typed.
 */
import { useCallback, useMemo } from 'react';
import { useDraft } from './drafts';

/** Read a JSON draft over `initial`: the draft's keys win, a missing or unreadable draft gives `initial`. */
export function parseJsonDraft<T extends object>(raw: string, initial: T): T {
  if (raw === '') return initial;
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...initial, ...(parsed as Partial<T>) } : initial;
  } catch {
    return initial;
  }
}

/** `[values, update(patch), clear]` of the form draft under `key`, starting from `initial`. */
export function useFormDraft<T extends object>(key: string, initial: T): [T, (patch: Partial<T>) => void, () => void] {
  const [raw, setRaw, clear] = useDraft(key);
  const values = useMemo(() => parseJsonDraft(raw, initial), [raw, initial]);
  const update = useCallback((patch: Partial<T>) => setRaw(JSON.stringify({ ...values, ...patch })), [values, setRaw]);
  return [values, update, clear];
}
