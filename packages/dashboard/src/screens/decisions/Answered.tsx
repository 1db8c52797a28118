/**
 * "Recently answered" (contract §4.15; design §8.4, §8.19): the latest answer of each decision,
 * newest first — approved, denied, deferred (still open) or expired at its deadline.
 */
import { ago, Badge, Empty, ErrorNote, Head, Loading, Section, Time } from '../../components/ui';
import { nameOf, shortId, type NameMap } from '../../lib/names';
import { toneOf } from '../../lib/tones';
import type { Answer } from './answered';
import { useAnswered } from './data';
import { answeredBy, optionLabel } from './describe';

function AnswerRow({ a, names }: { a: Answer; names: NameMap }) {
  const d = a.decision;
  const option = optionLabel(d?.options, a.option_id);
  return (
    <tr data-testid={`answered-${a.decision_id}`}>
      <td>{d?.title ?? `Decision ${shortId(a.decision_id)}`}</td>
      <td>{d ? nameOf(names, d.device_id) : '—'}</td>
      <td>
        <Badge tone={toneOf(a.status)}>{a.status === 'deferred' ? 'deferred (still open)' : a.status}</Badge>
      </td>
      <td>{option ?? '—'}</td>
      <td>{d?.note ?? '—'}</td>
      <td>
        <Time iso={a.at} /> <span className="muted">({ago(a.at)}, by {answeredBy(a.by)})</span>
      </td>
    </tr>
  );
}

/** Recently answered decisions (contract §4.15; design §8.4, §8.19). */
export function Answered({ names }: { names: NameMap }) {
  const answered = useAnswered();
  const list = answered.data?.answers ?? [];
  return (
    <Section title="Recently answered">
      <ErrorNote error={answered.error ?? answered.data?.auditError} />
      {answered.isPending && <Loading what="Loading answers" />}
      {answered.isSuccess && list.length === 0 && <Empty>No decision has been answered yet.</Empty>}
      {list.length > 0 && (
        <table>
          <Head columns={['Decision', 'Agent', 'Outcome', 'Option', 'Comment', 'Answered']} />
          <tbody>
            {list.map((a) => (
              <AnswerRow key={a.decision_id} a={a} names={names} />
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
