/**
 * `did:hub` method driver for the `did-resolver` package (contract §4.10, design §8.15): resolves a
 * DID over HTTP at the service's DIF Universal Resolver driver path
 * (`GET {baseUrl}/1.0/identifiers/{did}`) and answers the DID resolution result it serves,
 * errors included (`notFound`, `invalidDid`, `methodNotSupported`). Browser-safe: only `fetch`.
 *
 * @example
 * import { Resolver } from 'did-resolver';
 * const resolver = new Resolver(getResolver({ baseUrl: 'https://parley.example.com' }));
 * const { didDocument } = await resolver.resolve('did:hub:translator');
 */
import type { DIDResolutionResult, DIDResolver, ResolverRegistry } from 'did-resolver';
import type { KeyTransparency } from '../key-transparency/client.js';

/** The `fetch` the driver uses (the global one by default). */
export type DidFetch = (input: string, init: RequestInit) => Promise<Response>;

/** Options of {@link getResolver}. */
export interface HubResolverOptions {
  /** Base URL of the Parley service, e.g. `https://parley.example.com` (a trailing slash is ignored). */
  baseUrl: string;
  /** Custom fetch (tests, proxies); defaults to `globalThis.fetch`. */
  fetch?: DidFetch;
  /** An API key (`X-API-Key`): contract §8 allows 600 resolutions/min with one instead of 60 per IP. */
  apiKey?: string;
  /**
   * Check each resolved document's verification methods in the key directory (design §8.39):
   * a document whose keys the directory does not hold resolves to `invalidPublicKey` with a
   * message naming key transparency.
   */
  keyTransparency?: Pick<KeyTransparency, 'verifyDidDocument'>;
}

/** `Accept` of a resolution request (W3C DID Resolution, HTTP(S) binding). */
const ACCEPT = 'application/ld+json;profile="https://w3id.org/did-resolution", application/json';

const failure = (error: string, message: string): DIDResolutionResult => ({
  didResolutionMetadata: { error, message },
  didDocument: null,
  didDocumentMetadata: {},
});

function isResolutionResult(x: unknown): x is DIDResolutionResult {
  if (!x || typeof x !== 'object') return false;
  const r = x as Record<string, unknown>;
  return typeof r.didResolutionMetadata === 'object' && r.didResolutionMetadata !== null && 'didDocument' in r;
}

/**
 * A `did-resolver` registry with the `hub` method: `new Resolver(getResolver({baseUrl}))`.
 * The service's answer (200, 400 or 404) is returned as the resolution result; a network
 * failure or any other answer (429, 5xx, not a resolution result) resolves to
 * `didResolutionMetadata.error = "internalError"` with a `message`, never a thrown error.
 */
export function getResolver(options: HubResolverOptions): ResolverRegistry {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchFn: DidFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers: Record<string, string> = { accept: ACCEPT, ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) };

  const hub: DIDResolver = async (did) => {
    let res: Response;
    let text: string;
    try {
      res = await fetchFn(`${baseUrl}/1.0/identifiers/${did}`, { method: 'GET', headers });
      text = await res.text();
    } catch (err) {
      return failure('internalError', `resolution request failed: ${(err as Error)?.message ?? String(err)}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!isResolutionResult(body)) {
      const detail = body && typeof (body as { detail?: unknown }).detail === 'string' ? `: ${(body as { detail: string }).detail}` : '';
      return failure('internalError', `unexpected answer HTTP ${res.status}${detail}`);
    }
    if (body.didDocument && options.keyTransparency) {
      try {
        await options.keyTransparency.verifyDidDocument(body.didDocument);
      } catch (err) {
        const refused = (err as Error).name === 'KeyTransparencyError';
        return failure(refused ? 'invalidPublicKey' : 'internalError', refused ? (err as Error).message : `key transparency lookup failed: ${(err as Error).message}`);
      }
    }
    return {
      ...(body['@context'] !== undefined ? { '@context': body['@context'] } : {}),
      didResolutionMetadata: body.didResolutionMetadata,
      didDocument: body.didDocument ?? null,
      didDocumentMetadata: body.didDocumentMetadata ?? {},
    };
  };
  return { hub };
}
