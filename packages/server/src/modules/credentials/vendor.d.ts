/**
 * Type declarations for the Linked Data libraries of design §8.16, which ship without types.
 * Only the parts this module uses are declared; ld.ts is the single place that calls them.
 */

/** `(url) => {contextUrl, documentUrl, document}`, or a rejection when the URL cannot be loaded. */
type LdDocumentLoader = (url: string) => Promise<{ contextUrl: string | null; documentUrl: string; document: unknown }>;

/** What jsonld-signatures and @digitalbazaar/vc answer for a verification. */
interface LdVerifyResult {
  verified: boolean;
  error?: unknown;
  results?: unknown[];
}

declare module '@digitalbazaar/vc' {
  export function issue(options: {
    credential: Record<string, unknown>;
    suite: unknown;
    documentLoader: LdDocumentLoader;
    now?: string | Date;
  }): Promise<Record<string, unknown>>;
  export function verifyCredential(options: {
    credential: Record<string, unknown>;
    suite: unknown;
    documentLoader: LdDocumentLoader;
    now?: string | Date;
    checkStatus?: () => Promise<{ verified: boolean }>;
  }): Promise<LdVerifyResult>;
}

declare module '@digitalbazaar/ed25519-signature-2020' {
  export class Ed25519Signature2020 {
    constructor(options?: { key?: unknown; date?: string | Date });
  }
}

declare module '@digitalbazaar/ed25519-verification-key-2020' {
  export class Ed25519VerificationKey2020 {
    id?: string;
    controller?: string;
    publicKeyMultibase: string;
    privateKeyMultibase?: string;
    static generate(options?: { seed?: Uint8Array; id?: string; controller?: string }): Promise<Ed25519VerificationKey2020>;
    static from(options: { id?: string; controller?: string; publicKeyMultibase: string; privateKeyMultibase?: string; type?: string }): Promise<Ed25519VerificationKey2020>;
  }
}

declare module '@digitalbazaar/credentials-context' {
  /** Context URL -> context document (credentials v1, v2 and the v2 undefined-terms context). */
  export const contexts: Map<string, object>;
}

declare module 'did-context' {
  const didContext: { contexts: Map<string, object>; CONTEXT_URL: string };
  export default didContext;
}

declare module 'ed25519-signature-2020-context' {
  const ed25519Context: { contexts: Map<string, object>; CONTEXT_URL: string };
  export default ed25519Context;
}

declare module 'jsonld-signatures' {
  const jsigs: {
    verify(document: Record<string, unknown>, options: { suite: unknown; purpose: unknown; documentLoader: LdDocumentLoader }): Promise<LdVerifyResult>;
    purposes: { AssertionProofPurpose: new () => unknown };
  };
  export default jsigs;
}
