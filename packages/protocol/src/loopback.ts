/**
 * Loopback names and addresses, shared by the service (its development sign-in and the Host check
 * that protects a loopback listener from DNS rebinding) and the SDK's plugin (where a plugin token
 * may be sent). Loopback is 127.0.0.0/8 (RFC 1122 §3.2.1.3), `::1` (RFC 4291 §2.5.3), their
 * IPv4-mapped forms, and the name `localhost` (RFC 6761 §6.3).
 */

/** The WHATWG URL parser of every runtime the package serves (Node.js, browsers); this package compiles without DOM or Node.js types. */
declare const URL: new (input: string) => { hostname: string; pathname: string; search: string; hash: string; username: string; password: string };

/** Whether `address` (a socket's remote address, an IP literal) is a loopback address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase();
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Whether `host` (a name or address, IPv6 in brackets or not, a trailing dot or not) is `localhost` or a loopback address. */
export function isLoopbackHost(host: string): boolean {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  // The URL parser writes an IPv4-mapped address in hex (::ffff:127.0.0.1 → ::ffff:7f00:1).
  return h === 'localhost' || isLoopbackAddress(h) || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
}

/** Whether a URL names a loopback host. A string that is not a URL is not loopback. */
export function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * The host name of an HTTP `Host` header value or an `Origin` (`name`, `name:port`, `[v6]:port`,
 * `scheme://name:port`), lowercased as the URL parser normalizes it (`127.1` → `127.0.0.1`), or
 * undefined when it is not one.
 */
export function hostNameOf(value: string, isOrigin = false): string | undefined {
  try {
    const u = new URL(isOrigin ? value : `http://${value}`);
    if (u.pathname !== '/' || u.search || u.hash || u.username || u.password) return undefined;
    return u.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
