/**
 * Dispute resolution (platform operators; docs/decisions.md "Marketplace", "Platform operators
 * and operator tier grants"): disputes of every tenant (`GET /marketplace/disputes`, open ones
 * first by default), each with the parties, the reason, the evidence references and the parties'
 * notes; an open one is resolved with an outcome (refund, partial refund of an amount, none) and a
 * note (`POST /marketplace/disputes/{id}/resolve`). The service records every read and resolution
 * in both tenants' audit logs; operators see evidence references, never message content.
 */
import { DISPUTE_OUTCOMES, type Dispute, type DisputeListQuery } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Loading, Section, Time } from '../../components/ui';
import { formatCents } from '../../lib/format';
import { useFormDraft } from '../../lib/json-draft';
import { useRootMutation } from '../../lib/mutate';
import { EMPTY_RESOLVE_FORM, evidenceLabel, OUTCOME_LABELS, resolveBody } from '../../lib/operator';
import { usePaged } from '../../lib/paging';
import { Field, LoadMore } from '../form-parts';

/** Which party a tenant id is in this dispute. */
function party(d: Dispute, tenantId: string): string {
  return tenantId === d.renter_tenant_id ? 'renter' : tenantId === d.developer_tenant_id ? 'developer' : 'other tenant';
}

function Evidence({ refs }: { refs: Dispute['evidence_refs'] }) {
  if (refs.length === 0) return <span className="muted">no evidence references</span>;
  return (
    <ul style={{ margin: 0 }}>
      {refs.map((r) => (
        <li key={`${r.type}:${r.id}`}>
          <code className="wrap">{evidenceLabel(r)}</code>
        </li>
      ))}
    </ul>
  );
}

/** The resolution form of an open dispute (a draft per dispute). */
function Resolve({ d }: { d: Dispute }) {
  const { client } = useOwner();
  const [f, set, clear] = useFormDraft(`operator.resolve.${d.dispute_id}`, EMPTY_RESOLVE_FORM);
  const [problem, setProblem] = useState<string>();
  const resolve = useRootMutation('market', (body: Parameters<typeof client.resolveDispute>[1]) => client.resolveDispute(d.dispute_id, body));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = resolveBody(f);
    setProblem(r.ok ? undefined : r.error);
    if (r.ok) resolve.mutate(r.body, { onSuccess: clear });
  };
  const name = `outcome-${d.dispute_id}`;
  return (
    <form className="stack" onSubmit={submit} aria-label={`Resolve the dispute of rental ${d.rental_id}`}>
      <fieldset className="group">
        <legend>Outcome</legend>
        {DISPUTE_OUTCOMES.map((o) => (
          <label key={o} className="check">
            <input type="radio" name={name} value={o} checked={f.outcome === o} onChange={() => set({ outcome: o })} />
            {OUTCOME_LABELS[o]}
          </label>
        ))}
      </fieldset>
      {f.outcome === 'partial' && (
        <Field label="Amount to refund (USD)" hint="At most what is left of the charge.">
          {(id, hint) => <input id={id} inputMode="decimal" value={f.amount} aria-describedby={hint} onChange={(e) => set({ amount: e.target.value })} />}
        </Field>
      )}
      <Field label="Resolution note" hint="Both parties and their audit logs see it.">
        {(id, hint) => <textarea id={id} rows={2} maxLength={2000} value={f.note} aria-describedby={hint} onChange={(e) => set({ note: e.target.value })} />}
      </Field>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ErrorNote error={resolve.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={resolve.isPending}>
          {resolve.isPending ? 'Resolving…' : 'Resolve dispute'}
        </button>
      </div>
    </form>
  );
}

/** One dispute as the operator reviews it. */
function DisputeCard({ d }: { d: Dispute }) {
  const open = d.status === 'open';
  return (
    <li className="card" data-testid={`dispute-${d.dispute_id}`}>
      <div className="row">
        <strong>Rental {d.rental_id}</strong>
        <Badge tone={open ? 'warn' : 'info'}>{d.status}</Badge>
        <span className="muted">
          filed by the {party(d, d.filed_by_tenant_id)} <Time iso={d.created_at} />
        </span>
      </div>
      <dl className="kv">
        <dt>Renter tenant</dt>
        <dd>
          <code>{d.renter_tenant_id}</code>
        </dd>
        <dt>Developer tenant</dt>
        <dd>
          <code>{d.developer_tenant_id}</code>
        </dd>
        <dt>Reason</dt>
        <dd>{d.reason}</dd>
        <dt>Evidence</dt>
        <dd>
          <Evidence refs={d.evidence_refs} />
        </dd>
      </dl>
      {d.notes.length > 0 && (
        <>
          <h3>Notes from the parties</h3>
          <ul className="stack">
            {d.notes.map((n, i) => (
              <li key={i}>
                <span className="muted">
                  {party(d, n.author_tenant_id)}, <Time iso={n.created_at} />:
                </span>{' '}
                {n.note}
                {n.evidence_refs.length > 0 && <Evidence refs={n.evidence_refs} />}
              </li>
            ))}
          </ul>
        </>
      )}
      {open ? (
        <Resolve d={d} />
      ) : (
        <p role="status" data-testid={`resolution-${d.dispute_id}`}>
          Resolved <Time iso={d.resolved_at} />: <strong>{d.outcome ?? 'none'}</strong>
          {d.amount_cents !== null && `, ${formatCents(d.amount_cents)} refunded`}
          {d.resolution_note && ` — ${d.resolution_note}`}
        </p>
      )}
    </li>
  );
}

const VIEWS: { status: NonNullable<DisputeListQuery['status']>; label: string }[] = [
  { status: 'open', label: 'Open' },
  { status: 'resolved', label: 'Resolved' },
];

/** The dispute resolution section. */
export function OperatorDisputes() {
  const { client } = useOwner();
  const [status, setStatus] = useState<NonNullable<DisputeListQuery['status']>>('open');
  const list = usePaged(['market', 'operator-disputes', status], (cursor) => client.listDisputes({ status, ...(cursor ? { cursor } : {}) }), (p) => p.disputes);
  return (
    <Section title="Disputes">
      <p className="muted" style={{ margin: 0 }}>
        Disputes of every tenant. Each time this list or a dispute is read, the service records it in both parties&apos; audit logs. Evidence is referenced by trace or audit event id; message
        content is never shown here.
      </p>
      <fieldset className="row" style={{ border: 'none', padding: 0, margin: 0 }}>
        <legend style={{ float: 'left', marginRight: '0.5rem', fontWeight: 600 }}>Show</legend>
        {VIEWS.map((v) => (
          <label key={v.status} className="row" style={{ gap: '0.25rem', fontWeight: 400 }}>
            <input type="radio" name="dispute-status" value={v.status} checked={status === v.status} onChange={() => setStatus(v.status)} />
            {v.label}
          </label>
        ))}
      </fieldset>
      <ErrorNote error={list.error} />
      {list.isPending && <Loading what="Loading disputes" />}
      {!list.isPending && !list.error && list.items.length === 0 && <Empty>{status === 'open' ? 'No open disputes.' : 'No resolved disputes.'}</Empty>}
      {list.items.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {list.items.map((d) => (
            <DisputeCard key={d.dispute_id} d={d} />
          ))}
        </ul>
      )}
      <LoadMore paged={list} what="disputes" />
    </Section>
  );
}
