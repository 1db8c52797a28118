/**
 * One decision awaiting the owner (contract §2.4, §4.15; design §8.4, §8.19): title, description,
 * the asking agent, options with their risk levels (text badges), the deadline with a live
 * countdown, the auto action, an optional comment, and Approve (with the chosen option), Deny,
 * Defer. A refusal (409 already answered, deadline passed) shows the service's detail here.
 */
import type { Decision } from '@parley/sdk';
import { useId, useState } from 'react';
import { useOwner } from '../../app/owner-context';
import { Countdown } from '../../components/Countdown';
import { Badge, ErrorNote, Time } from '../../components/ui';
import { useDraft } from '../../lib/drafts';
import { nameOf, type NameMap } from '../../lib/names';
import { toneOf } from '../../lib/tones';
import { useAction } from '../../lib/use-action';
import { keeping } from '../../lib/use-kept';
import { autoActionText } from './describe';
import { rememberDecisions } from './known';

type Resolution = 'approve' | 'deny' | 'defer';

/** The card of `decision` (contract §4.15; design §8.19); `onKeep` records its latest state (answer, or itself after a refusal). */
export function DecisionCard({ decision: d, names, onKeep }: { decision: Decision; names: NameMap; onKeep: (d: Decision) => void }) {
  const { client } = useOwner();
  const id = useId();
  const [choice, setChoice] = useState(() => d.options.find((o) => o.is_default)?.option_id ?? '');
  const [note, setNote, clearNote] = useDraft(`decision.${d.decision_id}.note`);
  const [missing, setMissing] = useState<string>();
  const resolve = useAction(
    (resolution: Resolution) =>
      keeping(
        async () => {
          const out = await client.resolveDecision(d.decision_id, {
            resolution,
            ...(resolution === 'approve' && choice ? { option_id: choice } : {}),
            ...(note.trim() ? { note: note.trim() } : {}),
          });
          rememberDecisions([out]);
          clearNote();
          return out;
        },
        onKeep,
        d,
      ),
    ['decisions'],
  );
  const answer = (resolution: Resolution) => {
    if (resolution === 'approve' && d.options.length > 0 && !choice) return setMissing('Choose an option to approve.');
    setMissing(undefined);
    resolve.mutate(resolution);
  };
  const busy = resolve.isPending;
  return (
    <article className="card" data-testid={`decision-${d.decision_id}`} aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h3 id={`${id}-title`}>{d.title}</h3>
        <Badge tone={toneOf(d.status)}>{d.status}</Badge>
      </div>
      {d.description && <p>{d.description}</p>}
      <dl className="kv">
        <dt>Agent</dt>
        <dd>{nameOf(names, d.device_id)}</dd>
        <dt>Asked</dt>
        <dd>
          <Time iso={d.created_at} />
        </dd>
        <dt>Deadline</dt>
        <dd>
          <Countdown deadline={d.deadline} />
          {d.deadline && (
            <span className="muted">
              {' '}
              (<Time iso={d.deadline} />)
            </span>
          )}
        </dd>
        <dt>If unanswered</dt>
        <dd>{d.deadline ? autoActionText(d.auto_action, d.options) : 'no deadline'}</dd>
      </dl>
      {d.options.length > 0 && (
        <fieldset>
          <legend>Options</legend>
          {d.options.map((o) => (
            <div key={o.option_id} className="row">
              <input
                type="radio"
                id={`${id}-o-${o.option_id}`}
                name={`${id}-option`}
                value={o.option_id}
                checked={choice === o.option_id}
                onChange={() => setChoice(o.option_id)}
              />
              <label htmlFor={`${id}-o-${o.option_id}`}>{o.label}</label>
              <Badge tone={toneOf(o.risk_level)}>risk: {o.risk_level}</Badge>
              {o.is_default && <span className="muted">(default)</span>}
            </div>
          ))}
        </fieldset>
      )}
      <label htmlFor={`${id}-note`}>Comment (optional)</label>
      <textarea id={`${id}-note`} value={note} maxLength={2000} rows={2} onChange={(e) => setNote(e.target.value)} />
      <div className="row">
        <button type="button" className="primary" disabled={busy} onClick={() => answer('approve')}>
          Approve
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => answer('deny')}>
          Deny
        </button>
        <button type="button" disabled={busy || d.status === 'deferred'} onClick={() => answer('defer')}>
          Defer
        </button>
        {d.status === 'deferred' && <span className="muted">Deferred once: approve or deny it.</span>}
      </div>
      <ErrorNote error={missing} />
      <ErrorNote error={resolve.error} />
    </article>
  );
}
