/**
 * The chat of the web app, shared by the Conversations screen and a marketplace rental's room:
 * the decrypted log of one conversation (`lib/chat-log.ts`, live), its messages as content cards
 * with ticks, and the composer (its text kept as a draft across sign-ins). Sending is the caller's:
 * a conversation's messenger, or a rental room's.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useOwner } from '../../app/owner-context';
import { ContentCard } from '../../components/ContentCard';
import { Ticks } from '../../components/Ticks';
import { Empty, ErrorNote } from '../../components/ui';
import type { ChatEntry } from '../../lib/chat-log';
import { useDraft } from '../../lib/drafts';

/** The decrypted log of conversation `conversationId` (oldest first), live from the browser's chat log. */
export function useChat(conversationId: string): ChatEntry[] {
  const { chat } = useOwner();
  const [entries, setEntries] = useState<ChatEntry[]>([]);
  useEffect(() => {
    let live = true;
    const load = () => void chat.list(conversationId).then((l) => live && setEntries([...l]));
    load();
    const off = chat.subscribe((id) => id === conversationId && load());
    return () => {
      live = false;
      off();
    };
  }, [chat, conversationId]);
  return entries;
}

/**
 * The message list (`aria-label` "Messages with `peerName`", each message `data-testid="chat-message"`
 * with `data-direction` in | out) and the composer ("Your message", "Send"). `onSend(text, done)`
 * sends the trimmed text and calls `done` once it went (the draft is then cleared); `answers` and
 * `onAnswer` answer decision requests in place (Conversations).
 */
export function ChatThread({ draftKey, peerName, entries, onSend, pending, error, answers, onAnswer, disabled }: {
  draftKey: string;
  peerName: string;
  entries: ChatEntry[];
  onSend: (text: string, done: () => void) => void;
  pending: boolean;
  error: unknown;
  answers?: Map<string, string>;
  onAnswer?: (entry: ChatEntry, optionId: string) => void;
  /** Why nothing can be sent now (the composer is then disabled and says so). */
  disabled?: string;
}) {
  const composer = useId();
  const [text, setText, clear] = useDraft(draftKey);
  const bottom = useRef<HTMLLIElement>(null);
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [entries.length]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const t = text.trim();
    if (t) onSend(t, clear);
  };
  return (
    <>
      <ol className="messages" aria-label={`Messages with ${peerName}`} aria-live="polite">
        {entries.length === 0 && (
          <li>
            <Empty>No messages yet.</Empty>
          </li>
        )}
        {entries.map((e) => (
          <li key={e.message_id} className={`msg ${e.direction}`} data-testid="chat-message" data-direction={e.direction}>
            <div className="meta">
              {e.direction === 'out' ? 'You' : peerName} · {new Date(e.timestamp).toLocaleTimeString()}
              {e.direction === 'out' && <Ticks status={e.status} />}
            </div>
            <ContentCard content={e.content} {...(e.text !== undefined ? { text: e.text } : {})} answered={answers?.get(e.message_id)} onAnswer={e.direction === 'in' && onAnswer ? (o) => onAnswer(e, o) : undefined} />
          </li>
        ))}
        <li ref={bottom} aria-hidden="true" />
      </ol>
      {disabled && <p className="muted">{disabled}</p>}
      <form className="inline" onSubmit={submit}>
        <label htmlFor={composer}>Your message</label>
        <input id={composer} value={text} onChange={(e) => setText(e.target.value)} autoComplete="off" style={{ flex: 1 }} disabled={disabled !== undefined} />
        <button type="submit" className="primary" disabled={pending || !text.trim() || disabled !== undefined}>
          Send
        </button>
      </form>
      <ErrorNote error={error} />
    </>
  );
}
