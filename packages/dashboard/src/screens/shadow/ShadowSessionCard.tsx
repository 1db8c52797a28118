/**
 * One shadow session on the Shadow sessions screen (contract §2.14, §3.4, §4.17; design §8.8,
 * §8.20): level and evidence, progress on the three graduation gates (counted since the current
 * level began), Graduate (only when every gate is met, never automatic) and Demote to a lower
 * level with a reason (confirmed).
 */
import type { ShadowLevel, ShadowSession } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useOwner } from '../../app/owner-context';
import { Meter } from '../parts/Meter';
import { Badge, ConfirmButton, ErrorNote, Loading, Time } from '../../components/ui';
import { useDraft } from '../../lib/drafts';
import { useRootMutation } from '../../lib/mutate';
import { gateViews, levelTone, lowerLevels } from '../../lib/shadow-view';
import { formatRate } from '../../lib/telemetry-view';

function Gates({ sessionId, titleId }: { sessionId: string; titleId: string }) {
  const { client } = useOwner();
  const check = useQuery({ queryKey: ['shadow', 'check', sessionId], queryFn: () => client.getShadowGraduationCheck(sessionId) });
  const graduate = useRootMutation('shadow', () => client.graduateShadowSession(sessionId));
  if (check.isPending) return <Loading what="Checking the graduation gates" />;
  if (check.error) return <ErrorNote error={check.error} />;
  const c = check.data;
  return (
    <div className="stack">
      <h4 style={{ margin: '0.5rem 0 0' }}>Graduation gates</h4>
      <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {gateViews(c).map((g) => (
          <li key={g.key} data-testid={`gate-${sessionId}-${g.key}`}>
            <div className="row">
              <strong>{g.label}</strong>
              <Badge tone={g.met ? 'good' : 'warn'}>{g.met ? 'met' : 'not met'}</Badge>
              <span>{g.text}</span>
            </div>
            <Meter percent={g.percent} tone={g.met ? 'good' : 'warn'} />
          </li>
        ))}
      </ul>
      {c.next_level ? (
        <div className="row">
          <button type="button" className="primary" aria-describedby={titleId} disabled={!c.eligible || graduate.isPending} onClick={() => graduate.mutate(undefined)}>
            Graduate to {c.next_level}
          </button>
          {!c.eligible && <span className="muted">Graduation needs all three gates met.</span>}
        </div>
      ) : (
        <p className="muted" style={{ margin: 0 }}>
          Autonomous is the highest level.
        </p>
      )}
      <ErrorNote error={graduate.error} />
    </div>
  );
}

function Demote({ session }: { session: ShadowSession }) {
  const { client } = useOwner();
  const levels = lowerLevels(session.level);
  const [picked, setLevel] = useState<ShadowLevel>();
  const level = picked !== undefined && levels.includes(picked) ? picked : levels[0];
  const [reason, setReason, clear] = useDraft(`shadow.demote.${session.session_id}`);
  const demote = useRootMutation('shadow', (to: ShadowLevel) => client.demoteShadowSession(session.session_id, { level: to, reason: reason.trim() }));
  if (levels.length === 0 || level === undefined) return null;
  const id = session.session_id;
  return (
    <div className="stack" role="group" aria-label={`Demote ${session.skill_name} · ${session.decision_class}`}>
      <div className="row">
        <label htmlFor={`demote-level-${id}`}>Demote to</label>
        <select id={`demote-level-${id}`} value={level} onChange={(e) => setLevel(e.target.value as ShadowLevel)}>
          {levels.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
        <label htmlFor={`demote-reason-${id}`}>Reason</label>
        <input id={`demote-reason-${id}`} value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} placeholder="e.g. critical miss on …" />
        <ConfirmButton label="Demote" confirmLabel={`Yes, demote to ${level}`} disabled={reason.trim() === '' || demote.isPending} onConfirm={() => demote.mutate(level, { onSuccess: clear })} />
      </div>
      <span className="muted">Demotion resets the evidence: graduating again needs fresh observations.</span>
      <ErrorNote error={demote.error} />
    </div>
  );
}

/** A shadow session card: `agentName` names its agent (contract §2.14; design §8.8, §8.20). */
export function ShadowSessionCard({ session, agentName }: { session: ShadowSession; agentName: string }) {
  const s = session.stats;
  const titleId = `shadow-title-${session.session_id}`;
  return (
    <li className="card" data-testid={`shadow-${session.session_id}`}>
      <div className="row">
        <h3 style={{ margin: 0 }} id={titleId}>
          {session.skill_name} · {session.decision_class}
        </h3>
        <Badge tone={levelTone(session.level)} label={`level ${session.level}`}>
          {session.level}
        </Badge>
      </div>
      <dl className="kv">
        <dt>Agent</dt>
        <dd>{agentName}</dd>
        <dt>At this level since</dt>
        <dd>
          <Time iso={session.level_since} />
        </dd>
        <dt>Evidence at this level</dt>
        <dd>
          {s.observations} observations, {s.agreed} agreed ({formatRate(s.agreement_rate)}), {s.critical_misses} critical misses
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={session.created_at} />
        </dd>
      </dl>
      <Gates sessionId={session.session_id} titleId={titleId} />
      <Demote session={session} />
    </li>
  );
}
