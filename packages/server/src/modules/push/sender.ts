/**
 * One push platform's client (design §8.36 "Push delivery"): Web Push (web.ts), APNs (apns.ts),
 * FCM (fcm.ts). A sender makes one request to its push service and answers what came back; the
 * worker (worker.ts) decides what an answer means (sent, retry, registration gone, failed).
 */
import type { PushPlatform } from '@parley/protocol';
import type { PushPayload } from './payload.js';

/** What one push carries besides its payload. */
export interface PushMessage {
  payload: PushPayload;
  /** The platform collapse key (Web Push `Topic`, `apns-collapse-id`, FCM `collapse_key`): the push kind. */
  collapseKey: string;
  urgency: 'high' | 'normal';
  /** How long the push service keeps it for an unreachable device (seconds). */
  ttlSeconds: number;
}

/**
 * The push service's answer: `status` its HTTP status (null when none came: network error,
 * timeout), `error` a short reason (null on success; never a token, URL or body). `final` marks a
 * failure no retry can help (a refused endpoint, a malformed registration).
 */
export interface SendOutcome {
  status: number | null;
  error: string | null;
  final?: boolean;
}

/** A platform client. */
export interface PushSender {
  readonly platform: PushPlatform;
  /**
   * Send `message` to the registration `token` (for `web` the PushSubscription JSON). Rejects only
   * when `signal` aborts (shutdown); every other failure is an outcome.
   */
  send(token: string, message: PushMessage, signal: AbortSignal): Promise<SendOutcome>;
  /** Release connections (APNs keeps an HTTP/2 session). */
  close?(): Promise<void>;
}

/** The outcome of an HTTP answer `status`: success for 2xx, else `HTTP <status>`. */
export const outcomeOf = (status: number): SendOutcome => ({ status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` });
