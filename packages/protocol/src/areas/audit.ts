/**
 * Audit log (SPEC §4.14; DESIGN §8.10, §8.22): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const auditRoutes = {};
