/**
 * Rooms (SPEC §2.5, §4.6, §6.1; DESIGN §8.5): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const roomsRoutes = {};
