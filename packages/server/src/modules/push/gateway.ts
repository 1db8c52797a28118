/**
 * Push delivery seam (contract §4.7). A `PushGateway` wakes a device through its platform's push
 * service (APNs, FCM, Web Push). Pushes carry no message content (zero knowledge): only an event
 * name and opaque ids, after which the device fetches its ciphertext itself. Delivery wiring
 * (who is pushed when) is a later step; `LoggingPushGateway` is the default implementation.
 */

import type { PushPlatform } from '@parley/protocol';

/** Push platforms accepted by `POST /push/register` (from the wire contract). */
export { PUSH_PLATFORMS, type PushPlatform } from '@parley/protocol';

/** Where a push goes: one registered token of one device. */
export interface PushTarget {
  tenantId: string;
  deviceId: string;
  platform: PushPlatform;
  /** The platform's device token (a secret: never logged). */
  token: string;
}

/** What a push says: an event name and opaque ids, never message content. */
export interface PushNotification {
  event: string;
  data?: Record<string, string>;
}

/** Sends pushes to devices. */
export interface PushGateway {
  /** Deliver `notification` to `target`; resolves when the platform accepted it (or it was dropped). */
  send(target: PushTarget, notification: PushNotification): Promise<void>;
}

/** The minimal logger `LoggingPushGateway` needs (a pino / Fastify logger fits). */
export interface PushLogger {
  info(obj: object, msg: string): void;
}

/** A gateway that only logs each push (device id, platform, event; never the token). */
export class LoggingPushGateway implements PushGateway {
  constructor(private readonly log: PushLogger) {}

  /** Log the push instead of delivering it. */
  async send(target: PushTarget, notification: PushNotification): Promise<void> {
    this.log.info({ device_id: target.deviceId, platform: target.platform, event: notification.event }, 'push (logging gateway, not delivered)');
  }
}
