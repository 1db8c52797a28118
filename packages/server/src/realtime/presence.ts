/**
 * Presence across instances (contract §4.3 `GET /devices/{id}/presence`, `online` of
 * `/owner-connections`; design §6, §8.32): whether a device has an open socket on ANY instance.
 *
 * - {@link LocalPresence} (one instance, no Redis): the gateway's own sockets.
 * - {@link RedisPresence} (`REDIS_URL`): each instance records the devices it serves in Redis, one
 *   sorted set per device, `parley:presence:<device>`, whose members are instance ids scored with
 *   the time (ms since the epoch) the entry lapses. A device's first socket on an instance adds
 *   the entry, its last socket's close removes it, and every `refreshMs` the instance re-adds all
 *   of its devices with a new lapse time (`ttlMs` ahead), so an instance killed without a goodbye
 *   (SIGKILL, lost host) stops counting after at most `ttlMs`. A device is online when its set
 *   has an entry that has not lapsed, or when this instance has a socket of it.
 *   When Redis is not connected, answers fall back to this instance's own sockets (a device
 *   connected only elsewhere reads offline until Redis is back; docs/operations.md "Faults").
 */
import type { Redis } from 'ioredis';

/** Answers which devices have an open socket (the devices and connections modules read it). */
export interface PresenceView {
  /** The subset of `deviceIds` with an open, registered socket on any instance. Never rejects. */
  online(deviceIds: string[]): Promise<Set<string>>;
}

/** The gateway's view of its own sockets. */
export interface LocalSockets {
  isOnline(deviceId: string): boolean;
  /** Devices with at least one registered socket on this instance. */
  localDevices(): Iterable<string>;
}

/** Told by the gateway when a device's first socket on this instance opens and its last one closes. */
export interface SocketDirectory {
  up(deviceId: string): void;
  down(deviceId: string): void;
}

/** Presence of one instance: its own sockets. */
export class LocalPresence implements PresenceView {
  constructor(private readonly local: LocalSockets) {}

  online(deviceIds: string[]): Promise<Set<string>> {
    return Promise.resolve(new Set(deviceIds.filter((id) => this.local.isOnline(id))));
  }
}

export interface RedisPresenceOptions {
  redis: Redis;
  /** This instance's id (members of the per-device sets). */
  instanceId: string;
  /** How long an entry counts without a refresh (ms; default 30 s). */
  ttlMs?: number;
  /** How often this instance refreshes its entries (ms; default ttlMs / 3). */
  refreshMs?: number;
  /** Failed writes (logged by the caller; presence then falls back as the module comment says). */
  onError?: (err: unknown) => void;
}

const KEY = (deviceId: string) => `parley:presence:${deviceId}`;

/** Shared presence in Redis (module comment). Wire it as the gateway's {@link SocketDirectory}, then {@link attach} the gateway. */
export class RedisPresence implements PresenceView, SocketDirectory {
  private readonly ttlMs: number;
  private readonly timer: NodeJS.Timeout;
  private local: LocalSockets | undefined;

  constructor(private readonly o: RedisPresenceOptions) {
    this.ttlMs = o.ttlMs ?? 30_000;
    this.timer = setInterval(() => void this.refresh(), o.refreshMs ?? Math.max(10, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** The gateway whose sockets this instance announces (set once by the composition root). */
  attach(local: LocalSockets): void {
    this.local = local;
  }

  private get ready(): boolean {
    return this.o.redis.status === 'ready';
  }

  up(deviceId: string): void {
    if (!this.ready) return; // announced by the first refresh after Redis is back
    this.o.redis
      .multi()
      .zadd(KEY(deviceId), Date.now() + this.ttlMs, this.o.instanceId)
      .pexpire(KEY(deviceId), this.ttlMs)
      .exec()
      .catch(this.fail);
  }

  down(deviceId: string): void {
    if (!this.ready) return; // the entry lapses by itself
    this.o.redis.zrem(KEY(deviceId), this.o.instanceId).catch(this.fail);
  }

  /** Re-announce every device with a socket here (every `refreshMs`; also after Redis comes back). */
  async refresh(): Promise<void> {
    if (!this.local || !this.ready) return;
    const until = Date.now() + this.ttlMs;
    const batch = this.o.redis.pipeline();
    let n = 0;
    for (const id of this.local.localDevices()) {
      batch.zadd(KEY(id), until, this.o.instanceId).pexpire(KEY(id), this.ttlMs);
      n++;
    }
    if (n > 0) await batch.exec().catch(this.fail);
  }

  async online(deviceIds: string[]): Promise<Set<string>> {
    const found = new Set(deviceIds.filter((id) => this.local?.isOnline(id)));
    const rest = deviceIds.filter((id) => !found.has(id));
    if (rest.length === 0 || !this.ready) return found;
    const now = Date.now();
    const batch = this.o.redis.pipeline();
    for (const id of rest) batch.zcount(KEY(id), now, '+inf');
    try {
      const answers = (await batch.exec()) ?? [];
      answers.forEach(([err, count], i) => {
        if (!err && Number(count) > 0) found.add(rest[i]!);
      });
    } catch (err) {
      this.fail(err);
    }
    return found;
  }

  /** Stop refreshing and withdraw this instance's entries (graceful shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    if (!this.local || !this.ready) return;
    const batch = this.o.redis.pipeline();
    for (const id of this.local.localDevices()) batch.zrem(KEY(id), this.o.instanceId);
    await batch.exec().catch(this.fail);
  }

  private readonly fail = (err: unknown): void => this.o.onError?.(err);
}
