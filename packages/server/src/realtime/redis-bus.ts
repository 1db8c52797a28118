/**
 * Cross-instance event bus over Redis pub/sub (ioredis), selected when `REDIS_URL` is set.
 * Events are JSON on one channel; every instance, the publisher included, receives each event
 * once through its subscriber connection.
 */
import { Redis } from 'ioredis';
import type { BusEvent, BusHandler, EventBus } from './bus.js';

export class RedisBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly handlers = new Set<BusHandler>();

  private constructor(url: string, private readonly channel: string) {
    this.pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
    this.sub = new Redis(url, { lazyConnect: true });
    this.sub.on('message', (ch: string, payload: string) => {
      if (ch !== this.channel) return;
      let event: BusEvent;
      try {
        event = JSON.parse(payload) as BusEvent;
      } catch {
        return; // not ours: every publisher on this channel sends JSON
      }
      for (const h of this.handlers) h(event);
    });
  }

  /** Connect both clients and subscribe. `channel` lets tests isolate concurrent runs. */
  static async connect(url: string, channel = 'parley:events'): Promise<RedisBus> {
    const bus = new RedisBus(url, channel);
    await Promise.all([bus.pub.connect(), bus.sub.connect()]);
    await bus.sub.subscribe(channel);
    return bus;
  }

  async publish(event: BusEvent): Promise<void> {
    await this.pub.publish(this.channel, JSON.stringify(event));
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
