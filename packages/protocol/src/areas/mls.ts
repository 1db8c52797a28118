/**
 * MLS KeyPackage directory (SPEC §1.3; RFC 9420 §10): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const mlsRoutes = {};
