/**
 * Signed A2A Agent Cards anchored in `did:hub`: build a hub identity's card, sign it with the
 * identity's key, and verify anyone's card against its DID document.
 */
export * from './build.js';
export * from './sign.js';
export * from './verify.js';
