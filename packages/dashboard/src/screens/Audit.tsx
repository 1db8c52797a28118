/**
 * Audit log (SPEC §4.14; DESIGN §8.10, §8.22): the tenant's hash-chained events, newest first,
 * filtered by type, actor, subject and time, paged with "Load more"; "Verify chain" recomputes
 * the chain and names the first broken link.
 */
import { AUDIT_EVENT_TYPES, type AuditEvent } from '@parley/sdk';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../app/owner-context';
import { Badge, Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';
import { auditQuery, describeVerdict, NO_AUDIT_FILTERS, type AuditFilters } from '../lib/audit';
import { readDraft } from '../lib/drafts';
import { parseJsonDraft, useFormDraft } from '../lib/json-draft';
import { usePaged } from '../lib/paging';
import { Field, LoadMore } from './form-parts';

const FILTER_DRAFT = 'audit.filters';

function Filters({ onApply }: { onApply: (f: AuditFilters) => void }) {
  const [f, set, clear] = useFormDraft(FILTER_DRAFT, NO_AUDIT_FILTERS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(f);
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Filter events">
      <div className="fields">
        <Field label="Type">
          {(id) => (
            <select id={id} value={f.type} onChange={(e) => set({ type: e.target.value })}>
              <option value="">any type</option>
              {AUDIT_EVENT_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Actor">{(id) => <input id={id} value={f.actor} maxLength={200} onChange={(e) => set({ actor: e.target.value })} />}</Field>
        <Field label="Subject">{(id) => <input id={id} value={f.subject} maxLength={200} onChange={(e) => set({ subject: e.target.value })} />}</Field>
        <Field label="Since (local time)">{(id) => <input id={id} type="datetime-local" value={f.since} onChange={(e) => set({ since: e.target.value })} />}</Field>
        <Field label="Until (local time)">{(id) => <input id={id} type="datetime-local" value={f.until} onChange={(e) => set({ until: e.target.value })} />}</Field>
      </div>
      <div className="row">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button
          type="button"
          onClick={() => {
            clear();
            onApply(NO_AUDIT_FILTERS);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function hasData(data: unknown): boolean {
  return data !== null && data !== undefined && !(typeof data === 'object' && Object.keys(data).length === 0);
}

function EventRow({ e }: { e: AuditEvent }) {
  return (
    <tr>
      <td>
        <Time iso={e.created_at} />
      </td>
      <td>
        <code>{e.type}</code>
      </td>
      <td>{e.actor}</td>
      <td>{e.subject ?? <span className="muted">—</span>}</td>
      <td>
        {hasData(e.data) ? (
          <details>
            <summary>Details</summary>
            <pre>{JSON.stringify(e.data, null, 2)}</pre>
          </details>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td>
        <code title={e.hash}>{e.hash.slice(0, 12)}…</code>
      </td>
    </tr>
  );
}

function Verify() {
  const { client } = useOwner();
  const verify = useMutation({ mutationFn: () => client.verifyAudit() });
  const v = verify.data;
  return (
    <Section
      title="Chain integrity"
      actions={
        <button type="button" className="primary" onClick={() => verify.mutate()} disabled={verify.isPending}>
          Verify chain
        </button>
      }
    >
      <p className="muted">Each event's hash covers the one before it; recomputing the chain shows whether any stored event was changed, removed or reordered.</p>
      <ErrorNote error={verify.error} />
      {verify.isPending && <Loading what="Recomputing the chain" />}
      {v && (
        <p data-testid="audit-verdict" role="status">
          <Badge tone={v.valid ? 'good' : 'bad'}>{v.valid ? '✓ intact' : '✗ broken'}</Badge> {describeVerdict(v)}
        </p>
      )}
    </Section>
  );
}

/** The audit log screen (SPEC §4.14; DESIGN §8.10, §8.22). */
export function Audit() {
  const { client } = useOwner();
  const [filters, setFilters] = useState<AuditFilters>(() => parseJsonDraft(readDraft(FILTER_DRAFT), NO_AUDIT_FILTERS));
  const query = auditQuery(filters);
  const events = usePaged(['audit', 'events', query], (cursor) => client.listAuditEvents({ ...query, ...(cursor ? { cursor } : {}) }), (p) => p.events);
  return (
    <>
      <h1>Audit log</h1>
      <Verify />
      <Section title="Events">
        <Filters onApply={setFilters} />
        <ErrorNote error={events.error} />
        {events.isPending && <Loading />}
        {!events.isPending && events.items.length === 0 && <Empty>No events match.</Empty>}
        {events.items.length > 0 && (
          <table>
            <Head columns={['Time', 'Type', 'Actor', 'Subject', 'Data', 'Hash']} />
            <tbody>
              {events.items.map((e) => (
                <EventRow key={e.event_id} e={e} />
              ))}
            </tbody>
          </table>
        )}
        <LoadMore paged={events} what="events" />
      </Section>
    </>
  );
}
