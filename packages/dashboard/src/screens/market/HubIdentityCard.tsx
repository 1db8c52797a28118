/**
 * One hub identity of the tenant as its developer manages it (docs/decisions.md "Hub
 * capabilities, profiles, search and certification"; "Platform operators and operator tier
 * grants"): the public profile as anyone reads it (`GET /hub/{hub_address}/profile`: tier, who
 * set it, score, capabilities, activity), the capability records, the profile edit
 * (`PATCH .../profile`), one more capability, and a certification run (`POST
 * /hub/identities/{id}/certify`) whose checks say what a listing still needs.
 */
import type { CertifyResult, HubIdentity, HubProfile } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Head, Time } from '../../components/ui';
import { words } from '../../lib/format';
import { canList, profilePatch, tierText } from '../../lib/hub-form';
import { useRootMutation } from '../../lib/mutate';
import { Field } from '../form-parts';
import { AddCapability } from './CapabilityFields';

const TIER_TONE = { unverified: 'neutral', certified: 'good', enterprise: 'info' } as const;

function EditProfile({ profile, onDone }: { profile: HubProfile; onDone: () => void }) {
  const { client } = useOwner();
  const [v, setV] = useState({ displayName: profile.display_name, description: profile.description ?? '' });
  const [invalid, setInvalid] = useState<string>();
  const save = useRootMutation('market', (body: Parameters<typeof client.updateHubProfile>[1]) => client.updateHubProfile(profile.hub_address, body));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = profilePatch(profile, v);
    setInvalid(r.ok ? undefined : r.error);
    if (r.ok) save.mutate(r.body, { onSuccess: onDone });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={`Edit the profile of ${profile.hub_address}`}>
      <Field label="Display name">{(id) => <input id={id} value={v.displayName} required maxLength={100} onChange={(e) => setV({ ...v, displayName: e.target.value })} />}</Field>
      <Field label="Description" hint="empty clears it">
        {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={2} maxLength={1000} value={v.description} onChange={(e) => setV({ ...v, description: e.target.value })} />}
      </Field>
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save profile
        </button>
      </div>
    </form>
  );
}

function Certify({ identity }: { identity: HubIdentity }) {
  const { client } = useOwner();
  const run = useRootMutation('market', () => client.certifyHubIdentity(identity.id));
  const r: CertifyResult | undefined = run.data;
  return (
    <div className="stack">
      <div className="row">
        <button type="button" onClick={() => run.mutate(undefined)} disabled={run.isPending}>
          Run certification
        </button>
      </div>
      <ErrorNote error={run.error} />
      {r && (
        <ul aria-label={`Certification checks of ${identity.hub_address}`} data-testid="certify-checks">
          <li>
            Tier after the run: <strong>{r.tier}</strong>
            {r.upgraded ? ' (raised)' : ' (unchanged)'}
          </li>
          {r.checks.map((c) => (
            <li key={c.check}>
              {c.passed ? '✓' : '✗'} {words(c.check)}: {c.detail}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The card of `identity`; `agentName` names its bound agent (undefined: none bound). */
export function HubIdentityCard({ identity, agentName }: { identity: HubIdentity; agentName: string | undefined }) {
  const { client } = useOwner();
  const headingId = useId();
  const address = identity.hub_address;
  const profile = useQuery({ queryKey: ['market', 'hub-profile', address], queryFn: () => client.getHubProfile(address) });
  const capabilities = useQuery({ queryKey: ['market', 'hub-capabilities', address], queryFn: async () => (await client.listHubCapabilities(address)).capabilities });
  const [editing, setEditing] = useState(false);
  const p = profile.data;
  const tier = p ?? identity;
  return (
    <article className="card" aria-labelledby={headingId} data-testid={`hub-identity-${address}`}>
      <div className="card-head">
        <h3 id={headingId}>{p?.display_name ?? identity.display_name}</h3>
        <Badge tone={TIER_TONE[tier.trust_tier]} label={`trust tier ${tierText(tier)}`}>
          {tierText(tier)}
        </Badge>
      </div>
      <dl className="kv">
        <dt>Hub address</dt>
        <dd>
          <code>{address}</code> · <code className="wrap">{identity.did}</code>
        </dd>
        <dt>Agent</dt>
        <dd>{agentName ?? <span className="muted">not bound to an agent</span>}</dd>
        <dt>Description</dt>
        <dd>{(p?.description ?? identity.description) || <span className="muted">none</span>}</dd>
        <dt>Trust score</dt>
        <dd>{p ? p.trust_score.toFixed(2) : '…'}</dd>
        <dt>Public capabilities</dt>
        <dd>{(p?.capabilities ?? identity.capabilities).join(', ') || <span className="muted">none</span>}</dd>
        <dt>Enrolled</dt>
        <dd>
          <Time iso={p?.enrolled_at} />
        </dd>
        <dt>Last active</dt>
        <dd>
          <Time iso={p?.last_active} />
        </dd>
      </dl>
      <ErrorNote error={profile.error ?? capabilities.error} />
      {p && !canList(p) && <p className="notice">Publishing a listing needs a certified identity: run certification below, or ask a platform operator for a review.</p>}
      <h4>Capabilities</h4>
      {capabilities.data?.length === 0 && <Empty>No capability records yet: add one so renters know its input and service levels.</Empty>}
      {capabilities.data && capabilities.data.length > 0 && (
        <table>
          <Head columns={['Capability', 'Version', 'Service levels', 'Certified as']} />
          <tbody>
            {capabilities.data.map((c) => (
              <tr key={`${c.name}@${c.version}`}>
                <td>
                  <strong>{c.name}</strong>
                  {c.description && <div className="muted">{c.description}</div>}
                </td>
                <td>{c.version}</td>
                <td>{c.sla ? `p95 ${c.sla.latency_p95_ms} ms · uptime ${(c.sla.uptime_sla * 100).toFixed(2)}%` : <span className="muted">none promised</span>}</td>
                <td>{c.certification_tier}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="row">
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)} disabled={!p}>
          {editing ? 'Close profile editor' : 'Edit profile'}
        </button>
      </div>
      {editing && p && <EditProfile profile={p} onDone={() => setEditing(false)} />}
      <details>
        <summary>Add a capability</summary>
        <AddCapability hubAddress={address} />
      </details>
      <Certify identity={identity} />
    </article>
  );
}
