/**
 * Tenants and invites (SPEC §2.2, §3.2, §4.2): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const tenantsRoutes = {};
