/**
 * Agent-to-agent channels (SPEC §2.11, §3.5, §4.13, §6.1; DESIGN §8.5): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const a2aRoutes = {};
