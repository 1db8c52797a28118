/**
 * Form and list parts shared by the governance screens (every input labelled, native
 * controls only, so each screen works by keyboard and passes axe-core): a labelled field, a
 * checkbox group in a fieldset, and the "Load more" button of cursor-paged lists (design §8.22).
 */
import { useId, type ReactNode } from 'react';
import type { Paged } from '../lib/paging';
import { words } from '../lib/format';
import './forms.css';

/** A label above its control; `children(id, hintId)` renders the control with that id. */
export function Field({ label, hint, children }: { label: string; hint?: string; children: (id: string, hintId: string | undefined) => ReactNode }) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, hintId)}
      {hint && (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      )}
    </div>
  );
}

/** A group of checkboxes (a list condition: any of the checked values). */
export function CheckboxGroup<T extends string>({ legend, options, value, onChange }: { legend: string; options: readonly T[]; value: readonly T[]; onChange: (next: T[]) => void }) {
  return (
    <fieldset className="group">
      <legend>{legend}</legend>
      <div className="checks">
        {options.map((o) => (
          <label key={o}>
            <input type="checkbox" checked={value.includes(o)} onChange={(e) => onChange(e.target.checked ? [...value, o] : value.filter((v) => v !== o))} />
            {words(o)}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** A `<select>` of enum values shown in words. */
export function EnumSelect<T extends string>({ id, options, value, onChange, labels }: { id: string; options: readonly T[]; value: T; onChange: (v: T) => void; labels?: Partial<Record<T, string>> }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
      {options.map((o) => (
        <option key={o} value={o}>
          {labels?.[o] ?? words(o)}
        </option>
      ))}
    </select>
  );
}

/** "Load more" under a cursor-paged list, while there is a next page. */
export function LoadMore({ paged, what }: { paged: Paged<unknown>; what: string }) {
  if (!paged.hasMore) return null;
  return (
    <button type="button" onClick={paged.loadMore} disabled={paged.loadingMore}>
      {paged.loadingMore ? 'Loading…' : `Load more ${what}`}
    </button>
  );
}
