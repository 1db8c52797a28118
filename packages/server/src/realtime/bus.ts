/**
 * The event bus (design §6): how one instance tells every instance (itself included) to deliver a
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
  | {
      /** Several frames of one event in one bus message (a room message's fan-out: one frame per envelope). */
      type: 'frames';
      event: string;
      /** Each frame's data and the devices it goes to. */
      frames: { deviceIds: string[]; data: unknown }[];
    }
  | { type: 'close_device'; deviceId: string; code: number; reason: string };

export type BusHandler = (event: BusEvent) => void;

export interface EventBus {
  /**
   * Publish to every subscriber on every instance. Resolves once handed to the transport. Callers
   * publish what they have already committed, so a transport failure must not reject: the bus
   * logs it (clients of other instances catch up by cursor; see {@link EventBus.onGap}).
   */
  publish(event: BusEvent): Promise<void>;
  /** Register a handler; returns an unsubscribe function. */
  subscribe(handler: BusHandler): () => void;
  /**
   * Register a handler called when events from other instances may have been missed (the
   * transport lost its connection and has it back); returns an unsubscribe function. Buses that
   * cannot miss events (in-process) leave it out.
   */
  onGap?(handler: () => void): () => void;
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

/**
 * An {@link EventBus} that times each publish (`parley_bus_publish_seconds`, design §8.32) and
 * otherwise forwards to `inner`.
 */
export class MeasuredBus implements EventBus {
  constructor(
    private readonly inner: EventBus,
    private readonly observe: (seconds: number) => void,
  ) {}

  async publish(event: BusEvent): Promise<void> {
    const started = performance.now();
    try {
      await this.inner.publish(event);
    } finally {
      this.observe((performance.now() - started) / 1000);
    }
  }

  subscribe(handler: BusHandler): () => void {
    return this.inner.subscribe(handler);
  }

  /** The inner bus's gap notifications (none for a bus without them). */
  onGap(handler: () => void): () => void {
    return this.inner.onGap?.(handler) ?? (() => undefined);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
