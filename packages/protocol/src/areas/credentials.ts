/**
 * Verification and verifiable credentials (SPEC §2.10, §4.11; DESIGN §8.16): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const credentialsRoutes = {};
