/**
 * Webhook target policy (SSRF guard, design §8.11; docs/decisions.md "Webhook delivery").
 *
 * - Registration ({@link webhookUrlProblem}): `https:` only (`http:` too with
 *   `WEBHOOK_ALLOW_HTTP`), no userinfo, at most {@link MAX_WEBHOOK_URL_LENGTH} characters, and an
 *   IP-literal host must be a public address (unless `WEBHOOK_ALLOW_PRIVATE`). Host names are not
 *   resolved here: what a name points to can change, so it is checked on every delivery.
 * - Delivery ({@link guardedLookup}, used by `http.ts`): every address a host name resolves to
 *   must be public, and the connection is made to exactly the addresses that were checked (the
 *   lookup hands them to the socket), so there is no window for DNS rebinding.
 *
 * "Public" is `ipaddr.js`'s `unicast` range: loopback, RFC 1918 private, unique-local (fc00::/7),
 * link-local (169.254/16, fe80::/10), CGNAT (100.64/10), multicast, unspecified, broadcast,
 * documentation, benchmarking, 6to4 / Teredo / NAT64 (which embed IPv4) and the other special
 * ranges are not. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is judged as the IPv4 address. An IPv6
 * address must also lie in IANA's global unicast block 2000::/3, which leaves out the deprecated
 * IPv4-compatible form (`::a.b.c.d`, e.g. `[::127.0.0.1]`) and every other unallocated block.
 */
import dns from 'node:dns';
import net from 'node:net';
import { MAX_WEBHOOK_URL_LENGTH } from '@parley/protocol';
import ipaddr from 'ipaddr.js';

/** Longest accepted webhook URL (characters; the wire contract's limit). */
export { MAX_WEBHOOK_URL_LENGTH };

/** What the deployment allows (`WEBHOOK_ALLOW_HTTP`, `WEBHOOK_ALLOW_PRIVATE`). */
export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/**
 * A refused delivery target; `message` is the short reason stored as the delivery's
 * `last_error` (`blocked address` or `blocked url`). Carries no URL.
 */
export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET';
  constructor(reason: 'blocked address' | 'blocked url') {
    super(reason);
    this.name = 'BlockedTargetError';
  }
}

/**
 * The IPv6 space a public target may lie in: IANA's global unicast block 2000::/3 (RFC 4291 §2.4)
 * and IPv4-mapped addresses (judged as their IPv4 address). Checked with node's own address
 * parser, which reads `::a.b.c.d` as the IPv4-compatible address it is (ipaddr.js reads it as
 * IPv4-mapped).
 */
const ROUTABLE_V6 = new net.BlockList();
ROUTABLE_V6.addSubnet('2000::', 3, 'ipv6');
ROUTABLE_V6.addSubnet('::ffff:0:0', 96, 'ipv6');

/** Whether `ip` (IPv4 or IPv6 text) is a public unicast address; false for anything unparsable. */
export function isPublicAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0 || (family === 6 && !ROUTABLE_V6.check(ip, 'ipv6'))) return false;
  try {
    return ipaddr.process(ip).range() === 'unicast';
  } catch {
    return false;
  }
}

/** The URL's host without IPv6 brackets (`[::1]` -> `::1`). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Why `raw` may not be registered as a webhook URL under `policy`, or undefined when it may.
 * The answer is a client-facing 400 detail starting with `label` (the telemetry export endpoint
 * passes its own: the same rules guard it).
 */
export function webhookUrlProblem(raw: string, policy: TargetPolicy, label = 'webhook url'): string | undefined {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `${label} must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${label} is not a valid absolute URL`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? `${label} must use https or http` : `${label} must use https`;
  }
  if (url.username || url.password) return `${label} must not contain credentials (user:pass@)`;
  const host = hostOf(url);
  if (!host) return `${label} must name a host`;
  if (!policy.allowPrivate && net.isIP(host) && !isPublicAddress(host)) {
    return `${label} must not point to a loopback, private, link-local or other non-public address`;
  }
  return undefined;
}

/** A resolver with `dns.lookup`'s `all: true` shape (injectable for tests). */
export type Resolver = (hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/**
 * A `lookup` for `net` / `http(s).request` that resolves with `resolve` (default `dns.lookup`)
 * and, unless `allowPrivate`, fails with {@link BlockedTargetError} `blocked address` when ANY
 * resolved address is not public. The socket connects only to the addresses handed back here.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = dns.lookup): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) return callback(new BlockedTargetError('blocked address'), '');
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
