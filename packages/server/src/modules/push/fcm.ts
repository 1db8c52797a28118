/**
 * FCM (design §8.36 "Push delivery"): the Firebase Cloud Messaging HTTP v1 API
 * (`POST /v1/projects/{project_id}/messages:send`) authorized by an OAuth 2.0 access token that
 * `google-auth-library` obtains with the service account's signed JWT (RFC 7523; scope
 * `firebase.messaging`) and caches until it expires. The service account file is
 * `FCM_SERVICE_ACCOUNT_FILE` (the JSON Firebase issues); its `token_uri` is where tokens come from
 * (Google's endpoint, or a test double), and `FCM_ENDPOINT` replaces `https://fcm.googleapis.com`.
 *
 * A push is a data message (`data`: the metadata as strings, never content) with the collapse key
 * and priority set for each platform FCM reaches: Android `collapse_key`, `priority` HIGH / NORMAL,
 * `ttl`; APNs `apns-collapse-id`, `apns-priority`, `apns-expiration`; Web Push `Topic`, `Urgency`, `TTL`.
 */
import { JWT } from 'google-auth-library';
import { reason } from '../webhooks/index.js';
import { outcomeOf, type PushMessage, type PushSender, type SendOutcome } from './sender.js';

/** The fields of a Google service account key file the sender uses. */
export interface ServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
  token_uri?: string;
}

/** Google's OAuth 2.0 token endpoint, where `google-auth-library` sends its JWT grants. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

/**
 * The service account in `json` (a key file's text).
 * @throws Error naming the missing field when it is not a service account key.
 */
export function parseServiceAccount(json: string): ServiceAccount {
  const v = JSON.parse(json) as Partial<Record<keyof ServiceAccount, unknown>>;
  for (const k of ['project_id', 'client_email', 'private_key'] as const) {
    if (typeof v[k] !== 'string' || v[k] === '') throw new Error(`FCM service account has no ${k}`);
  }
  return { project_id: v.project_id as string, client_email: v.client_email as string, private_key: v.private_key as string, ...(typeof v.token_uri === 'string' ? { token_uri: v.token_uri } : {}) };
}

/** Settings of {@link FcmSender}. */
export interface FcmOptions {
  account: ServiceAccount;
  /** Base URL instead of `https://fcm.googleapis.com`. */
  endpoint?: string | undefined;
  /** Per-request timeout (ms). */
  timeoutMs: number;
}

export class FcmSender implements PushSender {
  readonly platform = 'fcm' as const;
  private readonly auth: JWT;
  private readonly url: string;

  constructor(private readonly opts: FcmOptions) {
    const { account } = opts;
    this.auth = new JWT({ email: account.client_email, key: account.private_key, scopes: [SCOPE] });
    const tokenUri = account.token_uri;
    if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
      // google-auth-library posts its grant to Google's endpoint; the account names another one.
      this.auth.transporter.interceptors.request.add({
        resolved: async (config) => {
          if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUri);
          return config;
        },
      });
    }
    this.url = `${(opts.endpoint ?? 'https://fcm.googleapis.com').replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
  }

  async send(token: string, message: PushMessage, signal: AbortSignal): Promise<SendOutcome> {
    let access: string | null | undefined;
    try {
      access = (await this.auth.getAccessToken()).token;
    } catch (err) {
      if (signal.aborted) throw err;
      return { status: null, error: `access token: ${reason(err, this.url)}` };
    }
    if (!access) return { status: null, error: 'access token: none issued' };
    const data = Object.fromEntries(Object.entries(message.payload).map(([k, v]) => [k, String(v)]));
    const high = message.urgency === 'high';
    const body = {
      message: {
        token,
        data,
        android: { collapse_key: message.collapseKey, priority: high ? 'HIGH' : 'NORMAL', ttl: `${message.ttlSeconds}s` },
        apns: {
          headers: { 'apns-collapse-id': message.collapseKey, 'apns-priority': high ? '10' : '5', 'apns-expiration': String(Math.floor(Date.now() / 1000) + message.ttlSeconds) },
        },
        webpush: { headers: { Topic: message.collapseKey, Urgency: message.urgency, TTL: String(message.ttlSeconds) } },
      },
    };
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.opts.timeoutMs)]),
      });
      await res.body?.cancel();
      return outcomeOf(res.status);
    } catch (err) {
      if (signal.aborted) throw err;
      return { status: null, error: reason(err, this.url) };
    }
  }
}
