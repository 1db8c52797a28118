/**
 * Browser hardening headers on every answer: `X-Content-Type-Options: nosniff`, and a
 * Content-Security-Policy for answers that set none of their own (the web app's files and the
 * API docs set theirs): `default-src 'none'; frame-ancestors 'none'` for data (JSON, blobs, text),
 * so nothing the API answers runs or loads anything when opened in a browser or framed, and
 * `frame-ancestors 'none'` alone for the other HTML answers (the trust report's standalone page
 * keeps its inline CSS).
 */
import type { FastifyInstance } from 'fastify';

/** The policy of API answers that are not pages. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The policy of HTML answers that bring no policy of their own. */
const HTML_CSP = "frame-ancestors 'none'";

/**
 * The Content-Security-Policy of a page served from this origin: scripts, styles, images and fonts
 * of this origin only, no plugins, no framing. `styleSrc` / `fontSrc` add sources beyond `'self'`;
 * `connectSrc` adds origins the page must reach; `scriptSrc` / `frameSrc` add origins of scripts
 * and frames the page loads (a payment processor's). Used by the web app (`dashboard.ts`) and the
 * API docs ({@link docsCsp}).
 */
export function pageCsp(o: { styleSrc?: string[]; fontSrc?: string[]; connectSrc?: string[]; scriptSrc?: string[]; frameSrc?: string[] } = {}): string {
  const directive = (name: string, extra: string[] = []) => [`${name} 'self'`, ...extra].join(' ');
  return [
    "default-src 'self'",
    directive('script-src', o.scriptSrc),
    ...(o.frameSrc?.length ? [directive('frame-src', o.frameSrc)] : []),
    directive('style-src', o.styleSrc),
    "img-src 'self' data:",
    directive('font-src', o.fontSrc),
    directive('connect-src', o.connectSrc),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The Content-Security-Policy of the Swagger UI pages (`/docs`), also that of the AsyncAPI page
 * (`/docs/asyncapi`, script-free, one inline style): its scripts and styles are files
 * of this origin, but the UI sets inline styles; the document it loads (`/docs/json`) is on this
 * origin, and "Try it out" calls the documented server (`connectSrc`, the `PUBLIC_URL` origin).
 */
export function docsCsp(connectSrc: string[] = []): string {
  return pageCsp({ styleSrc: ["'unsafe-inline'"], fontSrc: ['data:'], connectSrc });
}

/** Add `nosniff` to every answer and the default policy to answers without one. */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    void reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('content-security-policy')) {
      const type = reply.getHeader('content-type');
      void reply.header('content-security-policy', typeof type === 'string' && type.startsWith('text/html') ? HTML_CSP : API_CSP);
    }
    return payload;
  });
}
