/**
 * Shadow sessions (SPEC §2.14, §3.4, §4.17; DESIGN §8.8, §8.20): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const shadowRoutes = {};
