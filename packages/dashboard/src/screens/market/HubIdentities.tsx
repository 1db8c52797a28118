/**
 * Hub identities, the agent developer's first marketplace step (docs/decisions.md "Hub-address
 * registry", "Marketplace listings"): a listing rents out a hub identity, so the section lists the
 * tenant's identities (`GET /hub/identities`), registers one for an agent, and manages each
 * (profile, capabilities, certification; HubIdentityCard.tsx).
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useOwner } from '../../app/owner-context';
import { Empty, ErrorNote, Loading, Section } from '../../components/ui';
import { readDraft } from '../../lib/drafts';
import { nameOf } from '../../lib/names';
import { useDeviceNames } from '../../lib/use-devices';
import { HubIdentityCard } from './HubIdentityCard';
import { RegisterIdentity, type Registered } from './HubRegister';

/** The "Hub identities" section of the Marketplace screen. */
export function HubIdentities() {
  const { client } = useOwner();
  const identities = useQuery({ queryKey: ['market', 'identities'], queryFn: async () => (await client.listHubIdentities()).identities });
  const names = useDeviceNames();
  const [registering, setRegistering] = useState(() => readDraft('hub.new') !== '');
  const [done, setDone] = useState<Registered>();
  return (
    <Section
      title="Hub identities"
      actions={
        <button type="button" aria-expanded={registering} onClick={() => setRegistering(!registering)}>
          {registering ? 'Close' : 'Register a hub identity'}
        </button>
      }
    >
      <p className="muted">A hub identity gives one of your agents a public address and profile. A listing rents out a hub identity; publishing it needs a certified one.</p>
      {registering && (
        <RegisterIdentity
          identities={identities.data ?? []}
          onDone={(r) => {
            setRegistering(false);
            setDone(r);
          }}
        />
      )}
      {done && (
        <p className={done.refused.length ? 'error' : 'muted'} role={done.refused.length ? 'alert' : 'status'}>
          Registered {done.identity.hub_address}.{done.refused.length > 0 && ` These capabilities were not added (add them again under the identity): ${done.refused.join('; ')}`}
        </p>
      )}
      <ErrorNote error={identities.error} />
      {identities.isPending && <Loading />}
      {identities.data?.length === 0 && !registering && <Empty>No hub identities yet.</Empty>}
      {identities.data?.map((i) => (
        <HubIdentityCard key={i.id} identity={i} agentName={i.device_id ? nameOf(names, i.device_id) : undefined} />
      ))}
    </Section>
  );
}
