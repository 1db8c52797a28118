// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types of untyped libraries, also for programs (tests) that include no src/*.d.ts
/// <reference path="./vendor.d.ts" />
/**
 * The JSON-LD contexts the SDK bundles (design §8.16), so that credentials verify offline: the
 * standard ones from their maintained packages (the same pinned versions as the service) and the
 * service's own vocabulary context. Browser-safe: no Node-only imports.
 *
 * The trust context is defined once, in the wire contract (`@parley/protocol` `trustContext`,
 * which the service serves at `GET /contexts/trust/v1`).
 */
import { TRUST_CONTEXT_PATH, trustContext, trustContextUrl } from '@parley/protocol';
import { contexts as credentialsContexts } from '@digitalbazaar/credentials-context';
import didContext from 'did-context';
import ed25519Context from 'ed25519-signature-2020-context';

/** VC Data Model 1.1 context. */
export const CREDENTIALS_V1_URL = 'https://www.w3.org/2018/credentials/v1';
/** VC Data Model 2.0 context (bundled by @digitalbazaar/credentials-context). */
export const CREDENTIALS_V2_URL = 'https://www.w3.org/ns/credentials/v2';
/** DID Core v1 context. */
export const DID_V1_URL: string = didContext.CONTEXT_URL;
/** Ed25519Signature2020 suite context. */
export const ED25519_2020_URL: string = ed25519Context.CONTEXT_URL;

/** Path of the service vocabulary context, at the service root (outside `/api/v1`). */
export { TRUST_CONTEXT_PATH, trustContext, trustContextUrl };

/** A JSON-LD context document: `{"@context": {...}}`. */
export interface JsonLdContextDocument {
  '@context': Record<string, unknown>;
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
