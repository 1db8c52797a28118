/**
 * Conversations (contract §1.2–§1.3, §2.4, §4.5): a chat with each agent, end to
 * end encrypted by this browser's `SecureMessenger` (MLS or X3DH + Double Ratchet) and
 * decrypted in the page; the service sees ciphertext only. A badge says whether the session's keys
 * are post-quantum (PQXDH, hybrid MLS) or classical. Structured content is shown as cards;
 * a received decision request is answered in place (the SDK's `decisionAnswer`). When key
 * transparency refused the agent's keys (design §8.39), the chat says so in place of a send error.
 */
import { decisionAnswer, readDecisionAnswer, type Conversation, type DecisionRequest } from '@parley/sdk';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { useOwner } from '../app/owner-context';
import type { ChatEntry } from '../lib/chat-log';
import { keyTransparencyError, useKeyAlerts } from '../lib/key-alerts';
import { nameOf } from '../lib/names';
import { useDeviceList, useDeviceNames } from '../lib/use-devices';
import { KeyRefusalNote } from '../components/KeyAlerts';
import { ProtectionBadge } from '../components/ProtectionBadge';
import { Empty, ErrorNote, Loading, Section } from '../components/ui';
import { ChatThread, useChat } from './parts/ChatThread';

/**
 * Read receipts and ticks of an open chat: the sent messages' statuses are
 * refreshed from the service when the chat opens, and the newest received message is marked read
 * while the page is visible (and again when it becomes visible).
 */
function useReceipts(conversationId: string, entries: ChatEntry[]): void {
  const owner = useOwner();
  useEffect(() => {
    void owner.refreshStatuses(conversationId).catch(() => undefined);
  }, [owner, conversationId]);
  const lastIn = [...entries].reverse().find((e) => e.direction === 'in')?.message_id;
  useEffect(() => {
    if (!lastIn) return;
    const read = () => {
      if (document.visibilityState === 'visible') void owner.markRead(conversationId, lastIn);
    };
    read();
    document.addEventListener('visibilitychange', read);
    return () => document.removeEventListener('visibilitychange', read);
  }, [owner, conversationId, lastIn]);
}

/** The option chosen per answered decision request (by the request's message id). */
export function answersOf(entries: ChatEntry[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of entries) {
    const a = readDecisionAnswer(e.content);
    if (a) out.set(a.in_reply_to, a.option_id);
  }
  return out;
}

function Chat({ conversation, agentName }: { conversation: Conversation; agentName: string }) {
  const owner = useOwner();
  const id = conversation.conversation_id;
  const entries = useChat(id);
  useReceipts(id, entries);
  const answers = useMemo(() => answersOf(entries), [entries]);
  const send = useMutation({ mutationFn: (content: Parameters<typeof owner.send>[1]) => owner.send(id, content) });
  const peer = useQuery({ queryKey: ['conversations', id, 'keys'], queryFn: () => owner.client.conversationKeys(id) });
  const answer = (entry: ChatEntry, optionId: string) => {
    if (entry.content?.type !== 'decision_request') return;
    send.mutate(decisionAnswer(entry.content.payload as DecisionRequest, entry.message_id, optionId));
  };
  const kt = keyTransparencyError(send.error);
  const refusal = useKeyAlerts(owner.keyAlerts).refusals.get(id) ?? (kt ? { conversation_id: id, detail: kt.message, at: new Date().toISOString() } : undefined);
  const session = owner.messenger.sessionInfo(id);
  const protection = owner.messenger.protection(id);
  return (
    <Section title={`Chat with ${agentName}`}>
      <p className="muted">
        End-to-end encrypted{session ? ` (${session.protocol === 'mls' ? 'MLS' : 'X3DH + Double Ratchet'})` : ''} <ProtectionBadge protection={protection} />. Agent fingerprint:{' '}
        <span className="fingerprint" data-testid="peer-fingerprint">
          {peer.data?.fingerprint ?? '…'}
        </span>
      </p>
      <ChatThread
        draftKey={`chat.${id}`}
        peerName={agentName}
        entries={entries}
        onSend={(text, done) => send.mutate({ type: 'text', payload: { text } }, { onSuccess: done })}
        pending={send.isPending}
        error={kt ? undefined : send.error}
        answers={answers}
        onAnswer={answer}
      />
      {refusal && <KeyRefusalNote refusal={refusal} peerName={agentName} peerDeviceId={conversation.agent_device_id} />}
    </Section>
  );
}

/** The Conversations screen: the list of agents to talk to, and the selected chat. */
export function Conversations() {
  const owner = useOwner();
  const { conversationId } = useParams();
  const conversations = useQuery({ queryKey: ['conversations', owner.deviceId], queryFn: () => owner.conversations() });
  const devices = useDeviceList();
  const names = useDeviceNames();
  const active = (conversations.data ?? []).filter((c) => devices.data?.find((d) => d.device_id === c.agent_device_id)?.status !== 'REVOKED' || c.conversation_id === conversationId);
  const selected = active.find((c) => c.conversation_id === conversationId) ?? (conversationId === undefined ? active[0] : undefined);
  return (
    <>
      <h1>Conversations</h1>
      <ErrorNote error={conversations.error ?? devices.error} />
      {conversations.isPending ? (
        <Loading />
      ) : active.length === 0 ? (
        <Empty>No conversations yet: approve an agent first.</Empty>
      ) : (
        <div className="chat">
          <nav aria-label="Agents to talk to">
            <ul className="chat-list">
              {active.map((c) => (
                <li key={c.conversation_id}>
                  <Link to={`/conversations/${c.conversation_id}`} className={c === selected ? 'active' : ''} aria-current={c === selected ? 'page' : undefined}>
                    {nameOf(names, c.agent_device_id)}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          {selected ? <Chat key={selected.conversation_id} conversation={selected} agentName={nameOf(names, selected.agent_device_id)} /> : <Empty>This conversation is not yours.</Empty>}
        </div>
      )}
    </>
  );
}
