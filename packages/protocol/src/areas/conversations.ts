/**
 * Conversations, messages and topics (SPEC §2.4, §4.5, §6.1): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const conversationsRoutes = {};
