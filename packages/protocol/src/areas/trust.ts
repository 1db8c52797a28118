/**
 * Trust scores (SPEC §2.9, §3.3, §3.9, §4.12; DESIGN §8.14): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const trustRoutes = {};
