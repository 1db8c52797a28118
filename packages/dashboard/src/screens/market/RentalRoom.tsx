/**
 * One rental (`/marketplace/rentals/:rentalId`): its status and terms, the rental room where the
 * renter's owner device (this browser) talks to the rented agent end to end (`lib/rental-room.ts`:
 * encrypted and decrypted in the page, the service relays ciphertext; the chat UI is the
 * Conversations screen's), and its dispute: filing one while the rental is active or suspended,
 * then following its status, notes and outcome (live from `dispute_*` socket events).
 */
import type { Rental } from '@parley/sdk';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Loading, Section, Time } from '../../components/ui';
import { formatCents, words } from '../../lib/format';
import { joinRentalRoom, rentalChatId, rentalRooms, sendRentalText, undelivered } from '../../lib/rental-room';
import { ChatThread, useChat } from '../parts/ChatThread';
import { DisputeItem } from './Disputes';
import { FileDispute } from './FileDispute';

const OPEN = ['active', 'suspended'];
const TONE = { pending: 'neutral', active: 'good', suspended: 'warn', completed: 'info', cancelled: 'neutral', disputed: 'bad', resolved: 'info' } as const;

/** Why the room takes no message now, or undefined while it is open. */
function closedReason(r: Rental, now = Date.now()): string | undefined {
  if (!OPEN.includes(r.status)) return `The room is closed: the rental is ${r.status}.`;
  if (r.ends_at && Date.parse(r.ends_at) <= now) return 'The room is closed: the rental’s term ended.';
  return undefined;
}

/** The chat with the rented agent, once this device joined the room. */
function RoomChat({ r, agent }: { r: Rental; agent: string }) {
  const owner = useOwner();
  const entries = useChat(rentalChatId(r.rental_id, agent));
  const [held, setHeld] = useState<string>();
  const members = useQuery({ queryKey: ['rental-room', r.rental_id, 'members'], queryFn: () => owner.client.rentalMembers(r.rental_id) });
  const send = useMutation({ mutationFn: async (text: string) => sendRentalText(owner, await rentalRooms(owner), r.rental_id, agent, text) });
  const fingerprint = members.data?.members.find((m) => m.device_id === agent)?.fingerprint;
  return (
    <>
      <p className="muted">
        End-to-end encrypted (X3DH + Double Ratchet) between this browser and the agent; both tenants’ policies apply, the stricter wins. Agent fingerprint:{' '}
        <span className="fingerprint" data-testid="rental-agent-fingerprint">
          {fingerprint ?? '…'}
        </span>
      </p>
      <ChatThread
        draftKey={`rental-chat.${r.rental_id}`}
        peerName={r.hub_address}
        entries={entries}
        onSend={(text, done) =>
          send.mutate(text, {
            onSuccess: (receipt) => {
              setHeld(undelivered(receipt));
              done();
            },
          })
        }
        pending={send.isPending}
        error={send.error}
        {...(closedReason(r) ? { disabled: closedReason(r) } : {})}
      />
      {held && (
        <p className="notice" role="status">
          Your last message was {held}.
        </p>
      )}
    </>
  );
}

/** The room: join it (members' keys, catch-up), then chat. */
function Room({ r }: { r: Rental }) {
  const owner = useOwner();
  const joined = useQuery({ queryKey: ['rental-room', r.rental_id], queryFn: async () => joinRentalRoom(await rentalRooms(owner), r.rental_id), staleTime: Infinity });
  return (
    <Section title={`Talk to ${r.hub_address}`}>
      <ErrorNote error={joined.error} />
      {joined.isPending && <Loading what="Opening the encrypted room" />}
      {joined.data && <RoomChat r={r} agent={joined.data} />}
    </Section>
  );
}

/** The rental's disputes (the tenant's, filtered to this rental) and the form to file one. */
function RentalDisputes({ r }: { r: Rental }) {
  const { client } = useOwner();
  const disputes = useQuery({ queryKey: ['market', 'disputes', 'rental', r.rental_id], queryFn: async () => (await client.listDisputes({ limit: 200 })).disputes.filter((d) => d.rental_id === r.rental_id) });
  const list = disputes.data ?? [];
  return (
    <Section title="Dispute">
      <ErrorNote error={disputes.error} />
      {disputes.isPending && <Loading />}
      {list.length > 0 && (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="rental-disputes">
          {list.map((d) => (
            <DisputeItem key={d.dispute_id} d={d} />
          ))}
        </ul>
      )}
      {OPEN.includes(r.status) ? (
        <>
          <p className="muted">Something went wrong with this rental? A platform operator reviews the evidence against the listing’s SLA terms and decides: a refund, a partial refund, or none.</p>
          <FileDispute r={r} />
        </>
      ) : (
        list.length === 0 && <Empty>No dispute. A dispute can be filed while the rental is active or suspended.</Empty>
      )}
    </Section>
  );
}

/** The rental screen (`/marketplace/rentals/:rentalId`). */
export function RentalRoom() {
  const { client } = useOwner();
  const { rentalId = '' } = useParams();
  const rental = useQuery({ queryKey: ['market', 'rental', rentalId], queryFn: () => client.getRental(rentalId) });
  const r = rental.data;
  return (
    <>
      <h1>Rental</h1>
      <p>
        <Link to="/marketplace">Back to the marketplace</Link>
      </p>
      <ErrorNote error={rental.error} />
      {rental.isPending && <Loading what="Loading the rental" />}
      {r && (
        <>
          <Section title={`Rental of ${r.hub_address}`}>
            <dl className="kv">
              <dt>Status</dt>
              <dd>
                <Badge tone={TONE[r.status]}>{r.status}</Badge>
                {r.reason && r.reason !== r.status && <span className="muted"> {words(r.reason)}</span>}
              </dd>
              <dt>You are the</dt>
              <dd>{r.role}</dd>
              <dt>Charged</dt>
              <dd>
                {formatCents(r.amount_cents)} ({words(r.pricing_model)})
                {r.refunded_cents > 0 && `, ${formatCents(r.refunded_cents)} refunded`}
              </dd>
              <dt>Term</dt>
              <dd>
                <Time iso={r.starts_at} /> – <Time iso={r.ends_at} />
              </dd>
            </dl>
          </Section>
          {r.role === 'renter' && r.room_id && <Room r={r} />}
          <RentalDisputes r={r} />
        </>
      )}
    </>
  );
}
