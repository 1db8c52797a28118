/**
 * Payouts (contract §3.8, §4.16; design §8.24): the ledger summary (earned, fees, paid, pending,
 * balance, the minimum and the next weekly run) and the payouts to the tenant, in US cents.
 */
import { useQuery } from '@tanstack/react-query';
import { useOwner } from '../../app/owner-context';
import { Badge, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { formatCents } from '../../lib/format';
import { usePaged } from '../../lib/paging';
import { LoadMore } from '../form-parts';

const TONE = { pending: 'warn', completed: 'good', failed: 'bad' } as const;

/** The "Payouts" section (`GET /marketplace/payouts/summary`, `GET /marketplace/payouts`). */
export function Payouts() {
  const { client } = useOwner();
  const summary = useQuery({ queryKey: ['market', 'payout-summary'], queryFn: () => client.payoutSummary() });
  const payouts = usePaged(['market', 'payouts'], (cursor) => client.listPayouts(cursor ? { cursor } : {}), (p) => p.payouts);
  const s = summary.data;
  return (
    <Section title="Payouts">
      <ErrorNote error={summary.error} />
      {summary.isPending && <Loading />}
      {s && (
        <dl className="kv" data-testid="payout-summary">
          <dt>Earned</dt>
          <dd>{formatCents(s.earned_cents)}</dd>
          <dt>Platform fees</dt>
          <dd>{formatCents(s.fees_cents)}</dd>
          <dt>Paid out</dt>
          <dd>{formatCents(s.paid_cents)}</dd>
          <dt>In flight</dt>
          <dd>{formatCents(s.pending_cents)}</dd>
          <dt>Balance</dt>
          <dd>
            <strong>{formatCents(s.balance_cents)}</strong>
          </dd>
          <dt>Next payout</dt>
          <dd>
            <Time iso={s.next_payout_at} /> (when the balance is at least {formatCents(s.minimum_payout_cents)})
          </dd>
        </dl>
      )}
      <ErrorNote error={payouts.error} />
      {!payouts.isPending && payouts.items.length === 0 && <Empty>No payouts yet.</Empty>}
      {payouts.items.length > 0 && (
        <table>
          <Head columns={['Created', 'Amount', 'Status', 'Completed']} />
          <tbody>
            {payouts.items.map((p) => (
              <tr key={p.payout_id}>
                <td>
                  <Time iso={p.created_at} />
                </td>
                <td>{formatCents(p.amount_cents)}</td>
                <td>
                  <Badge tone={TONE[p.status]}>{p.status}</Badge>
                  {p.failure_reason && <div className="muted">{p.failure_reason}</div>}
                </td>
                <td>
                  <Time iso={p.completed_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <LoadMore paged={payouts} what="payouts" />
    </Section>
  );
}
