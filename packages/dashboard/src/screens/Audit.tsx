/**
 * Audit log (contract §4.14; design §8.10, §8.22, §8.33): the tenant's hash-chained events, newest
 * first, filtered by type, actor, subject and time, paged with "Load more"; "Verify chain"
 * recomputes the chain and names the first broken link. The transparency log's checks run in the
 * page with the SDK's verifier (lib/transparency.ts): the latest signed checkpoint against the key
 * pinned in this browser and the checkpoint it verified before ("verified"), and each event's
 * inclusion proof, verified before its bundle is offered for download. Actors and subjects show
 * the name of the agent, device, hub identity, API key or owner next to the raw id (lib/audit-names.ts).
 */
import { AUDIT_EVENT_TYPES, type AuditEvent } from '@parley/sdk';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { useOwner } from '../app/owner-context';
import { Badge, CopyButton, describeError, Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';
import { auditQuery, describeLogVerdict, describeVerdict, NO_AUDIT_FILTERS, type AuditFilters } from '../lib/audit';
import { auditLabel, useAuditNames, type AuditNames, type AuditNameSources } from '../lib/audit-names';
import { downloadText } from '../lib/download';
import { checkLog, localPinStore, proveEvent, trustNewKey, type PinStore } from '../lib/transparency';
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

/** An event's inclusion proof: verified in the page, then offered as a file (the event, its audit path, the checkpoint). */
function ProofCell({ e, store }: { e: AuditEvent; store: PinStore }) {
  const { client } = useOwner();
  const prove = useMutation({ mutationFn: () => proveEvent(client, store, e.event_id) });
  const p = prove.data;
  if (p) {
    return (
      <span className="row" data-testid={`proof-${e.event_id}`}>
        <Badge tone="good" label={`verified in the log of ${p.treeSize} events`}>
          ✓ verified
        </Badge>
        <button type="button" onClick={() => downloadText(`audit-event-${e.event_id}.json`, 'application/json', JSON.stringify(p.bundle, null, 2))}>
          Download proof
        </button>
      </span>
    );
  }
  return (
    <span className="row" data-testid={`proof-${e.event_id}`}>
      <button type="button" onClick={() => prove.mutate()} disabled={prove.isPending} aria-label={`Verify proof of event ${e.event_id}`}>
        Verify proof
      </button>
      {prove.error ? (
        <Badge tone="bad" label={describeError(prove.error)}>
          ✗ {describeError(prove.error)}
        </Badge>
      ) : null}
    </span>
  );
}

/** An actor or subject: its name when known, with the raw value under it. */
function Named({ value, names, self }: { value: string | null; names: AuditNames; self: AuditNameSources['self'] }) {
  if (!value) return <span className="muted">—</span>;
  const label = auditLabel(names, value, self);
  if (!label) return <code className="wrap">{value}</code>;
  return (
    <span className="stack" style={{ gap: 0 }} data-testid="audit-name">
      <span>{label}</span>
      <code className="muted wrap">{value}</code>
    </span>
  );
}

function EventRow({ e, store, names, self }: { e: AuditEvent; store: PinStore; names: AuditNames; self: AuditNameSources['self'] }) {
  return (
    <tr>
      <td>
        <Time iso={e.created_at} />
      </td>
      <td>
        <code>{e.type}</code>
      </td>
      <td>
        <Named value={e.actor} names={names} self={self} />
      </td>
      <td>
        <Named value={e.subject ?? null} names={names} self={self} />
      </td>
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
      <td>
        <ProofCell e={e} store={store} />
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

/** The transparency log: the latest checkpoint verified against the pinned key and the one verified before. */
function TransparencyLog({ store }: { store: PinStore }) {
  const { client } = useOwner();
  // Under the 'audit' root: re-checked whenever the log may have grown (live owner events).
  const check = useQuery({ queryKey: ['audit', 'transparency'], queryFn: () => checkLog(client, store) });
  const v = check.data;
  return (
    <Section
      title="Transparency log"
      actions={
        <button type="button" onClick={() => void check.refetch()} disabled={check.isFetching}>
          Check again
        </button>
      }
    >
      <p className="muted">
        The service signs checkpoints of this log with its audit-log key. This browser pinned that key the first time it saw it, and checks that each new checkpoint is signed by it and extends the
        checkpoint it verified before, so history it has seen cannot be rewritten or dropped unnoticed.
      </p>
      <ErrorNote error={check.error} />
      {check.isPending && <Loading what="Verifying the log" />}
      {v && (
        <div role="status" data-testid="log-verdict">
          <p>
            <Badge tone={v.verified ? 'good' : 'bad'}>{v.verified ? '✓ verified' : '✗ not verified'}</Badge> {describeLogVerdict(v)}
          </p>
          {!v.verified && v.newKey && (
            <p>
              The service now signs with another key.{' '}
              <button
                type="button"
                onClick={() => {
                  trustNewKey(store, v.newKey!);
                  void check.refetch();
                }}
              >
                Trust the new key
              </button>
            </p>
          )}
          <details>
            <summary>Pinned key</summary>
            <code className="wrap">{v.vkey}</code> <CopyButton text={v.vkey} />
          </details>
        </div>
      )}
    </Section>
  );
}

/** The audit log screen (contract §4.14; design §8.10, §8.22, §8.33). */
export function Audit() {
  const { client, deviceId } = useOwner();
  const store = useMemo(() => localPinStore(deviceId), [deviceId]);
  const [filters, setFilters] = useState<AuditFilters>(() => parseJsonDraft(readDraft(FILTER_DRAFT), NO_AUDIT_FILTERS));
  const query = auditQuery(filters);
  const { names, self } = useAuditNames();
  const events = usePaged(['audit', 'events', query], (cursor) => client.listAuditEvents({ ...query, ...(cursor ? { cursor } : {}) }), (p) => p.events);
  return (
    <>
      <h1>Audit log</h1>
      <Verify />
      <TransparencyLog store={store} />
      <Section title="Events">
        <Filters onApply={setFilters} />
        <ErrorNote error={events.error} />
        {events.isPending && <Loading />}
        {!events.isPending && events.items.length === 0 && <Empty>No events match.</Empty>}
        {events.items.length > 0 && (
          <table>
            <Head columns={['Time', 'Type', 'Actor', 'Subject', 'Data', 'Hash', 'Proof']} />
            <tbody>
              {events.items.map((e) => (
                <EventRow key={e.event_id} e={e} store={store} names={names} self={self} />
              ))}
            </tbody>
          </table>
        )}
        <LoadMore paged={events} what="events" />
      </Section>
    </>
  );
}
