/**
 * Drafts that outlive a sign-in: what the owner types in a form is mirrored to
 * `sessionStorage` under a key, so a session that expires mid-sentence sends them to sign-in and
 * back without losing it. A draft is cleared when its form is submitted successfully.
 */
import { useCallback, useState } from 'react';

const PREFIX = 'parley.draft.';

export function readDraft(key: string): string {
  return sessionStorage.getItem(PREFIX + key) ?? '';
}

export function writeDraft(key: string, value: string): void {
  if (value === '') sessionStorage.removeItem(PREFIX + key);
  else sessionStorage.setItem(PREFIX + key, value);
}

/** `[value, setValue, clear]` of the draft under `key` (a stable name of the form and field). */
export function useDraft(key: string): [string, (v: string) => void, () => void] {
  const [value, setState] = useState(() => readDraft(key));
  const set = useCallback(
    (v: string) => {
      writeDraft(key, v);
      setState(v);
    },
    [key],
  );
  const clear = useCallback(() => set(''), [set]);
  return [value, set, clear];
}
