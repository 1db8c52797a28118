/**
 * The decrypted conversation log of this browser (issue 13: "decrypted in the browser"). The
 * service stores only ciphertext, and a Double Ratchet or MLS sender cannot decrypt its own sent
 * messages later; so, as every end-to-end messenger does, the app keeps what it sent and what it
 * decrypted, sealed in IndexedDB (`SealedStore`), one record per conversation, newest
 * {@link LOG_LIMIT} entries.
 */
import type { Content, SessionStore } from '@parley/sdk';

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

  /** Be told when a conversation's log changes. Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
