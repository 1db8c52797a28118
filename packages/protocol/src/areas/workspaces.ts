/**
 * Workspaces, team rooms and connections (SPEC §2.5, §4.10, §4.13): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const workspacesRoutes = {};
