/**
 * The event bus (DESIGN §6): how one instance tells every instance (itself included) to deliver a
 * frame or close a device's sockets. `InProcessBus` serves a single instance; `RedisBus`
 * (realtime/redis-bus.ts) fans out across instances through Redis pub/sub.
 */

/** Who receives a frame: listed devices, and/or every owner device socket of a tenant. */
export interface Audience {
  deviceIds?: string[];
  ownersOfTenant?: string;
}

export type BusEvent =
  | {
      type: 'frame';
      to: Audience;
      event: string;
      data: unknown;
      /** Socket id that must not receive it (the sender's own socket). */
      excludeSocket?: string;
    }
  | { type: 'close_device'; deviceId: string; code: number; reason: string };

export type BusHandler = (event: BusEvent) => void;

export interface EventBus {
  /** Publish to every subscriber on every instance. Resolves once handed to the transport. */
  publish(event: BusEvent): Promise<void>;
  /** Register a handler; returns an unsubscribe function. */
  subscribe(handler: BusHandler): () => void;
  close(): Promise<void>;
}

/** Single-instance bus: handlers are called synchronously on publish. */
export class InProcessBus implements EventBus {
  private readonly handlers = new Set<BusHandler>();

  publish(event: BusEvent): Promise<void> {
    for (const h of this.handlers) h(event);
    return Promise.resolve();
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  close(): Promise<void> {
    this.handlers.clear();
    return Promise.resolve();
  }
}
