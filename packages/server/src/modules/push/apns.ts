/**
 * APNs (design §8.36 "Push delivery"): Apple's HTTP/2 provider API with token authentication (a
 * `.p8` signing key, its key id and team id: `APNS_KEY_FILE`, `APNS_KEY_ID`, `APNS_TEAM_ID`), through
 * `@parse/node-apn`. Every push is an `alert` push to `APNS_TOPIC` (the app's bundle id) with
 * `mutable-content` set, so the app's notification service extension can fetch what waits; the
 * alert itself is a localization key (`PARLEY_<EVENT>`), never content. The metadata travels as
 * the custom key `parley`. `apns-collapse-id` is the push kind, `apns-priority` 10 for high urgency
 * (5 otherwise), `apns-expiration` the TTL. `APNS_ENDPOINT` (`https://host[:port]`) replaces
 * Apple's production host (the sandbox, a test double).
 */
import apn from '@parse/node-apn';
import { outcomeOf, type PushMessage, type PushSender, type SendOutcome } from './sender.js';

/** Settings of {@link ApnsSender}: `PushConfig['apns']` with the key read. */
export interface ApnsOptions {
  /** The `.p8` key (PEM text). */
  key: string;
  keyId: string;
  teamId: string;
  topic: string;
  /** `https://host[:port]` instead of `api.push.apple.com`. */
  endpoint?: string | undefined;
  /** Per-request timeout (ms). */
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM; tests). */
  ca?: string[];
}

export class ApnsSender implements PushSender {
  readonly platform = 'apns' as const;
  private readonly provider: apn.Provider;

  constructor(private readonly opts: ApnsOptions) {
    const url = opts.endpoint ? new URL(opts.endpoint) : undefined;
    this.provider = new apn.Provider({
      token: { key: opts.key, keyId: opts.keyId, teamId: opts.teamId },
      production: true,
      ...(url ? { address: url.hostname, port: Number(url.port || 443) } : {}),
      ...(opts.ca ? { ca: opts.ca } : {}),
      requestTimeout: opts.timeoutMs,
      connectionRetryLimit: 0, // the outbox retries (worker.ts)
    } as apn.ProviderOptions);
  }

  async send(token: string, message: PushMessage, signal: AbortSignal): Promise<SendOutcome> {
    if (signal.aborted) throw signal.reason;
    const note = new apn.Notification();
    note.topic = this.opts.topic;
    note.pushType = 'alert';
    note.collapseId = message.collapseKey;
    note.priority = message.urgency === 'high' ? 10 : 5;
    note.expiry = Math.floor(Date.now() / 1000) + message.ttlSeconds;
    note.mutableContent = true;
    note.alert = { 'loc-key': `PARLEY_${message.payload.event.toUpperCase()}` } as apn.NotificationAlertOptions;
    note.payload = { parley: message.payload };
    const { sent, failed } = await this.provider.send(note, token);
    if (sent.length > 0) return outcomeOf(200);
    const f = failed[0];
    if (!f) return { status: null, error: 'no answer' };
    // A number is the HTTP status; node-apn reports a timeout, an abort or a network error as a text status.
    if (typeof f.status === 'number') return { status: f.status, error: f.response?.reason ? `HTTP ${f.status} ${f.response.reason}` : `HTTP ${f.status}` };
    return { status: null, error: f.error?.message.slice(0, 200) ?? 'request failed' };
  }

  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}
