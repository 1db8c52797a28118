/**
 * Policies and held messages (SPEC §2.7, §3.8, §4.9; DESIGN §8.3, §8.5): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const policiesRoutes = {};
