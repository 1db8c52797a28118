/**
 * Federation agreements (SPEC §2.12, §4.13): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const federationRoutes = {};
