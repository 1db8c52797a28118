/**
 * Service-side helper to emit SPEC §6.1 events through the event bus, so that every instance
 * delivers them to its own sockets.
 */
import type { EventBus } from './bus.js';

/** WebSocket close codes (DESIGN §7). */
export const CLOSE = { revoked: 4001, forbidden: 4003, unauthorized: 4401 } as const;

export class Notifier {
  constructor(private readonly bus: EventBus) {}

  /** Send `{event, data}` to every socket of the listed devices. */
  toDevices(deviceIds: string[], event: string, data: unknown, excludeSocket?: string): Promise<void> {
    return this.bus.publish({ type: 'frame', to: { deviceIds }, event, data, ...(excludeSocket ? { excludeSocket } : {}) });
  }

  /** Send `{event, data}` to every owner-device socket of a tenant. */
  toOwners(tenantId: string, event: string, data: unknown): Promise<void> {
    return this.bus.publish({ type: 'frame', to: { ownersOfTenant: tenantId }, event, data });
  }

  /** Close every socket of a device, on every instance. */
  closeDevice(deviceId: string, code: number, reason: string): Promise<void> {
    return this.bus.publish({ type: 'close_device', deviceId, code, reason });
  }
}
