/**
 * Service-side helper to emit contract §6.1 events through the event bus, so that every instance
 * delivers them to its own sockets, and to hand the same events to the webhook outbox
 * (design §8.11) for devices that registered a webhook URL, and to any other sink added (the push
 * trigger, design §8.36, which wakes devices without a live socket).
 */
import { WS_CLOSE, type WsServiceEventName } from '@parley/protocol';
import type { Audience, EventBus } from './bus.js';

/** WebSocket close codes of the service's refusals (@parley/protocol `WS_CLOSE`). */
export const CLOSE = WS_CLOSE;

/**
 * Where events also go for webhook delivery (modules/webhooks). `enqueue` decides which event
 * types are webhook events and strips anything that must not leave (ciphertext). Errors are the
 * sink's to log: a failed enqueue never fails the socket delivery.
 */
export interface WebhookSink {
  enqueue(tenantId: string, audience: Audience, event: string, data: unknown): Promise<void>;
  /** False when `enqueue` would ignore `event` (lets a batch of frames skip one call per frame). */
  handles?(event: string): boolean;
}

export class Notifier {
  private webhooks: WebhookSink | undefined;
  private readonly others: WebhookSink[] = [];

  constructor(private readonly bus: EventBus) {}

  /** Attach the webhook outbox (set once by the composition root). */
  setWebhookSink(sink: WebhookSink): void {
    this.webhooks = sink;
  }

  /** Attach another sink of the same events, called after the webhook outbox (the push trigger; set once by the composition root). */
  addSink(sink: WebhookSink): void {
    this.others.push(sink);
  }

  /** Hand `{event, data}` for `audience` to every sink that handles `event`, one after the other. */
  private async sink(tenantId: string, audience: Audience, event: string, data: unknown): Promise<void> {
    if (this.webhooks) await this.webhooks.enqueue(tenantId, audience, event, data);
    for (const s of this.others) if (s.handles?.(event) !== false) await s.enqueue(tenantId, audience, event, data);
  }

  /** Send `{event, data}` to every socket of the listed devices of a tenant (and their webhooks). */
  async toDevices(tenantId: string, deviceIds: string[], event: WsServiceEventName, data: unknown, excludeSocket?: string): Promise<void> {
    await this.bus.publish({ type: 'frame', to: { deviceIds }, event, data, ...(excludeSocket ? { excludeSocket } : {}) });
    await this.sink(tenantId, { deviceIds }, event, data);
  }

  /**
   * Send several frames of one `event`, each `{event, data}` to every socket of its listed devices
   * (and their webhooks), as ONE bus message (a room message's fan-out, one frame per envelope).
   */
  async toEach(tenantId: string, event: WsServiceEventName, frames: { deviceIds: string[]; data: unknown }[]): Promise<void> {
    if (frames.length === 0) return;
    await this.bus.publish({ type: 'frames', event, frames });
    const sinks = [this.webhooks, ...this.others].filter((s): s is WebhookSink => s !== undefined && s.handles?.(event) !== false);
    for (const s of sinks) for (const f of frames) await s.enqueue(tenantId, { deviceIds: f.deviceIds }, event, f.data);
  }

  /** Send `{event, data}` to every owner-device socket of a tenant (and their webhooks). */
  async toOwners(tenantId: string, event: WsServiceEventName, data: unknown): Promise<void> {
    await this.bus.publish({ type: 'frame', to: { ownersOfTenant: tenantId }, event, data });
    await this.sink(tenantId, { ownersOfTenant: tenantId }, event, data);
  }

  /** Close every socket of a device, on every instance. */
  closeDevice(deviceId: string, code: number, reason: string): Promise<void> {
    return this.bus.publish({ type: 'close_device', deviceId, code, reason });
  }
}
