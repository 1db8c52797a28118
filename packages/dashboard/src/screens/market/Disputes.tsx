/**
 * Disputes (contract §2.13; design §8.25, §8.35): the tenant's disputes with their reason, evidence,
 * notes and outcome; either party adds a note (with evidence) while a dispute is open. A platform
 * operator resolves them.
 */
import type { Dispute } from '@parley/sdk';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Loading, Section, Time } from '../../components/ui';
import { formatCents, shortId, words } from '../../lib/format';
import { useRootMutation } from '../../lib/mutate';
import { usePaged } from '../../lib/paging';
import { LoadMore } from '../form-parts';
import { EvidenceNote } from './EvidenceNote';

function side(d: Dispute, tenantId: string): string {
  return tenantId === d.renter_tenant_id ? 'renter' : tenantId === d.developer_tenant_id ? 'developer' : 'operator';
}

/** One dispute as a list item: status, who filed it, reason, evidence, outcome once resolved, notes, and a note form while open. */
export function DisputeItem({ d }: { d: Dispute }) {
  const { client } = useOwner();
  const note = useRootMutation('market', (body: Parameters<typeof client.addDisputeNote>[1]) => client.addDisputeNote(d.dispute_id, body));
  const open = d.status === 'open';
  return (
    <li className="card">
      <div className="row">
        <strong>Rental {shortId(d.rental_id)}</strong>
        <Badge tone={open ? 'warn' : 'info'}>{d.status}</Badge>
        <span className="muted">
          filed by the {side(d, d.filed_by_tenant_id)}, <Time iso={d.created_at} />
        </span>
      </div>
      <p>{d.reason}</p>
      {d.evidence_refs.length > 0 && <p className="muted">Evidence: {d.evidence_refs.map((e) => `${words(e.type)} ${e.id}`).join(', ')}</p>}
      {!open && (
        <p>
          Outcome: <strong>{d.outcome ?? 'none'}</strong>
          {d.amount_cents !== null && `, ${formatCents(d.amount_cents)} refunded`}
          {d.resolution_note && ` — ${d.resolution_note}`}
        </p>
      )}
      {d.notes.length > 0 && (
        <ul>
          {d.notes.map((n, i) => (
            <li key={i}>
              <span className="muted">
                {side(d, n.author_tenant_id)}, <Time iso={n.created_at} />:
              </span>{' '}
              {n.note}
            </li>
          ))}
        </ul>
      )}
      {open && (
        <details>
          <summary>Add a note</summary>
          <EvidenceNote
            draftKey={`dispute-note.${d.dispute_id}`}
            label="Note"
            submitLabel="Add note"
            pending={note.isPending}
            error={note.error}
            onSubmit={(text, refs, done) => note.mutate({ note: text, ...(refs.length ? { evidence_refs: refs } : {}) }, { onSuccess: done })}
          />
        </details>
      )}
    </li>
  );
}

/** The "Disputes" section (`GET /marketplace/disputes`, `POST /marketplace/disputes/{id}/notes`). */
export function Disputes() {
  const { client } = useOwner();
  const disputes = usePaged(['market', 'disputes'], (cursor) => client.listDisputes(cursor ? { cursor } : {}), (p) => p.disputes);
  return (
    <Section title="Disputes">
      <ErrorNote error={disputes.error} />
      {disputes.isPending && <Loading />}
      {!disputes.isPending && disputes.items.length === 0 && <Empty>No disputes.</Empty>}
      {disputes.items.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {disputes.items.map((d) => (
            <DisputeItem key={d.dispute_id} d={d} />
          ))}
        </ul>
      )}
      <LoadMore paged={disputes} what="disputes" />
    </Section>
  );
}
