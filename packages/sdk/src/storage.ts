/**
 * Persistence of end-to-end session state (serialized {@link RatchetSession}s, or any other
 * opaque state string). Session state holds secret keys: a store should keep it on the device
 * only, with access limited to the owning user.
 *
 * Save the session after every successful `encrypt` / `decrypt`: a stale state re-derives
 * message keys the peer has already seen used, and cannot read messages sent after it.
 */

/** Storage of opaque state strings by id (e.g. a conversation id or a peer device id). */
export interface SessionStore {
  /** The state saved under `id`, or undefined when there is none. */
  load(id: string): Promise<string | undefined>;
  /** Replace the state under `id`. Resolves once the state is durable (for durable stores). */
  save(id: string, state: string): Promise<void>;
  /** Remove the state under `id`; resolves also when there was none. */
  delete(id: string): Promise<void>;
}

/** An in-memory {@link SessionStore} (tests, short-lived processes, browsers without storage). */
export class MemorySessionStore implements SessionStore {
  private readonly states = new Map<string, string>();

  async load(id: string): Promise<string | undefined> {
    return this.states.get(id);
  }

  async save(id: string, state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('state must be a string');
    this.states.set(id, state);
  }

  async delete(id: string): Promise<void> {
    this.states.delete(id);
  }

  /** The ids with a saved state. */
  ids(): string[] {
    return [...this.states.keys()];
  }
}
