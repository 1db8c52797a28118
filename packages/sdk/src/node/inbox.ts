/**
 * The local plugin's inbox (`plugin-api.ts`): every decrypted message of the agent's
 * A2A channels, owner conversations and rooms, oldest first, at most {@link PLUGIN_INBOX_LIMIT} (the
 * oldest dropped first), saved in the state directory (`plugin-inbox.json`, written atomically
 * after every change, sealed like the agent's other state unless plain storage was chosen) so a restarted plugin still serves what it had. Each message gets a
 * position (a growing integer); `next_since` is that position as a string, so paging is exact
 * even when timestamps tie.
 */
import type { SessionStore } from '../storage.js';
import { PLUGIN_INBOX_LIMIT, POLL_DEFAULT_LIMIT, type PluginMessage, type PluginMessagePage } from './plugin-api.js';

/** Store key of the inbox in the state directory. */
export const INBOX_KEY = 'plugin-inbox';

interface Entry {
  seq: number;
  message: PluginMessage;
}

interface SavedInbox {
  v: 1;
  format: 'parley-plugin-inbox';
  seq: number;
  entries: Entry[];
}

/** A `since` value: an inbox position or an ISO 8601 timestamp. */
export type Since = { position: number } | { after: number };

/** Parse `since` (`undefined` when absent). @throws TypeError for anything else than a position or an ISO 8601 timestamp. */
export function parseSince(since: string | undefined): Since | undefined {
  if (since === undefined || since === '') return undefined;
  if (/^\d{1,15}$/.test(since)) return { position: Number(since) };
  const t = /^\d{4}-\d{2}-\d{2}T/.test(since) ? Date.parse(since) : NaN;
  if (Number.isNaN(t)) throw new TypeError(`since must be an ISO 8601 timestamp or a previous answer's next_since, not "${since}"`);
  return { after: t };
}

/** The persisted inbox (see the file comment). Open with {@link PluginInbox.open}. */
export class PluginInbox {
  private entries: Entry[] = [];
  private seq = 0;
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: SessionStore,
    readonly limit: number,
  ) {}

  /** Open the inbox saved in `store` (empty when none). @throws Error for a corrupt file. */
  static async open(store: SessionStore, limit = PLUGIN_INBOX_LIMIT): Promise<PluginInbox> {
    const inbox = new PluginInbox(store, limit);
    const text = await store.load(INBOX_KEY);
    if (text !== undefined) {
      const saved = JSON.parse(text) as SavedInbox;
      if (saved?.format !== 'parley-plugin-inbox' || saved.v !== 1 || !Array.isArray(saved.entries)) throw new Error('not a Parley plugin inbox (v1)');
      inbox.entries = saved.entries.slice(-limit);
      inbox.seq = saved.seq;
    }
    return inbox;
  }

  /** Messages held. */
  get size(): number {
    return this.entries.length;
  }

  /** Append a message (ignored when its message_id is already held) and save. */
  add(message: PluginMessage): Promise<void> {
    if (this.entries.some((e) => e.message.message_id === message.message_id)) return this.saving;
    this.entries.push({ seq: ++this.seq, message });
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    const doc: SavedInbox = { v: 1, format: 'parley-plugin-inbox', seq: this.seq, entries: this.entries };
    const text = JSON.stringify(doc);
    // After a failed write (reported to that add's caller) the next writes still run.
    this.saving = this.saving.catch(() => undefined).then(() => this.store.save(INBOX_KEY, text));
    return this.saving;
  }

  /** A page of messages after `since`, oldest first, optionally of one channel, conversation or room. */
  page(query: { since?: Since; limit?: number; channel_id?: string; conversation_id?: string; room_id?: string }): PluginMessagePage {
    const limit = query.limit ?? POLL_DEFAULT_LIMIT;
    const since = query.since;
    const out: Entry[] = [];
    for (const e of this.entries) {
      if (since && 'position' in since && e.seq <= since.position) continue;
      if (since && 'after' in since && !(Date.parse(e.message.timestamp) > since.after)) continue;
      if (query.channel_id !== undefined && e.message.channel_id !== query.channel_id) continue;
      if (query.conversation_id !== undefined && e.message.conversation_id !== query.conversation_id) continue;
      if (query.room_id !== undefined && e.message.room_id !== query.room_id) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return { messages: out.map((e) => e.message), next_since: out.length > 0 ? String(out.at(-1)!.seq) : null };
  }

  /** Wait for pending writes. */
  flush(): Promise<void> {
    return this.saving;
  }
}
