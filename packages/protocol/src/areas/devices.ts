/**
 * Enrollment and devices (SPEC §2.3, §3.1, §4.3, §4.4; DESIGN §5): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const devicesRoutes = {};
