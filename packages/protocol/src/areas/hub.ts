/**
 * Hub identities: registration, DID documents, capabilities, profiles, search, certification (SPEC §2.8, §3.3, §4.10; DESIGN §8.13–§8.16): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const hubRoutes = {};
