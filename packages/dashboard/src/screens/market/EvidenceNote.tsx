/**
 * The text form shared by filing a dispute and adding a note to one (contract §2.13; design §8.25,
 * §8.35): the text and optional evidence references (trace ids of 32 hex, or audit event ids).
 */
import type { EvidenceRef } from '@parley/sdk';
import type { FormEvent } from 'react';
import { ErrorNote } from '../../components/ui';
import { useDraft } from '../../lib/drafts';
import { splitList } from '../../lib/format';
import { Field } from '../form-parts';

/** Evidence ids typed comma-separated: 32 hex is a trace id, anything else an audit event id (design §8.35). */
export function evidenceRefs(text: string): EvidenceRef[] {
  return splitList(text).map((id) => ({ type: /^[0-9a-f]{32}$/i.test(id) ? 'trace' : 'audit_event', id }));
}

/** A note with evidence; `onSubmit(text, refs, done)` sends it, `done` clears the drafts. */
export function EvidenceNote({ draftKey, label, submitLabel, pending, error, onSubmit }: {
  draftKey: string;
  label: string;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (text: string, refs: EvidenceRef[], done: () => void) => void;
}) {
  const [text, setText, clearText] = useDraft(`${draftKey}.text`);
  const [refs, setRefs, clearRefs] = useDraft(`${draftKey}.refs`);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit(text.trim(), evidenceRefs(refs), () => {
      clearText();
      clearRefs();
    });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <Field label={label}>{(id) => <textarea id={id} rows={2} required maxLength={2000} value={text} onChange={(e) => setText(e.target.value)} />}</Field>
      <Field label="Evidence (optional)" hint="comma-separated trace ids or audit event ids">
        {(id, hintId) => <input id={id} aria-describedby={hintId} value={refs} onChange={(e) => setRefs(e.target.value)} />}
      </Field>
      <ErrorNote error={error} />
      <div className="row">
        <button type="submit" disabled={pending || text.trim() === ''}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
