/**
 * Skill Permission Tokens and the skill policy pipeline (DESIGN §8.6, §8.7): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const grantsRoutes = {};
