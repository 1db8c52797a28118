/**
 * A minimal typed event emitter for browsers and Node (no `node:events`). Listener errors never
 * reach the emitter's caller: they are handed to `onListenerError`.
 */

/** Map of event name to listener signature. */
export type EventMap<E> = { [K in keyof E]: (...args: never[]) => unknown };

/** Typed `on` / `once` / `off` with an `emit` for the owner class. */
export class TypedEmitter<E extends EventMap<E>> {
  private readonly listeners = new Map<keyof E, Set<E[keyof E]>>();

  constructor(private readonly onListenerError: (err: unknown, event: keyof E) => void = () => undefined) {}

  /** Add a listener; returns a function that removes it. */
  on<K extends keyof E>(event: K, listener: E[K]): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => this.off(event, listener);
  }

  /** Add a listener called at most once; returns a function that removes it. */
  once<K extends keyof E>(event: K, listener: E[K]): () => void {
    const wrapped = ((...args: Parameters<E[K]>) => {
      off();
      return (listener as (...a: Parameters<E[K]>) => unknown)(...args);
    }) as unknown as E[K];
    const off = this.on(event, wrapped);
    return off;
  }

  /** Remove a listener (no-op when absent). */
  off<K extends keyof E>(event: K, listener: E[K]): void {
    this.listeners.get(event)?.delete(listener);
  }

  /** Number of listeners of an event. */
  listenerCount(event: keyof E): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  /** Call every listener synchronously; a throwing listener is reported and the others still run. */
  protected emit<K extends keyof E>(event: K, ...args: Parameters<E[K]>): void {
    for (const l of [...(this.listeners.get(event) ?? [])]) {
      try {
        const r = (l as (...a: Parameters<E[K]>) => unknown)(...args);
        if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, (err) => this.onListenerError(err, event));
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
  }

  /** Call every listener in turn, awaiting each returned promise before the next one. */
  protected async emitSerial<K extends keyof E>(event: K, ...args: Parameters<E[K]>): Promise<void> {
    for (const l of [...(this.listeners.get(event) ?? [])]) {
      try {
        await (l as (...a: Parameters<E[K]>) => unknown)(...args);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
  }
}
