/**
 * The decrypted conversation log of this browser ("decrypted in the browser"). The
 * service stores only ciphertext, and a Double Ratchet or MLS sender cannot decrypt its own sent
 * messages later; so, as every end-to-end messenger does, the app keeps what it sent and what it
 * decrypted, sealed in IndexedDB (`SealedStore`), one record per conversation, newest
 * {@link LOG_LIMIT} entries.
 */
import { defaultCompareCursors, laterStatus, statusOfReceipt, type Content, type MessageStatus, type SessionStore, type StoredMessage } from '@parley/sdk';

/** Entries kept per conversation. */
export const LOG_LIMIT = 500;

/** One message as the owner saw it. `timestamp`: ISO 8601 from the service. */
export interface ChatEntry {
  message_id: string;
  conversation_id: string;
  direction: 'in' | 'out';
  sender_device_id: string;
  timestamp: string;
  message_type: string;
  content: Content | undefined;
  /** Shown when the plaintext is not a structured content envelope. */
  text?: string;
  /** Sent messages: the ticks, `pending -> sent -> delivered -> read`, or `failed`. */
  status?: MessageStatus;
  /** Sent messages: the service's cursor (a read receipt covers every message up to one). */
  cursor?: string;
}

type Listener = (conversationId: string) => void;

/** Per-conversation logs over a {@link SessionStore} (writes serialized per conversation). */
export class ChatLog {
  private readonly cache = new Map<string, ChatEntry[]>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly listeners = new Set<Listener>();

  constructor(private readonly store: SessionStore) {}

  /** The entries of a conversation, oldest first. */
  async list(conversationId: string): Promise<ChatEntry[]> {
    const hit = this.cache.get(conversationId);
    if (hit) return hit;
    const raw = await this.store.load(`chat:${conversationId}`);
    const entries = raw ? (JSON.parse(raw) as ChatEntry[]) : [];
    this.cache.set(conversationId, entries);
    return entries;
  }

  /** Add an entry (ignored when its message_id is already there), keep order by timestamp, save. */
  append(entry: ChatEntry): Promise<void> {
    const id = entry.conversation_id;
    const next = (this.chains.get(id) ?? Promise.resolve()).then(async () => {
      const list = await this.list(id);
      if (list.some((e) => e.message_id === entry.message_id)) return;
      const updated = [...list, entry].sort((a, b) => a.timestamp.localeCompare(b.timestamp)).slice(-LOG_LIMIT);
      this.cache.set(id, updated);
      await this.store.save(`chat:${id}`, JSON.stringify(updated));
      for (const l of this.listeners) l(id);
    });
    this.chains.set(id, next.catch(() => undefined));
    return next;
  }

  /** A sent message's status moved (it never moves back, realtime/status.ts `laterStatus`). */
  setStatus(conversationId: string, messageId: string, status: MessageStatus): Promise<void> {
    return this.update(conversationId, (e) => (e.message_id === messageId ? status : undefined));
  }

  /** A read receipt (`message_read`): every sent message up to `cursor` is read. */
  markReadUpTo(conversationId: string, cursor: string): Promise<void> {
    return this.update(conversationId, (e) => (e.cursor !== undefined && defaultCompareCursors(e.cursor, cursor) <= 0 ? 'read' : undefined));
  }

  /** Receipt times from history (`delivered_at` / `read_at` of the recipient) for the sent messages of the page. */
  applyHistory(conversationId: string, messages: readonly StoredMessage[]): Promise<void> {
    const byId = new Map(messages.map((m) => [m.message_id, m]));
    return this.update(conversationId, (e) => {
      const m = byId.get(e.message_id);
      return m ? statusOfReceipt(m) : undefined;
    });
  }

  /** Move the status of the sent entries `next` answers for; saves and notifies when something changed. */
  private update(id: string, next: (e: ChatEntry) => MessageStatus | undefined): Promise<void> {
    const run = (this.chains.get(id) ?? Promise.resolve()).then(async () => {
      const list = await this.list(id);
      let changed = false;
      const updated = list.map((e) => {
        const s = e.direction === 'out' ? next(e) : undefined;
        const status = s === undefined ? e.status : laterStatus(e.status, s);
        if (status === e.status) return e;
        changed = true;
        return { ...e, status };
      });
      if (!changed) return;
      this.cache.set(id, updated);
      await this.store.save(`chat:${id}`, JSON.stringify(updated));
      for (const l of this.listeners) l(id);
    });
    this.chains.set(id, run.catch(() => undefined));
    return run;
  }

  /** Be told when a conversation's log changes. Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
