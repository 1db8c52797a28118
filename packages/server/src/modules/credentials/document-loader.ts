/**
 * The offline JSON-LD document loader of design §8.16. It answers from bundled data only:
 * - the standard contexts (credentials v1 and v2, DID v1, Ed25519Signature2020 v1) and the
 *   service's trust context (contexts.ts);
 * - `did:hub:<address>` DIDs (the DID document) and their verification-method URLs
 *   (`did:hub:<address>#<key-id>`: the method with the document's `@context`), resolved from our
 *   own data through the hub DID service (which also answers the platform issuer's DID).
 * Every other URL (remote contexts, other DID methods) is refused with an error and never
 * fetched, so a credential that needs one does not verify.
 */
import { normalizeHubAddress } from '../hub/index.js';
import { STANDARD_CONTEXTS, trustContext } from './contexts.js';
import type { DocumentLoader, JsonObject } from './ld.js';

/** Resolves a hub address to its DID document (null when unknown): the hub DID service's `resolve`. */
export interface HubDidResolver {
  resolve(address: string): Promise<object | null>;
}

export interface DocumentLoaderOptions {
  /** URL of the service trust context (`PUBLIC_URL/contexts/trust/v1`). */
  trustContextUrl: string;
  dids: HubDidResolver;
}

/** A `did:hub` DID URL split into the (stored, lowercase) address and the optional fragment. */
export interface HubDidUrl {
  did: string;
  address: string;
  fragment: string | undefined;
}

/**
 * Parse `did:hub:<address>` or `did:hub:<address>#<fragment>`; null for anything else, including
 * an address that breaks design §8.13 or is not in its stored lowercase form (DIDs compare
 * case-sensitively).
 */
export function parseHubDid(url: string): HubDidUrl | null {
  const m = /^did:hub:([^#?/]+)(?:#(.+))?$/.exec(url);
  if (!m || normalizeHubAddress(m[1]!) !== m[1]) return null;
  return { did: `did:hub:${m[1]}`, address: m[1]!, fragment: m[2] };
}

/** Thrown by the loader for a URL it does not serve. */
export class DocumentNotFound extends Error {}

/**
 * A document loader for one verification or signing run. DID documents are cached for the life
 * of the loader (a verification loads the same DID several times), so create one per run.
 */
export function createDocumentLoader(opts: DocumentLoaderOptions): DocumentLoader {
  const statics = new Map<string, object>([...STANDARD_CONTEXTS, [opts.trustContextUrl, trustContext(opts.trustContextUrl)]]);
  const dids = new Map<string, Promise<JsonObject | null>>();
  const didDocument = (address: string) => {
    let doc = dids.get(address);
    if (!doc) {
      doc = opts.dids.resolve(address) as Promise<JsonObject | null>;
      dids.set(address, doc);
    }
    return doc;
  };
  const answer = (url: string, document: unknown) => ({ contextUrl: null, documentUrl: url, document });

  return async (url: string) => {
    const bundled = statics.get(url);
    if (bundled) return answer(url, bundled);
    const hub = parseHubDid(url);
    if (!hub) throw new DocumentNotFound(`refusing to load ${url}: only bundled contexts and did:hub DIDs are resolved (no remote fetch)`);
    const doc = await didDocument(hub.address);
    if (!doc) throw new DocumentNotFound(`${hub.did} is not registered`);
    if (hub.fragment === undefined) return answer(url, doc);
    const methods = Array.isArray(doc.verificationMethod) ? (doc.verificationMethod as JsonObject[]) : [];
    const method = methods.find((m) => m.id === url);
    if (!method) throw new DocumentNotFound(`${url} is not a verification method of ${hub.did}`);
    return answer(url, { '@context': doc['@context'], ...method });
  };
}
