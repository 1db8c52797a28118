/**
 * Certification review (platform operators; docs/decisions.md "Platform operators and operator
 * tier grants"): hub identities of every tenant (`GET /hub/review`), filtered by a part of the
 * address or name and by tier, each with its profile, trust and capabilities; after a review the
 * operator grants or lowers its tier with a reason and an optional expiry
 * (`POST /hub/identities/{id}/tier`), recorded in the audit log of the identity's tenant.
 */
import { TRUST_TIERS, type HubReviewEntry, type HubReviewQuery, type TrustTier } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ago, Badge, Empty, ErrorNote, Loading, Section, Time } from '../../components/ui';
import { useFormDraft } from '../../lib/json-draft';
import { useAction } from '../../lib/use-action';
import { EMPTY_GRANT_FORM, grantBody } from '../../lib/operator';
import { usePaged } from '../../lib/paging';
import { formatScore, tierTone } from '../../lib/trust-view';
import { EnumSelect, Field, LoadMore } from '../form-parts';

/** The grant form of one identity (a draft per identity, so an expired session keeps it). */
function GrantTier({ identity }: { identity: HubReviewEntry }) {
  const { client } = useOwner();
  const [f, set, clear] = useFormDraft(`operator.grant.${identity.id}`, EMPTY_GRANT_FORM);
  const [problem, setProblem] = useState<string>();
  // A tier change also changes the owner-side lists of hub identities (query root `devices`).
  const grant = useAction((body: Parameters<typeof client.grantHubIdentityTier>[1]) => client.grantHubIdentityTier(identity.id, body), ['trust', 'devices']);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = grantBody(f);
    setProblem(r.ok ? undefined : r.error);
    if (r.ok) grant.mutate(r.body, { onSuccess: clear });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={`Set the tier of ${identity.hub_address}`}>
      <div className="fields">
        <Field label="Tier">{(id) => <EnumSelect id={id} options={TRUST_TIERS} value={f.tier} onChange={(tier: TrustTier) => set({ tier })} />}</Field>
        <Field label="Expires (local time, optional)" hint="Empty: the grant holds until real telemetry scores below the tier, or another grant replaces it.">
          {(id, hint) => <input id={id} type="datetime-local" value={f.expires} aria-describedby={hint} onChange={(e) => set({ expires: e.target.value })} />}
        </Field>
      </div>
      <Field label="Reason" hint="What the review found; recorded in the audit log of the identity's tenant.">
        {(id, hint) => <textarea id={id} rows={2} maxLength={500} value={f.reason} aria-describedby={hint} onChange={(e) => set({ reason: e.target.value })} />}
      </Field>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ErrorNote error={grant.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={grant.isPending}>
          {grant.isPending ? 'Saving…' : 'Set tier'}
        </button>
        {grant.data && (
          <span role="status" data-testid={`granted-${identity.id}`}>
            {identity.hub_address} is now <strong>{grant.data.trust_tier}</strong> (operator grant).
          </span>
        )}
      </div>
    </form>
  );
}

/** One identity under review: profile, trust, capabilities, the current grant, and the grant form. */
function IdentityCard({ identity: h }: { identity: HubReviewEntry }) {
  return (
    <li className="card" data-testid={`review-${h.hub_address}`}>
      <div className="row">
        <strong>{h.display_name}</strong>
        <code>{h.hub_address}</code>
        <Badge tone={tierTone(h.trust_tier)} label={`tier ${h.trust_tier}`}>
          {h.trust_tier}
        </Badge>
        <span className="muted">{h.tier_source === 'operator' ? 'granted by an operator' : 'computed'}</span>
      </div>
      {h.description && <p style={{ margin: 0 }}>{h.description}</p>}
      <dl className="kv">
        <dt>DID</dt>
        <dd>
          <code className="wrap">{h.did}</code>
        </dd>
        <dt>Trust score</dt>
        <dd>{formatScore(h.trust_score)}</dd>
        <dt>Capabilities</dt>
        <dd>{h.capabilities.length ? h.capabilities.join(', ') : <span className="muted">none</span>}</dd>
        <dt>Enrolled</dt>
        <dd>
          <Time iso={h.enrolled_at} />
        </dd>
        <dt>Last active</dt>
        <dd>{h.last_active ? ago(h.last_active) : 'never'}</dd>
        {h.tier_source === 'operator' && (
          <>
            <dt>Current grant</dt>
            <dd>
              {h.tier_grant_reason ?? '—'}
              {h.tier_grant_expires_at ? (
                <>
                  {' '}
                  (until <Time iso={h.tier_grant_expires_at} />)
                </>
              ) : (
                ' (no end)'
              )}
            </dd>
          </>
        )}
      </dl>
      <details>
        <summary>Set tier of {h.hub_address}</summary>
        <GrantTier identity={h} />
      </details>
    </li>
  );
}

interface ReviewFilters {
  query: string;
  tier: TrustTier | '';
}

/** The review list's query of the filters (empty fields left out). */
function reviewQuery(f: ReviewFilters): HubReviewQuery {
  return { ...(f.query.trim() ? { query: f.query.trim() } : {}), ...(f.tier ? { tier: f.tier } : {}) };
}

/** The certification review section. */
export function Certification() {
  const { client } = useOwner();
  const [form, setForm] = useState<ReviewFilters>({ query: '', tier: '' });
  const [applied, setApplied] = useState<HubReviewQuery>({});
  const list = usePaged(['trust', 'operator-review', applied], (cursor) => client.listHubReview({ ...applied, ...(cursor ? { cursor } : {}) }), (p) => p.identities);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setApplied(reviewQuery(form));
  };
  return (
    <Section title="Certification review">
      <p className="muted" style={{ margin: 0 }}>
        Hub identities of every tenant, newest first. Granting a tier lets a new agent be listed before it has a week of telemetry; lowering one takes effect at once. A grant holds until real
        telemetry scores below the tier, it expires, or another grant replaces it.
      </p>
      <form className="row" style={{ alignItems: 'end' }} onSubmit={submit} aria-label="Filter identities">
        <Field label="Address or name">{(id) => <input id={id} value={form.query} maxLength={100} onChange={(e) => setForm({ ...form, query: e.target.value })} />}</Field>
        <Field label="Tier">
          {(id) => (
            <select id={id} value={form.tier} onChange={(e) => setForm({ ...form, tier: e.target.value as ReviewFilters['tier'] })}>
              <option value="">any tier</option>
              {TRUST_TIERS.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={list.error} />
      {list.isPending && <Loading what="Loading identities" />}
      {!list.isPending && !list.error && list.items.length === 0 && <Empty>No identity matches.</Empty>}
      {list.items.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {list.items.map((h) => (
            <IdentityCard key={h.id} identity={h} />
          ))}
        </ul>
      )}
      <LoadMore paged={list} what="identities" />
    </Section>
  );
}
