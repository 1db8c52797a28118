/**
 * The push trigger (design §8.36 "Push delivery"): the Notifier sink that, after an event went to
 * the sockets, wakes the devices of its audience that have no live socket on any instance
 * (realtime/presence.ts) and a push registration, by adding the event to their outbox rows
 * (repo.ts `enqueue`: collapsed per registration and kind). Which events wake whom, and what the
 * push says, is payload.ts.
 *
 * The sink never holds up the caller (a room message's fan-out calls it once per recipient): it
 * queues the event and answers at once; one drain at a time handles the queue in batches of
 * {@link BATCH}, asking presence once per batch for the listed devices, so events for connected
 * devices cost no database work, and writing like events of a batch for the same devices once. Owner audiences (`ownersOfTenant`) are read from the database
 * first, then checked. The sending device is never woken by its own message. Beyond
 * {@link MAX_QUEUED} waiting events new ones are dropped (logged): a wake-up is an optimisation, the
 * messages themselves wait in the database.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import type { Audience } from '../../realtime/bus.js';
import type { WebhookSink } from '../../realtime/notifier.js';
import type { PresenceView } from '../../realtime/presence.js';
import { isPushSource, pushEventOf, type PushEvent } from './payload.js';
import * as repo from './repo.js';

/** Events handled per presence query. */
const BATCH = 100;
/** Most events waiting; beyond it new events are dropped. */
export const MAX_QUEUED = 10_000;

/** A queued event: its tenant, push reading and audience (listed devices without the sender). */
interface Job {
  tenantId: string;
  push: PushEvent;
  listed: string[];
  owners: boolean;
}

export class PushTrigger implements WebhookSink {
  private readonly queue: Job[] = [];
  private draining: Promise<void> | undefined;
  private dropping = false;

  constructor(
    private readonly db: Db,
    private readonly presence: PresenceView,
    private readonly log: FastifyBaseLogger,
    /** Called after pushes were enqueued (the worker polls at once instead of at its next tick). */
    private readonly onEnqueued: () => void = () => undefined,
  ) {}

  /** Whether `event` may wake a device. */
  handles(event: string): boolean {
    return isPushSource(event);
  }

  /** Queue `event` for its audience; answers at once and never rejects. */
  enqueue(tenantId: string, audience: Audience, event: string, data: unknown): Promise<void> {
    const push = pushEventOf(event, data);
    if (!push) return Promise.resolve();
    const owners = audience.ownersOfTenant !== undefined;
    const listed = (audience.deviceIds ?? []).filter((id) => id !== push.senderDeviceId);
    if (!owners && listed.length === 0) return Promise.resolve();
    if (this.queue.length >= MAX_QUEUED) {
      if (!this.dropping) this.log.warn({ queued: this.queue.length }, 'push trigger queue full: wake-ups dropped');
      this.dropping = true;
      return Promise.resolve();
    }
    this.dropping = false;
    this.queue.push({ tenantId, push, listed, owners });
    this.kick();
    return Promise.resolve();
  }

  /** Resolves once every event queued so far is handled (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    await Promise.resolve(); // let the caller's synchronous burst (a fan-out) join the first batch
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, BATCH);
      const listed = [...new Set(batch.filter((j) => !j.owners).flatMap((j) => j.listed))];
      const online = listed.length > 0 ? await this.presence.online(listed) : new Set<string>();
      // Events of one tenant, kind and sender for the same offline devices become one write of their count (a burst to one device).
      const groups = new Map<string, { job: Job; events: number }>();
      for (const job of batch) {
        const offline = job.owners ? job.listed : job.listed.filter((id) => !online.has(id));
        if (!job.owners && offline.length === 0) continue;
        const key = JSON.stringify([job.tenantId, job.push.kind, job.owners, job.push.senderDeviceId ?? null, [...offline].sort()]);
        const prev = groups.get(key);
        const urgent = job.push.urgent || (prev?.job.push.urgent ?? false);
        groups.set(key, { job: { ...job, listed: offline, push: { ...job.push, urgent } }, events: (prev?.events ?? 0) + 1 });
      }
      for (const { job, events } of groups.values()) await this.wake(job, events);
    }
  }

  /**
   * Enqueue the pushes of `events` like events (the newest is `push`) for the offline devices of
   * `listed` / the owners with registrations; logs (event kind and tenant only) instead of throwing.
   */
  private async wake({ tenantId, push, listed, owners }: Job, events: number): Promise<void> {
    try {
      const targets = await withTenant(this.db, tenantId, (tx) => repo.targetsOf(tx, { deviceIds: listed, owners }, push.senderDeviceId));
      if (targets.length === 0) return;
      // Listed devices were checked in the batch; owner devices are known only now.
      const online = owners ? await this.presence.online([...new Set(targets.map((t) => t.device_id))]) : new Set<string>();
      const offline = targets.filter((t) => !online.has(t.device_id)).map((t) => t.push_token_id);
      if (offline.length === 0) return;
      await withTenant(this.db, tenantId, async (tx) => {
        const senderName = push.senderDeviceId ? await repo.deviceName(tx, push.senderDeviceId) : undefined;
        await repo.enqueue(tx, offline, push.kind, { event: push.kind, ...push.ids, ...(senderName ? { sender_name: senderName } : {}) }, push.urgent, events);
      });
      this.onEnqueued();
    } catch (err) {
      this.log.warn({ err, kind: push.kind, tenantId }, 'push enqueue failed');
    }
  }
}
