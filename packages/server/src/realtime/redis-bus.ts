/**
 * Cross-instance event bus over Redis pub/sub (ioredis), selected when `REDIS_URL` is set.
 * Events are JSON on one channel. The publishing instance hands each event to its own handlers at
 * once and to Redis for the others; every event carries the publisher's `origin` id, and a
 * subscriber skips its own (events without `origin`, from older versions, are delivered as they
 * come). Every instance thus receives each event once.
 *
 * Faults (docs/operations.md "Faults"): both connections are watched (realtime/redis-watchdog.ts:
 * a Redis that stops answering without closing them is treated as gone within about two seconds,
 * and a publish waits at most a second). While Redis is unreachable, local delivery goes on and
 * `publish` still resolves (a failed hand-over to Redis is logged, never turned into an error of
 * what was already committed); when the subscriber connects again (ioredis resubscribes by
 * itself) the bus confirms the subscription and calls its gap handlers: events of other instances
 * may have been missed meanwhile, and the gateway closes its sockets with 1012 so that clients
 * reconnect and catch up by cursor. A Redis unreachable at start is the same outage: the bus is
 * answered at once and subscribes, with a gap, when Redis answers.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BusEvent, BusHandler, EventBus } from './bus.js';
import { connectOrRetry, watchRedis } from './redis-watchdog.js';

/** Where the bus reports Redis connection errors and failed publishes (rate-limited by the caller's logger, if at all). */
export interface RedisBusLog {
  warn(obj: object, msg: string): void;
}

type Tagged = BusEvent & { origin?: string };

export class RedisBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly handlers = new Set<BusHandler>();
  private readonly gapHandlers = new Set<() => void>();
  /** This instance's id on the channel (skips its own events coming back). */
  private readonly origin = randomUUID();
  /** The subscriber lost its connection since it last subscribed. */
  private lost = false;
  private closing = false;
  private readonly unwatch: (() => void)[];

  private constructor(
    url: string,
    private readonly channel: string,
    private readonly log: RedisBusLog | undefined,
  ) {
    // No offline queue on the publisher: while Redis is down a publish fails at once instead of
    // waiting for reconnection attempts (local delivery has happened already).
    this.pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3, enableOfflineQueue: false, commandTimeout: 1_000 });
    this.sub = new Redis(url, { lazyConnect: true });
    this.unwatch = [watchRedis(this.pub), watchRedis(this.sub)];
    // Without 'error' listeners ioredis prints every failed reconnection attempt to stderr.
    let warned = false;
    const onError = (which: string) => (err: Error) => {
      if (warned) return; // once per outage; reset on 'ready'
      warned = true;
      this.log?.warn({ err: err.message }, `redis bus: ${which} connection failed; retrying`);
    };
    this.pub.on('error', onError('publisher'));
    this.sub.on('error', onError('subscriber'));
    this.pub.on('ready', () => (warned = false));
    this.sub.on('close', () => {
      if (!this.closing) this.lost = true;
    });
    this.sub.on('ready', () => {
      warned = false;
      if (!this.lost || this.closing) return;
      // ioredis has re-sent SUBSCRIBE before 'ready'; once a SUBSCRIBE of ours is answered the
      // channel is live again, and whatever was published before can only be read from the database.
      this.sub.subscribe(this.channel).then(
        () => {
          if (this.closing) return;
          this.lost = false;
          for (const h of this.gapHandlers) h();
        },
        () => undefined, // lost again: the next 'ready' tries again
      );
    });
    this.sub.on('message', (ch: string, payload: string) => {
      if (ch !== this.channel) return;
      let event: Tagged;
      try {
        event = JSON.parse(payload) as Tagged;
      } catch {
        return; // not ours: every publisher on this channel sends JSON
      }
      if (event.origin === this.origin) return; // delivered locally when published
      this.deliver(event);
    });
  }

  /**
   * Connect both clients and subscribe. An unreachable Redis does not fail it: the bus delivers
   * locally meanwhile, and once the subscriber connects it subscribes and reports a gap, as after
   * a lost connection. `channel` lets tests isolate concurrent runs; `log` receives connection
   * errors and failed publishes.
   */
  static async connect(url: string, channel = 'parley:events', log?: RedisBusLog): Promise<RedisBus> {
    const bus = new RedisBus(url, channel, log);
    const [, connected] = await Promise.all([connectOrRetry(bus.pub), connectOrRetry(bus.sub)]);
    const subscribed = connected && (await bus.sub.subscribe(channel).then(
      () => true,
      () => false,
    ));
    if (!subscribed) bus.lost = true;
    return bus;
  }

  private deliver(event: BusEvent): void {
    for (const h of this.handlers) h(event);
  }

  /**
   * Deliver to this instance's handlers now, then hand the event to Redis for the others.
   * Resolves even when Redis is unreachable (the failure is logged; see the file comment).
   */
  async publish(event: BusEvent): Promise<void> {
    this.deliver(event);
    try {
      await this.pub.publish(this.channel, JSON.stringify({ ...event, origin: this.origin }));
    } catch (err) {
      this.log?.warn({ err: (err as Error).message, event: event.type }, 'redis bus: publish failed; other instances miss this event until their clients catch up');
    }
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Call `handler` each time the subscription is back after a lost connection (events may have been missed). */
  onGap(handler: () => void): () => void {
    this.gapHandlers.add(handler);
    return () => this.gapHandlers.delete(handler);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const stop of this.unwatch) stop();
    this.handlers.clear();
    this.gapHandlers.clear();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
    // quit fails while disconnected: stop the reconnection attempts too.
    this.sub.disconnect();
    this.pub.disconnect();
  }
}
