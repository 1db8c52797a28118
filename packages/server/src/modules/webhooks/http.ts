/**
 * The webhook POST (design §8.11) over node:http / node:https with the SSRF guard of `target.ts`:
 * the URL is re-checked (scheme, no userinfo), an IP-literal host must be public, and a host name
 * is resolved by {@link guardedLookup}, so the socket connects only to addresses that passed the
 * check (no DNS-rebinding window). No connection reuse (`agent: false`): every delivery resolves
 * and checks again. Redirects are not followed (a 3xx is an answer like any other).
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { BlockedTargetError, guardedLookup, hostOf, isPublicAddress, webhookUrlProblem, type Resolver, type TargetPolicy } from './target.js';

/** Options of {@link postWebhook}. */
export interface PostOptions extends TargetPolicy {
  /** Whole-request timeout (ms); on expiry the request fails with an error named `TimeoutError`. */
  timeoutMs: number;
  /** Aborts the request (shutdown); the request then fails with an `AbortError`. */
  signal?: AbortSignal;
  /** Host name resolver (tests); default `dns.lookup`. */
  resolve?: Resolver;
}

/**
 * POST `body` (JSON text, or bytes: an encrypted Web Push message, modules/push/web.ts) with
 * `headers` to `rawUrl`; answers the HTTP status once the response head arrives (the response body
 * is discarded).
 * @throws BlockedTargetError `blocked url` (scheme or userinfo not allowed) or `blocked address`
 *   (a non-public target while private targets are not allowed), before any connection is made.
 * @throws Error named `TimeoutError` after `timeoutMs`; any network error (`ECONNREFUSED`, TLS…).
 */
export function postWebhook(rawUrl: string, headers: Record<string, string>, body: string | Uint8Array, opts: PostOptions): Promise<number> {
  if (webhookUrlProblem(rawUrl, { ...opts, allowPrivate: true }) !== undefined) return Promise.reject(new BlockedTargetError('blocked url'));
  const url = new URL(rawUrl);
  const host = hostOf(url);
  if (!opts.allowPrivate && net.isIP(host) && !isPublicAddress(host)) return Promise.reject(new BlockedTargetError('blocked address'));
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  return new Promise<number>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
        lookup: guardedLookup(opts.allowPrivate, opts.resolve),
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      },
      (res) => {
        res.on('error', () => undefined);
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (err) => {
      if (timeout.aborted && !opts.signal?.aborted) {
        const e = new Error('timeout');
        e.name = 'TimeoutError';
        return reject(e);
      }
      reject(err);
    });
    req.end(body);
  });
}
