/**
 * Web Push (design §8.36 "Push delivery"): RFC 8030 delivery of an RFC 8291 `aes128gcm`-encrypted
 * payload with RFC 8292 VAPID authorization, built by the `web-push` package
 * (`generateRequestDetails`) and POSTed through the webhook SSRF guard (modules/webhooks `http.ts`:
 * public addresses only unless `WEBHOOK_ALLOW_PRIVATE`, `https:` only unless `WEBHOOK_ALLOW_HTTP`).
 *
 * The registration token is the browser's PushSubscription JSON, `{endpoint, keys: {p256dh, auth}}`,
 * as a string ({@link parseSubscription}).
 */
import webpush from 'web-push';
import { BlockedTargetError, postWebhook, reason, type TargetPolicy, webhookUrlProblem } from '../webhooks/index.js';
import { outcomeOf, type PushMessage, type PushSender, type SendOutcome } from './sender.js';
import type { VapidDetails } from './vapid.js';

/** A browser push subscription (the fields the service uses). */
export interface WebSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

const B64URL = /^[A-Za-z0-9_-]+=*$/;

/** The subscription in `token`, or undefined when it is not a PushSubscription JSON with an endpoint and both keys. */
export function parseSubscription(token: string): WebSubscription | undefined {
  let v: unknown;
  try {
    v = JSON.parse(token);
  } catch {
    return undefined;
  }
  const s = v as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } | null } | null;
  const { endpoint, keys } = s ?? {};
  if (typeof endpoint !== 'string' || !keys || typeof keys.p256dh !== 'string' || typeof keys.auth !== 'string') return undefined;
  if (!B64URL.test(keys.p256dh) || !B64URL.test(keys.auth)) return undefined;
  if (Buffer.from(keys.p256dh, 'base64url').length !== 65 || Buffer.from(keys.auth, 'base64url').length !== 16) return undefined;
  return { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
}

/**
 * Why `token` may not be registered as a `web` push token under `policy` (a client-facing 400
 * detail), or undefined when it may: it must be a subscription ({@link parseSubscription}) whose
 * endpoint passes the webhook URL rules.
 */
export function webTokenProblem(token: string, policy: TargetPolicy): string | undefined {
  const sub = parseSubscription(token);
  if (!sub) return 'a web push token must be the PushSubscription JSON {endpoint, keys: {p256dh, auth}}';
  return webhookUrlProblem(sub.endpoint, policy, 'push endpoint');
}

/** Settings of {@link WebPushSender}. */
export interface WebPushOptions extends TargetPolicy {
  vapid: VapidDetails;
  /** Per-request timeout (ms). */
  timeoutMs: number;
}

/** The Web Push client. */
export class WebPushSender implements PushSender {
  readonly platform = 'web' as const;

  constructor(private readonly opts: WebPushOptions) {}

  async send(token: string, message: PushMessage, signal: AbortSignal): Promise<SendOutcome> {
    const sub = parseSubscription(token);
    if (!sub) return { status: null, error: 'malformed subscription', final: true };
    let details: ReturnType<typeof webpush.generateRequestDetails>;
    try {
      details = webpush.generateRequestDetails(sub, JSON.stringify(message.payload), {
        vapidDetails: this.opts.vapid,
        TTL: message.ttlSeconds,
        urgency: message.urgency,
        topic: message.collapseKey,
        contentEncoding: 'aes128gcm',
      });
    } catch {
      return { status: null, error: 'subscription keys unusable', final: true };
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(details.headers)) if (k.toLowerCase() !== 'content-length') headers[k] = String(v);
    try {
      return outcomeOf(await postWebhook(details.endpoint, headers, details.body ?? Buffer.alloc(0), { ...this.opts, signal }));
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof BlockedTargetError) return { status: null, error: err.message, final: true };
      return { status: null, error: reason(err, details.endpoint) };
    }
  }
}
