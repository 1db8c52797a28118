/**
 * The service's JSON-LD vocabulary context (design §8.16), served at `GET /contexts/trust/v1`
 * and bundled by the SDK for offline credential verification: `TrustTierCredential` (a
 * credential type) and `trustTier` (the subject's tier, `certified` | `enterprise`). The terms
 * are defined once, in `trust-context-v1.json`, with fragment `@id`s (`#<term>`) relative to the
 * URL the context is served at, which depends on the deployment (`PUBLIC_URL`).
 */
import template from './trust-context-v1.json' with { type: 'json' };
import { TRUST_CONTEXT_PATH } from './areas/credentials.js';

/**
 * The trust context's URL for a service base URL (its `PUBLIC_URL`, e.g.
 * `https://parley.example.com`; a trailing slash is ignored): `<baseUrl>/contexts/trust/v1`.
 * Credentials the service issues name this URL in their `@context`.
 */
export const trustContextUrl = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, '')}${TRUST_CONTEXT_PATH}`;

/**
 * The trust context document as served at `url`: every term `@id` of the template that is a
 * fragment is resolved against `url` by plain concatenation, so the service and the SDK build
 * the same document byte for byte. `@protected`, like the VC contexts, so no later context can
 * redefine the terms.
 */
export function trustContext(url: string): { '@context': Record<string, unknown> } {
  const terms = Object.entries(template['@context'] as Record<string, unknown>).map(([term, def]) => {
    const id = def && typeof def === 'object' ? (def as { '@id'?: unknown })['@id'] : undefined;
    return [term, typeof id === 'string' && id.startsWith('#') ? { ...(def as object), '@id': `${url}${id}` } : def];
  });
  return { '@context': Object.fromEntries(terms) };
}
