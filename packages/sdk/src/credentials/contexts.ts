// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types of untyped libraries, also for programs (tests) that include no src/*.d.ts
/// <reference path="./vendor.d.ts" />
/**
 * The JSON-LD contexts the SDK bundles (DESIGN §8.16), so that credentials verify offline: the
 * standard ones from their maintained packages (the same pinned versions as the service) and the
 * service's own vocabulary context. Browser-safe: no Node-only imports.
 *
 * The trust context is defined once, in `trust-context-v1.json` (exported as
 * `@parley/sdk/contexts/trust-v1.json`, which the service imports to serve
 * `GET /contexts/trust/v1`). Its term `@id`s are fragments relative to the URL the context is
 * served at, and that URL is `PUBLIC_URL/contexts/trust/v1`: it depends on the deployment, so
 * {@link trustContext} builds the document for a URL.
 */
import { TRUST_CONTEXT_PATH } from '@parley/protocol';
import { contexts as credentialsContexts } from '@digitalbazaar/credentials-context';
import didContext from 'did-context';
import ed25519Context from 'ed25519-signature-2020-context';
import trustTemplate from './trust-context-v1.json' with { type: 'json' };

/** VC Data Model 1.1 context. */
export const CREDENTIALS_V1_URL = 'https://www.w3.org/2018/credentials/v1';
/** VC Data Model 2.0 context (bundled by @digitalbazaar/credentials-context). */
export const CREDENTIALS_V2_URL = 'https://www.w3.org/ns/credentials/v2';
/** DID Core v1 context. */
export const DID_V1_URL: string = didContext.CONTEXT_URL;
/** Ed25519Signature2020 suite context. */
export const ED25519_2020_URL: string = ed25519Context.CONTEXT_URL;

/** Path of the service vocabulary context, at the service root (outside `/api/v1`). */
export { TRUST_CONTEXT_PATH };

/** A JSON-LD context document: `{"@context": {...}}`. */
export interface JsonLdContextDocument {
  '@context': Record<string, unknown>;
}

/**
 * The trust context's URL for a service base URL (its `PUBLIC_URL`, e.g.
 * `https://parley.example.com`; a trailing slash is ignored): `<baseUrl>/contexts/trust/v1`.
 * Credentials the service issues name this URL in their `@context`.
 */
export const trustContextUrl = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, '')}${TRUST_CONTEXT_PATH}`;

/**
 * The service vocabulary context as served at `url`: `TrustTierCredential` (a credential type)
 * and `trustTier` (the subject's tier, `certified` | `enterprise`), each with `@id`
 * `<url>#<term>`; `@protected`, like the VC contexts, so no later context can redefine them.
 * Every term `@id` of the template that is a fragment (`#…`) is resolved against `url` by plain
 * concatenation (the service builds its document the same way, so both are equal byte for byte).
 */
export function trustContext(url: string): JsonLdContextDocument {
  const terms = Object.entries(trustTemplate['@context'] as Record<string, unknown>).map(([term, def]) => {
    const id = def && typeof def === 'object' ? (def as { '@id'?: unknown })['@id'] : undefined;
    return [term, typeof id === 'string' && id.startsWith('#') ? { ...(def as object), '@id': `${url}${id}` } : def];
  });
  return { '@context': Object.fromEntries(terms) };
}

/**
 * The bundled standard contexts by URL: credentials v1 and v2 (and v2's undefined-terms
 * context), DID v1, Ed25519Signature2020 v1.
 */
export const STANDARD_CONTEXTS: ReadonlyMap<string, object> = new Map<string, object>([
  ...credentialsContexts,
  ...didContext.contexts,
  ...ed25519Context.contexts,
]);
