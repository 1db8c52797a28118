/**
 * Platform (SPEC §4.1, §9): health, JWKS, legal terms, billing plans, capabilities: schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const platformRoutes = {};
