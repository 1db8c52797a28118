/**
 * My rentals (contract §3.6; design §8.9, §8.24, §8.35): the tenant's rentals as renter or as
 * developer, with amounts in US cents; the renter completes an active rental or cancels a pending
 * or active one (confirmed; the unused part is refunded); either party files a dispute on an
 * active or suspended rental.
 */
import type { Rental } from '@parley/sdk';
import { useState } from 'react';
import { Link } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Badge, ConfirmButton, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { formatCents, words } from '../../lib/format';
import { useRootMutation } from '../../lib/mutate';
import { usePaged } from '../../lib/paging';
import { EnumSelect, Field, LoadMore } from '../form-parts';
import { FileDispute } from './FileDispute';

type Role = Rental['role'];
const TONE = { pending: 'neutral', active: 'good', suspended: 'warn', completed: 'info', cancelled: 'neutral', disputed: 'bad', resolved: 'info' } as const;

function RentalActions({ r }: { r: Rental }) {
  const { client } = useOwner();
  const cancel = useRootMutation('market', () => client.cancelRental(r.rental_id));
  const complete = useRootMutation('market', () => client.completeRental(r.rental_id));
  const renter = r.role === 'renter';
  return (
    <div className="stack">
      <div className="row">
        {renter && r.status === 'active' && (
          <button type="button" onClick={() => complete.mutate(undefined)} disabled={complete.isPending}>
            Complete
          </button>
        )}
        {renter && (r.status === 'pending' || r.status === 'active') && <ConfirmButton label="Cancel rental" confirmLabel="Yes, cancel it" onConfirm={() => cancel.mutate(undefined)} />}
      </div>
      <ErrorNote error={cancel.error ?? complete.error} />
      {(r.status === 'active' || r.status === 'suspended') && (
        <details>
          <summary>File a dispute</summary>
          <FileDispute r={r} />
        </details>
      )}
    </div>
  );
}

function RentalRow({ r }: { r: Rental }) {
  return (
    <tr>
      <td>
        <strong>{r.hub_address}</strong>
        <div className="muted">{words(r.pricing_model)}</div>
        {r.room_id && <Link to={`/marketplace/rentals/${r.rental_id}`}>{r.role === 'renter' ? 'Room and dispute' : 'Dispute'}</Link>}
      </td>
      <td>
        <Badge tone={TONE[r.status]}>{r.status}</Badge>
        {r.reason && <div className="muted">{words(r.reason)}</div>}
      </td>
      <td>
        {formatCents(r.amount_cents)}
        <div className="muted">
          fee {formatCents(r.fee_cents)}
          {r.refunded_cents > 0 && `, refunded ${formatCents(r.refunded_cents)}`}
        </div>
      </td>
      <td>
        <Time iso={r.starts_at} /> – <Time iso={r.ends_at} />
      </td>
      <td>
        <RentalActions r={r} />
      </td>
    </tr>
  );
}

/** The "My rentals" section (design §8.35: `GET /marketplace/rentals?role=`). */
export function MyRentals() {
  const { client } = useOwner();
  const [role, setRole] = useState<Role>('renter');
  const rentals = usePaged(['market', 'rentals', role], (cursor) => client.listRentals({ role, ...(cursor ? { cursor } : {}) }), (p) => p.rentals);
  return (
    <Section title="My rentals">
      <div className="row">
        <Field label="Show rentals where I am the">
          {(id) => <EnumSelect id={id} options={['renter', 'developer'] as const} value={role} onChange={setRole} labels={{ renter: 'renter', developer: 'developer (my agents rented out)' }} />}
        </Field>
      </div>
      <ErrorNote error={rentals.error} />
      {rentals.isPending && <Loading />}
      {!rentals.isPending && rentals.items.length === 0 && <Empty>No rentals.</Empty>}
      {rentals.items.length > 0 && (
        <table>
          <Head columns={['Agent', 'Status', 'Amount', 'Term', 'Actions']} />
          <tbody>
            {rentals.items.map((r) => (
              <RentalRow key={r.rental_id} r={r} />
            ))}
          </tbody>
        </table>
      )}
      <LoadMore paged={rentals} what="rentals" />
    </Section>
  );
}
