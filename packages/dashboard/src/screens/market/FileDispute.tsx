/**
 * Filing a dispute on an active or suspended rental (either party): the reason, evidence
 * references (trace ids or audit event ids, comma-separated) and an optional first note —
 * `POST /marketplace/rentals/{id}/dispute {reason, evidence_refs}`, then the note with
 * `POST /marketplace/disputes/{id}/notes` (the filing body has no note). A platform operator
 * reviews the evidence against the SLA terms and resolves it.
 */
import type { Dispute, Rental } from '@parley/sdk';
import type { FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ErrorNote } from '../../components/ui';
import { useDraft } from '../../lib/drafts';
import { useRootMutation } from '../../lib/mutate';
import { Field } from '../form-parts';
import { evidenceRefs } from './EvidenceNote';

/** What filing sends: the dispute body and the optional note. */
export interface DisputeFiling {
  reason: string;
  evidence: string;
  note: string;
}

/** The dispute form of rental `r`; `onFiled` gets the filed dispute. */
export function FileDispute({ r, onFiled }: { r: Pick<Rental, 'rental_id'>; onFiled?: (d: Dispute) => void }) {
  const { client } = useOwner();
  const key = `dispute.${r.rental_id}`;
  const [reason, setReason, clearReason] = useDraft(`${key}.text`);
  const [evidence, setEvidence, clearEvidence] = useDraft(`${key}.refs`);
  const [note, setNote, clearNote] = useDraft(`${key}.note`);
  const file = useRootMutation('market', async (f: DisputeFiling) => {
    const refs = evidenceRefs(f.evidence);
    const filed = await client.fileDispute(r.rental_id, { reason: f.reason, ...(refs.length ? { evidence_refs: refs } : {}) });
    return f.note ? client.addDisputeNote(filed.dispute_id, { note: f.note }) : filed;
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    file.mutate(
      { reason: reason.trim(), evidence, note: note.trim() },
      {
        onSuccess: (d) => {
          clearReason();
          clearEvidence();
          clearNote();
          onFiled?.(d);
        },
      },
    );
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="File a dispute">
      <Field label="Reason">{(id) => <textarea id={id} rows={2} required maxLength={2000} value={reason} onChange={(e) => setReason(e.target.value)} />}</Field>
      <Field label="Evidence (optional)" hint="comma-separated trace ids or audit event ids">
        {(id, hintId) => <input id={id} aria-describedby={hintId} value={evidence} onChange={(e) => setEvidence(e.target.value)} />}
      </Field>
      <Field label="Note for the reviewer (optional)">{(id) => <textarea id={id} rows={2} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />}</Field>
      <ErrorNote error={file.error} />
      <div className="row">
        <button type="submit" disabled={file.isPending || reason.trim() === ''}>
          File dispute
        </button>
      </div>
    </form>
  );
}
