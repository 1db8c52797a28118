/**
 * An offline JSON-LD document loader for verifying (or signing) credentials of the Parley service
 * with Linked Data libraries such as `@digitalbazaar/vc` (design §8.16). It answers:
 * - the bundled contexts (contexts.ts): credentials v1 and v2, DID v1, Ed25519Signature2020 v1,
 *   and the service's trust context at the configured URL;
 * - `did:hub:<address>` DIDs (the DID document) and their verification-method URLs
 *   (`did:hub:<address>#<key-id>`: the method, with the document's `@context`, as the signature
 *   suites expect), resolved through a `did-resolver` {@link Resolvable}, by default one with the
 *   SDK's `did:hub` driver (`getResolver`, `GET /1.0/identifiers/{did}` on the service).
 * Every other URL (remote contexts, other DID methods) is refused with a
 * {@link DocumentLoaderError} and never fetched, so a credential that needs one does not verify.
 *
 * @example
 * import * as vc from '@digitalbazaar/vc';
 * import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
 * const documentLoader = createDocumentLoader({ trustContextUrl: trustContextUrl('https://parley.example.com') });
 * const { verified } = await vc.verifyCredential({ credential, suite: new Ed25519Signature2020(), documentLoader });
 */
import { Resolver, type DIDDocument, type Resolvable } from 'did-resolver';
import { getResolver } from '../did/resolver.js';
import { CodedError } from '../errors.js';
import { STANDARD_CONTEXTS, TRUST_CONTEXT_PATH, trustContext } from './contexts.js';

/** What a JSON-LD document loader answers for a URL (the jsonld.js `RemoteDocument` shape). */
export interface RemoteDocument {
  contextUrl: string | null;
  documentUrl: string;
  document: unknown;
}

/** A JSON-LD document loader: the document of a URL or DID URL, or a rejection. */
export type DocumentLoader = (url: string) => Promise<RemoteDocument>;

/** Why a URL was not loaded: `refused` (not bundled, not `did:hub`), `not_found` (the DID or key is unknown). */
export type DocumentLoaderErrorCode = 'refused' | 'not_found';

/** Thrown (as the rejection) by the loader for a URL it does not serve. */
export class DocumentLoaderError extends CodedError<DocumentLoaderErrorCode> {
  override readonly name = 'DocumentLoaderError';
}

/** Options of {@link createDocumentLoader}. */
export interface DocumentLoaderOptions {
  /**
   * URL of the service trust context as the credentials name it: `trustContextUrl(PUBLIC_URL)`,
   * i.e. `<PUBLIC_URL>/contexts/trust/v1`.
   */
  trustContextUrl: string;
  /**
   * Resolves `did:hub` DIDs. Default: `new Resolver(getResolver({baseUrl}))` with `baseUrl` the
   * trust context URL without `/contexts/trust/v1` (the service's `PUBLIC_URL`); pass one when
   * the service is reached at another address, or to send an API key.
   * @throws TypeError (from createDocumentLoader) when omitted and the trust context URL does
   *   not end with `/contexts/trust/v1`.
   */
  resolver?: Resolvable;
}

/** design §8.13 hub address in its stored lowercase form (DIDs compare case-sensitively), then an optional fragment. */
const HUB_DID_URL = /^(did:hub:[a-z0-9][a-z0-9-]{1,30}[a-z0-9])(?:#(.+))?$/;

function defaultResolver(url: string): Resolvable {
  if (!url.endsWith(TRUST_CONTEXT_PATH)) {
    throw new TypeError(`createDocumentLoader: trustContextUrl ${url} does not end with ${TRUST_CONTEXT_PATH}; pass a resolver`);
  }
  return new Resolver(getResolver({ baseUrl: url.slice(0, -TRUST_CONTEXT_PATH.length) }));
}

/**
 * A document loader for one verification or signing run (see the module comment). DID
 * documents are cached for the life of the loader (one verification loads the same DID several
 * times), so create one per run to see key changes.
 * @throws TypeError when no resolver is given and none can be derived from `trustContextUrl`.
 */
export function createDocumentLoader(opts: DocumentLoaderOptions): DocumentLoader {
  const resolver = opts.resolver ?? defaultResolver(opts.trustContextUrl);
  const statics = new Map<string, object>([...STANDARD_CONTEXTS, [opts.trustContextUrl, trustContext(opts.trustContextUrl)]]);
  const dids = new Map<string, Promise<DIDDocument>>();
  const answer = (url: string, document: unknown): RemoteDocument => ({ contextUrl: null, documentUrl: url, document });

  const resolve = async (did: string): Promise<DIDDocument> => {
    const res = await resolver.resolve(did);
    const doc = res.didDocument;
    if (res.didResolutionMetadata.error || !doc) {
      const why = res.didResolutionMetadata.error ?? 'no document';
      throw new DocumentLoaderError('not_found', `${did} did not resolve (${why}${res.didResolutionMetadata.message ? `: ${res.didResolutionMetadata.message}` : ''})`);
    }
    if (doc.id !== did) throw new DocumentLoaderError('not_found', `resolving ${did} answered the document of ${doc.id}`);
    return doc;
  };
  const didDocument = (did: string): Promise<DIDDocument> => {
    let doc = dids.get(did);
    if (!doc) {
      doc = resolve(did);
      dids.set(did, doc);
    }
    return doc;
  };

  return async (url: string) => {
    const bundled = statics.get(url);
    if (bundled) return answer(url, bundled);
    const m = HUB_DID_URL.exec(url);
    if (!m) throw new DocumentLoaderError('refused', `refusing to load ${url}: only bundled contexts and did:hub DIDs are resolved (no remote fetch)`);
    const did = m[1]!;
    const doc = await didDocument(did);
    if (m[2] === undefined) return answer(url, doc);
    const method = (doc.verificationMethod ?? []).find((v) => v.id === url || `${did}${v.id}` === url);
    if (!method) throw new DocumentLoaderError('not_found', `${url} is not a verification method of ${did}`);
    return answer(url, { '@context': doc['@context'], ...method, id: url });
  };
}
