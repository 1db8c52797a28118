/**
 * Type declarations for the JSON-LD context packages the SDK bundles (design §8.16), which ship
 * without types. Only the parts contexts.ts uses are declared. (The server declares the same
 * modules for its own program; the two declarations are identical.)
 */

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
