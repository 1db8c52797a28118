/**
 * DNS rebinding protection for a loopback listener (docs/decisions.md "Host names a loopback
 * listener serves"). A web page on another site can re-point its own name at 127.0.0.1 and then
 * call a service on the owner's machine as "same origin"; the browser still sends that name in
 * `Host` (and `Origin`). So while the service listens on a loopback address it answers only
 * requests whose `Host` names a loopback name or address or the host of `PUBLIC_URL`; anything
 * else is 403 before routing, WebSocket upgrades included. A service listening on another address
 * sits behind its own DNS and proxies and is not checked here.
 */
import { hostNameOf, isLoopbackHost } from '@parley/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../lib/errors.js';

/** The names a loopback listener answers to: loopback names and addresses, and `PUBLIC_URL`'s host. */
export function servesHostName(name: string | undefined, publicUrl: string): boolean {
  if (name === undefined) return false;
  return isLoopbackHost(name) || name === hostNameOf(publicUrl, true);
}

/**
 * Whether the request names this service: its `Host` (when present) and its `Origin` (when
 * present) are names {@link servesHostName} accepts. The development sign-in asks this of every
 * request, whatever the listener.
 */
export function namesThisService(req: FastifyRequest, publicUrl: string): boolean {
  const host = req.headers.host;
  if (host !== undefined && !servesHostName(hostNameOf(host), publicUrl)) return false;
  const origin = req.headers.origin;
  if (origin !== undefined && !servesHostName(hostNameOf(origin, true), publicUrl)) return false;
  return true;
}

/** Refuse (403) every request whose `Host` is not a name {@link servesHostName} accepts, when `listenHost` is a loopback address. */
export function registerHostCheck(app: FastifyInstance, listenHost: string, publicUrl: string): void {
  if (!isLoopbackHost(listenHost)) return;
  app.addHook('onRequest', async (req) => {
    const host = req.headers.host;
    if (host === undefined || servesHostName(hostNameOf(host), publicUrl)) return;
    throw forbidden(`Host ${JSON.stringify(host.slice(0, 100))} is not a name this server answers to (DNS rebinding protection): use a loopback name or address, or set PUBLIC_URL to the name clients use`);
  });
}
