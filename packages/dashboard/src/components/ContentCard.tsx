/**
 * The structured content types of contract §2.4, decrypted in the browser, rendered as cards:
 * a decision request with its options and risk levels (answerable in place), status alerts by
 * severity, action confirmations, artifacts, heartbeats and text. Content the app cannot read
 * (not an envelope) is shown as plain text.
 */
import { readDecisionAnswer, type Content } from '@parley/sdk';
import { toneOf } from '../lib/tones';
import { Badge } from './ui';

export interface ContentCardProps {
  content: Content | undefined;
  text?: string;
  /** Answer a decision request with an option (only for received requests not answered yet). */
  onAnswer?: (optionId: string) => void;
  /** The option already chosen, when answered. */
  answered?: string;
}

/** One message's content as a card (see the file comment). */
export function ContentCard({ content, text, onAnswer, answered }: ContentCardProps) {
  if (!content) return <p>{text ?? ''}</p>;
  switch (content.type) {
    case 'text':
      return <p className="msg-text">{content.payload.text}</p>;
    case 'decision_request': {
      const p = content.payload;
      return (
        <div className="stack" aria-label={`Decision request: ${p.title}`} role="group">
          <strong>Decision: {p.title}</strong>
          {p.description && <p>{p.description}</p>}
          {p.deadline && <span className="muted">Deadline {new Date(p.deadline).toLocaleString()}</span>}
          <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {p.options.map((o) => (
              <li key={o.option_id} className="row">
                <Badge tone={toneOf(o.risk_level)}>{o.risk_level} risk</Badge>
                <span>
                  {o.label}
                  {o.is_default ? ' (default)' : ''}
                </span>
                {onAnswer && !answered && (
                  <button type="button" onClick={() => onAnswer(o.option_id)} aria-label={`Choose ${o.label}`}>
                    Choose
                  </button>
                )}
                {answered === o.option_id && <Badge tone="good">chosen</Badge>}
              </li>
            ))}
          </ul>
        </div>
      );
    }
    case 'status_alert': {
      const p = content.payload;
      return (
        <div className="stack" role="group" aria-label={`Status alert: ${p.title}`}>
          <div className="row">
            <Badge tone={toneOf(p.severity)}>{p.severity}</Badge>
            <strong>{p.title}</strong>
            {p.category && <span className="muted">{p.category}</span>}
          </div>
          {p.message && <p>{p.message}</p>}
          {p.detail && <pre>{p.detail}</pre>}
        </div>
      );
    }
    case 'action_confirmation': {
      const p = content.payload;
      const answer = readDecisionAnswer(content);
      return (
        <div className="row" role="group" aria-label={`Action: ${p.action}`}>
          <Badge tone={toneOf(p.status)}>{p.status}</Badge>
          <strong>{answer ? 'Decision answered' : p.action}</strong>
          {p.detail && <span>{p.detail}</span>}
        </div>
      );
    }
    case 'artifact': {
      const p = content.payload;
      return (
        <div className="stack" role="group" aria-label={`Artifact: ${p.title}`}>
          <div className="row">
            <Badge tone="info">{p.type}</Badge>
            <strong>{p.title}</strong>
            {p.format && <span className="muted">{p.format}</span>}
          </div>
          <pre>{p.content}</pre>
        </div>
      );
    }
    case 'heartbeat':
      return (
        <p className="muted">
          Heartbeat: {content.payload.agent_status}
          {content.payload.current_task ? ` — ${content.payload.current_task}` : ''}
        </p>
      );
  }
}
