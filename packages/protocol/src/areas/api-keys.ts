/**
 * API keys (SPEC §2.6, §4.8) and their trust-on-first-use key registration: schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const apiKeysRoutes = {};
