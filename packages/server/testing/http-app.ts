/**
 * A {@link TestApp} over real HTTP to a running service (a cluster's load balancer or one of its
 * instances), so the flows helpers written for `inject` drive it. `ownerToken` mints with the
 * development identity provider the instances share (their `DATA_DIR`).
 */
import type { InjectOptions } from 'fastify';
import type { DevIdentityProvider } from '../src/auth/dev-idp.js';
import type { TestApp } from './harness.js';

/** The flows helpers over real HTTP to `base` (they were written for `inject`). */
export function httpApp(base: string, idp: DevIdentityProvider): TestApp {
  return {
    baseUrl: base,
    ownerToken: (sub: string, claims?: Record<string, unknown>) => idp.mint(sub, claims ? { claims } : {}),
    async request(o: InjectOptions) {
      const res = await fetch(`${base}${String(o.url)}`, {
        method: o.method ?? 'GET',
        headers: { ...(o.payload !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.headers as Record<string, string>) },
        ...(o.payload !== undefined ? { body: JSON.stringify(o.payload) } : {}),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body, headers: Object.fromEntries(res.headers) };
    },
  } as unknown as TestApp;
}
