/**
 * The owners' web app (design §8.30): its built files are served at `/` with `@fastify/static`
 * when the dashboard directory holds an `index.html`, with a strict Content-Security-Policy (no
 * inline script, connections to this origin only, no framing) on every file; any other GET of a
 * page path (not `/api/`, `/docs`, `/health`, `/.well-known`, `/1.0/`, `/contexts/`, `/metrics`)
 * that accepts HTML answers `index.html` (the app routes on the client). API 404s keep their
 * `{detail}`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageCsp } from './security-headers.js';

/**
 * Stripe.js's sources (Stripe's integration security guide, "Content Security Policy"): its script
 * and the frames of its Payment Element from js.stripe.com, 3-D Secure frames from
 * hooks.stripe.com, its API calls to api.stripe.com.
 */
export const STRIPE_JS_SOURCES = {
  scriptSrc: ['https://js.stripe.com', 'https://*.js.stripe.com'],
  frameSrc: ['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com'],
  connectSrc: ['https://api.stripe.com'],
} as const;

/**
 * The Content-Security-Policy of the app's files: this origin only, no inline script, no framing;
 * `connectSrc` adds origins the page must reach (the OIDC provider's discovery and token
 * endpoints when `OIDC_ISSUER` is set); `stripe` adds {@link STRIPE_JS_SOURCES} (Stripe is the
 * payment processor: the app makes payment methods with Stripe.js).
 */
export function dashboardCsp(options: { connectSrc?: string[]; stripe?: boolean } = {}): string {
  const stripe = options.stripe ? STRIPE_JS_SOURCES : undefined;
  return pageCsp({
    connectSrc: [...(options.connectSrc ?? []), ...(stripe?.connectSrc ?? [])],
    ...(stripe ? { scriptSrc: [...stripe.scriptSrc], frameSrc: [...stripe.frameSrc] } : {}),
  });
}

/** The policy without an OIDC provider (the embedded default). */
export const DASHBOARD_CSP = dashboardCsp();

/** Path prefixes that are never the app's pages. */
const RESERVED = ['/api/', '/docs', '/health', '/.well-known/', '/1.0/', '/contexts/', '/metrics'];

function secure(reply: { header(name: string, value: string): unknown }, csp: string): void {
  reply.header('content-security-policy', csp);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}

/** Whether the dashboard directory holds a built app. */
export function hasDashboard(dir: string): boolean {
  return existsSync(join(dir, 'index.html'));
}

/**
 * Serve the built app of `dir` (call only when {@link hasDashboard}); answers the not-found
 * fallback that serves `index.html` for page paths.
 */
export async function registerDashboard(app: FastifyInstance, dir: string, options: { connectSrc?: string[]; stripe?: boolean } = {}): Promise<(request: FastifyRequest, reply: FastifyReply) => boolean> {
  const csp = dashboardCsp(options);
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    setHeaders: (reply, path) => {
      secure(reply, csp);
      // Hashed asset names never change content; the page and the push service worker (a fixed name) are revalidated.
      void reply.header('cache-control', path.endsWith('.html') || path.endsWith('push-sw.js') ? 'no-cache' : 'public, max-age=31536000, immutable');
    },
  });
  return (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (RESERVED.some((p) => path === p.replace(/\/$/, '') || path.startsWith(p))) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    secure(reply, csp);
    void reply.header('cache-control', 'no-cache').sendFile('index.html');
    return true;
  };
}
